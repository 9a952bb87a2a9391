"""The selector over a two-stage index: it answers from what is ready and says so."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from memdir.frontmatter import dump
from memdir.recall.embed import HashingEmbedder
from memdir.recall.local import LocalSelector
from memdir.recall.relevance import KeepAll
from memdir.recall.static_embed import InstantFast

MEMORIES = {
    "deploy.md": ("Deploying to staging", "Run make deploy-staging once CI is green."),
    "pnpm.md": ("Use pnpm", "Install packages with pnpm, never npm."),
    "tabs.md": ("Tabs in Go", "Always format Go with gofmt; keep tabs."),
}


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    for rel, (name, body) in MEMORIES.items():
        (root / rel).write_text(dump({"name": name, "description": name, "type": "project"}, body))
    return root


def selector(memory: Path, cache: Path, model: HashingEmbedder, **kwargs: Any) -> LocalSelector:
    fast = InstantFast(HashingEmbedder())
    return LocalSelector(memory, cache, embedder=model, fast=fast, relevance=KeepAll(), **kwargs)


def test_a_partial_index_answers_and_says_so(memory: Path, tmp_path: Path) -> None:
    model = HashingEmbedder()
    sel = selector(memory, tmp_path / "cache", model, query_fill_seconds=0.0)
    picks = sel.select_sync("how do I deploy to staging", None)
    assert picks and picks[0].filename == "deploy.md"
    assert model.embedded == 1  # the query alone: no memory read by the model
    [first, *_] = sel.explain("how do I deploy to staging")
    assert first.semantic_by == "fast stage"
    status = sel.status()
    assert (status.memories, status.by_model, status.complete) == (3, 0, False)
    assert "0 of 3" in status.note()


def test_a_query_has_the_model_read_its_best_candidates(memory: Path, tmp_path: Path) -> None:
    sel = selector(memory, tmp_path / "cache", HashingEmbedder())
    [first, *_] = sel.explain("how do I deploy to staging")
    assert first.semantic_by == "model"
    assert sel.status().complete  # three memories: all among the best 20


def test_complete_reads_every_memory(memory: Path, tmp_path: Path) -> None:
    sel = selector(memory, tmp_path / "cache", HashingEmbedder(), query_fill_seconds=0.0)
    sel.refresh()
    assert sel.complete() == 3
    assert sel.status().complete


def test_files_left_at_the_deadline_are_read_in_the_background(
    memory: Path, tmp_path: Path
) -> None:
    sel = selector(memory, tmp_path / "cache", HashingEmbedder(), background=True)
    report = sel.refresh(deadline=time.monotonic() - 1)  # nothing read in the caller's time
    assert report.backlog == 3
    assert sel.filler is not None
    assert sel.filler.wait(10)
    status = sel.status()
    assert (status.memories, status.unread, status.complete) == (3, 0, True)


def test_a_one_shot_selector_reads_everything_despite_a_deadline(
    memory: Path, tmp_path: Path
) -> None:
    sel = selector(memory, tmp_path / "cache", HashingEmbedder())
    assert sel.refresh(deadline=time.monotonic() - 1).backlog == 0  # nobody would finish it
