"""Model vectors keyed by passage text: each distinct text embedded once, saved and reloaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memdir.recall.embed import HashingEmbedder
from memdir.recall.model_vectors import HASH_DTYPE, ModelVectors, passage_hash


def test_a_text_repeated_in_one_call_and_across_calls_is_embedded_once(tmp_path: Path) -> None:
    model = HashingEmbedder()
    vectors = ModelVectors(model, tmp_path / "m.npz")
    texts = ["adding a dependency", "adding a dependency", "deploying"]
    out = vectors.embed([passage_hash(t) for t in texts], texts)
    assert model.embedded == 2
    assert np.array_equal(out[0], out[1])
    vectors.embed([passage_hash("deploying")], ["deploying"])
    assert model.embedded == 2


def test_saved_vectors_of_live_passages_reload(tmp_path: Path) -> None:
    vectors = ModelVectors(HashingEmbedder(), tmp_path / "m.npz")
    texts = ["kept", "dropped"]
    vectors.embed([passage_hash(t) for t in texts], texts)
    vectors.save(np.array([passage_hash("kept")], dtype=HASH_DTYPE))
    again = ModelVectors(HashingEmbedder(), tmp_path / "m.npz")
    assert again.load() is None
    found, _ = again.lookup(np.array([passage_hash(t) for t in texts], dtype=HASH_DTYPE))
    assert found.tolist() == [True, False]


def test_a_damaged_file_is_a_problem_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "m.npz").write_bytes(b"not an npz")
    vectors = ModelVectors(HashingEmbedder(), tmp_path / "m.npz")
    problem = vectors.load()
    assert problem is not None and "re-embedding" in problem
    assert len(vectors) == 0
