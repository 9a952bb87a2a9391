"""The index on disk: what `memdir status` reads of it without loading a model."""

from __future__ import annotations

from pathlib import Path

from memdir.frontmatter import dump
from memdir.recall.embed import HashingEmbedder
from memdir.recall.index_files import read_status
from memdir.recall.search_index import SearchIndex
from memdir.recall.static_embed import InstantFast


def test_status_counts_the_passages_the_model_has_read(tmp_path: Path) -> None:
    memory, cache = tmp_path / "memory", tmp_path / "cache"
    memory.mkdir()
    for i in range(3):
        (memory / f"m{i}.md").write_text(dump({"name": f"memory {i}"}, f"body {i}"))
    index = SearchIndex(memory, cache, HashingEmbedder(), fast=InstantFast(HashingEmbedder()))
    index.refresh()
    [status] = read_status(cache).values()
    assert status == {"memories": 3, "passages": 3, "embedded": 0}
    row = index.row_of("m0.md")
    assert row is not None
    index.fill([row])
    index.save_model_vectors()
    [status] = read_status(cache).values()
    assert status["embedded"] == 1


def test_a_one_stage_index_is_all_read_and_a_damaged_one_is_reported(tmp_path: Path) -> None:
    memory, cache = tmp_path / "memory", tmp_path / "cache"
    memory.mkdir()
    (memory / "m.md").write_text(dump({"name": "memory"}, "body"))
    SearchIndex(memory, cache, HashingEmbedder()).refresh()
    [status] = read_status(cache).values()
    assert status["embedded"] == status["passages"] == 1
    next(cache.glob("search/*/manifest.json")).write_text("{")
    [status] = read_status(cache).values()
    assert "problem" in status
    assert read_status(tmp_path / "nothing") == {}
