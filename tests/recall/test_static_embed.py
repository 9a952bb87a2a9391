"""The fast stage: mean token vectors from a table distilled once, never awaited by a query."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memdir.recall.embed import HashingEmbedder, MiniLMEmbedder
from memdir.recall.static_embed import InstantFast, StaticEmbedder, embed_ids, fast_stage_for


def test_a_text_is_the_normalised_mean_of_its_tokens_without_special_ones() -> None:
    table = np.zeros((200, 4), dtype=np.float32)
    table[110] = [1, 0, 0, 0]
    table[120] = [0, 1, 0, 0]
    table[101] = table[102] = [0, 0, 0, 9]  # [CLS], [SEP]: never counted
    out = embed_ids(table, [[101, 110, 120, 102, 0, 0], [101, 102]])
    assert out[0] == pytest.approx(np.array([1, 1, 0, 0]) / np.sqrt(2))
    assert not out[1].any()  # no tokens: the zero vector


@pytest.fixture
def nothing_distilled(monkeypatch: pytest.MonkeyPatch) -> None:
    """No table distilled earlier in this process (another test's index may have made one)."""
    import memdir.recall.static_embed as static_embed

    monkeypatch.setattr(static_embed, "_DISTILLED", {})


@pytest.mark.usefixtures("nothing_distilled")
def test_a_table_on_disk_makes_it_ready_without_distilling(tmp_path: Path) -> None:
    model = MiniLMEmbedder()  # nothing loads until used
    fast = StaticEmbedder(model, tmp_path)
    assert not fast.ready()
    np.save(fast.path, np.ones((30522, model.dim), dtype=np.float32))
    assert fast.ready()
    assert fast.name == "static-all-MiniLM-L6-v2-int8"


@pytest.mark.usefixtures("nothing_distilled")
def test_a_table_of_the_wrong_shape_is_not_used(tmp_path: Path) -> None:
    fast = StaticEmbedder(MiniLMEmbedder(), tmp_path / "other")
    fast.path.parent.mkdir()
    np.save(fast.path, np.ones((10, 3), dtype=np.float32))
    assert not fast.ready()


def test_only_minilm_gets_a_fast_stage(tmp_path: Path) -> None:
    assert isinstance(fast_stage_for(MiniLMEmbedder(), tmp_path), StaticEmbedder)
    assert fast_stage_for(HashingEmbedder(), tmp_path) is None


def test_the_instant_fake_is_always_ready() -> None:
    fast = InstantFast(HashingEmbedder(32))
    assert fast.ready() and fast.dim == 32
    assert fast.embed(["a b"]).shape == (1, 32)
