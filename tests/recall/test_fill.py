"""The background fill: the model reads what the fast stage indexed, and says how far it got."""

from __future__ import annotations

import threading
from pathlib import Path

from memdir.frontmatter import dump
from memdir.recall.embed import HashingEmbedder
from memdir.recall.fill import BackgroundFill, IndexStatus
from memdir.recall.search_index import SearchIndex
from memdir.recall.static_embed import InstantFast


def test_a_background_fill_reads_everything_and_saves_it(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    for i in range(10):
        (memory / f"m{i}.md").write_text(dump({"name": f"memory {i}"}, f"body number {i}"))
    index = SearchIndex(
        memory, tmp_path / "cache", HashingEmbedder(), fast=InstantFast(HashingEmbedder())
    )
    index.refresh()
    lock = threading.RLock()
    fill = BackgroundFill(index, lambda: lock)
    fill.hold()  # a query in flight: the fill waits for it
    fill.start()
    assert index.pending() == 10
    fill.release()
    assert fill.wait(10)
    assert index.pending() == 0
    assert index.model_vectors.path.exists()


def test_the_status_note_says_what_is_left() -> None:
    partial = IndexStatus(241, 20, 300, "static-x", True, True, unread=5)
    assert not partial.complete
    note = partial.note()
    assert "20 of 241" in note and "fast stage" in note and "in the background" in note
    assert "5 changed files" in note
    done = IndexStatus(241, 241, 0, "static-x", True, False)
    assert done.complete and "all 241" in done.note()
