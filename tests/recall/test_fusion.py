"""Fusion maths: normalisation, weighted sums, reciprocal rank fusion."""

from __future__ import annotations

import numpy as np
import pytest

from memdir.recall.fusion import FusionConfig, minmax, ranks, rrf, weighted, zscore

f32 = np.float32


def arr(*values: float) -> np.ndarray:
    return np.array(values, dtype=f32)


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        (arr(2.0, 4.0, 6.0), arr(0.0, 0.5, 1.0)),
        (arr(3.0, 3.0), arr(0.0, 0.0)),
        (arr(), arr()),
    ],
)
def test_minmax(scores: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(minmax(scores), expected)


def test_zscore_has_zero_mean_unit_sd_and_handles_constants() -> None:
    out = zscore(arr(1.0, 2.0, 3.0, 10.0))
    assert abs(float(out.mean())) < 1e-6
    assert abs(float(out.std()) - 1.0) < 1e-5
    np.testing.assert_array_equal(zscore(arr(5.0, 5.0)), arr(0.0, 0.0))


def test_ranks_are_one_based_and_stable_on_ties() -> None:
    np.testing.assert_array_equal(ranks(arr(0.1, 0.9, 0.5, 0.9)), arr(4, 1, 3, 2))


def test_rrf_matches_the_formula() -> None:
    lexical, semantic = arr(3.0, 1.0, 2.0), arr(0.1, 0.9, 0.5)
    fused = rrf([lexical, semantic], [1.0, 1.0], k=60)
    expected = [1 / 61 + 1 / 63, 1 / 63 + 1 / 61, 1 / 62 + 1 / 62]
    np.testing.assert_allclose(fused, expected, rtol=1e-6)


def test_rrf_ignores_a_signal_with_no_information() -> None:
    fused = rrf([arr(0.0, 0.0, 0.0), arr(0.1, 0.9, 0.5)], [1.0, 1.0], k=60)
    np.testing.assert_allclose(fused, [1 / 63, 1 / 61, 1 / 62], rtol=1e-6)


def test_weighted_sum_of_minmax() -> None:
    fused = weighted([arr(0.0, 10.0), arr(1.0, 0.0)], [0.25, 0.75], "minmax")
    np.testing.assert_allclose(fused, [0.75, 0.25])


@pytest.mark.parametrize(
    "config", [FusionConfig(), FusionConfig("rrf"), FusionConfig(normalise="minmax")]
)
def test_a_query_with_no_lexical_match_is_ranked_by_meaning(config: FusionConfig) -> None:
    fused = config.fuse(arr(0.0, 0.0, 0.0), arr(0.2, 0.8, 0.5))
    assert list(np.argsort(-fused)) == [1, 2, 0]


def test_agreeing_signals_beat_either_alone() -> None:
    fused = FusionConfig().fuse(arr(5.0, 5.0, 0.0, 0.0), arr(0.9, 0.1, 0.9, 0.1))
    assert int(np.argmax(fused)) == 0
