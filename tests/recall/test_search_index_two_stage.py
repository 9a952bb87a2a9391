"""The two-stage index: searchable from the fast stage, the model's vectors filled later, once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memdir.frontmatter import dump
from memdir.recall.embed import HashingEmbedder
from memdir.recall.memory_text import MAX_PASSAGES, RECALL_READ_BYTES
from memdir.recall.model_stage import QUERY_BATCH
from memdir.recall.search_index import SearchIndex
from memdir.recall.static_embed import InstantFast

SITUATION = "Applies when adding, installing or upgrading a dependency, package or library."


def write(root: Path, rel: str, name: str, body: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump({"name": name, "description": name, "type": "feedback"}, body))


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "pnpm.md", "Use pnpm", "Install packages with pnpm, never npm.")
    write(root, "tabs.md", "Tabs", "Indent with tabs in every Go file.")
    write(root, "deploy.md", "Deploy", "Deploy staging with make deploy-staging on Fridays.")
    return root


def two_stage(memory: Path, cache: Path, model: HashingEmbedder) -> SearchIndex:
    return SearchIndex(memory, cache, model, fast=InstantFast(HashingEmbedder()))


def test_refresh_leaves_the_model_work_pending_and_ranks_by_the_fast_stage(
    memory: Path, tmp_path: Path
) -> None:
    model = HashingEmbedder()
    index = two_stage(memory, tmp_path / "cache", model)
    report = index.refresh()
    assert sorted(report.added) == ["deploy.md", "pnpm.md", "tabs.md"]
    assert model.embedded == 0  # searchable without one model pass
    assert report.pending == index.pending() == 3
    rows = index.live_rows()
    assert not index.by_model(rows).any()
    scores = index.semantic_scores(*index.query_vectors("install packages with pnpm"))
    assert scores.shape == (3,)
    assert float(scores.max()) <= 0.39  # fast-stage scores never pass "meaning alone"


def test_fill_embeds_only_the_rows_asked_for_then_everything(memory: Path, tmp_path: Path) -> None:
    model = HashingEmbedder()
    index = two_stage(memory, tmp_path / "cache", model)
    index.refresh()
    row = index.row_of("pnpm.md")
    assert row is not None
    assert index.fill([row]) == 1
    assert model.embedded == 1
    assert index.by_model(np.array([row])).all()
    assert index.pending() == 2
    assert index.fill() == 2
    assert index.pending() == 0
    query = index.query_vectors("install packages with pnpm")
    expected = model.embed(["Use pnpm. Use pnpm\nInstall packages with pnpm, never npm."])[0]
    assert index.semantic_scores(*query)[row] == pytest.approx(float(expected @ query[0]))


def test_a_fill_past_its_deadline_reads_one_small_batch(memory: Path, tmp_path: Path) -> None:
    model = HashingEmbedder()
    index = two_stage(memory, tmp_path / "cache", model)
    index.refresh()
    assert index.fill(deadline=0.0) == QUERY_BATCH == 2  # a query's two best, whatever it cost
    assert model.embedded == 2


def test_identical_passages_are_embedded_once(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    for i in range(5):  # the same note copied into five memories
        write(root, f"copy{i}.md", "Use pnpm", SITUATION)
    write(root, "other.md", "Tabs", "Indent with tabs.")
    model = HashingEmbedder()
    index = two_stage(root, tmp_path / "cache", model)
    index.refresh()
    index.fill()
    assert model.embedded == 2
    assert index.pending() == 0
    vectors = index.passages.model
    copies = [int(index.starts[index.row_of(f"copy{i}.md") or 0]) for i in range(5)]
    assert all(np.array_equal(vectors[copies[0]], vectors[c]) for c in copies)


def test_identical_passages_are_embedded_once_without_a_fast_stage(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    for i in range(4):
        write(root, f"copy{i}.md", "Use pnpm", SITUATION)
    model = HashingEmbedder()
    SearchIndex(root, tmp_path / "cache", model).refresh()
    assert model.embedded == 1


def test_a_64_kib_memory_is_capped_to_a_few_passages(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "huge.md", "Pasted log", " ".join(f"word{i}" for i in range(RECALL_READ_BYTES)))
    write(root, "short.md", "Tabs", "Indent with tabs.")
    model = HashingEmbedder()
    index = two_stage(root, tmp_path / "cache", model)
    index.refresh()
    huge = index.row_of("huge.md")
    assert huge is not None
    assert index.docs[huge].passages == MAX_PASSAGES
    index.fill()
    assert model.embedded == MAX_PASSAGES + 1


def test_model_vectors_survive_a_new_process(memory: Path, tmp_path: Path) -> None:
    first = two_stage(memory, tmp_path / "cache", HashingEmbedder())
    first.refresh()
    first.fill()
    assert first.save_model_vectors() == []
    model = HashingEmbedder()
    again = two_stage(memory, tmp_path / "cache", model)
    again.refresh()
    assert again.pending() == 0
    assert model.embedded == 0


def test_pending_passages_of_a_reloaded_index_are_read_again_from_their_files(
    memory: Path, tmp_path: Path
) -> None:
    two_stage(memory, tmp_path / "cache", HashingEmbedder()).refresh()  # saved, nothing filled
    model = HashingEmbedder()
    again = two_stage(memory, tmp_path / "cache", model)
    assert again.refresh().pending == 3
    assert again.fill() == 3
    assert model.embedded == 3


def test_a_changed_memory_waits_for_the_model_again(memory: Path, tmp_path: Path) -> None:
    index = two_stage(memory, tmp_path / "cache", HashingEmbedder())
    index.refresh()
    index.fill()
    write(memory, "tabs.md", "Tabs", "Indent with four spaces in Python files.")
    index.refresh()
    assert index.pending() == 1
    row = index.row_of("tabs.md")
    assert row is not None
    assert not index.by_model(np.array([row])).any()
