"""The derived search index: incremental refresh, persistence, and recovery from a bad cache."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from memdir.frontmatter import dump
from memdir.recall.embed import HashingEmbedder
from memdir.recall.search_index import SearchIndex, read_memory_text

MEMORIES = {
    "deploy.md": ("Deploying", "How to deploy to staging", "Run make deploy-staging."),
    "style.md": ("Code style", "User prefers tabs", "Indent with tabs, never spaces."),
    "team/oncall.md": ("On-call", "Pager rotation", "Alice has the pager this week."),
}


def write(root: Path, rel: str, name: str, description: str, body: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump({"name": name, "description": description, "type": "project"}, body))


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    memory, cache = tmp_path / "memory", tmp_path / "cache"
    for rel, parts in MEMORIES.items():
        write(memory, rel, *parts)
    (memory / "MEMORY.md").write_text("- [Deploying](deploy.md) — how to deploy\n")
    (memory / ".hidden.md").write_text("not a memory")
    return memory, cache


def make(dirs: tuple[Path, Path], embedder: HashingEmbedder | None = None) -> SearchIndex:
    return SearchIndex(dirs[0], dirs[1], embedder or HashingEmbedder())


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_first_refresh_indexes_every_memory_file_only(dirs: tuple[Path, Path]) -> None:
    index = make(dirs)
    report = index.refresh()
    assert sorted(report.added) == sorted(MEMORIES)
    assert report.embedded == 3
    assert [d.rel for d in index.docs] == sorted(MEMORIES)
    assert index.vectors.shape == (3, index.embedder.dim)
    assert index.docs[0].name == "Deploying"


def test_unchanged_directory_embeds_nothing(dirs: tuple[Path, Path]) -> None:
    embedder = HashingEmbedder()
    index = make(dirs, embedder)
    index.refresh()
    report = index.refresh()
    assert not report.modified
    assert embedder.embedded == 3


def test_changing_one_file_re_embeds_only_that_file(dirs: tuple[Path, Path]) -> None:
    embedder = HashingEmbedder()
    index = make(dirs, embedder)
    index.refresh()
    before = index.vectors.copy()
    old_row = index.row_of("style.md")
    write(dirs[0], "style.md", "Code style", "User prefers spaces now", "Indent with 4 spaces.")
    bump_mtime(dirs[0] / "style.md")
    report = index.refresh()
    assert report.changed == ["style.md"]
    assert report.embedded == 1
    assert embedder.embedded == 4
    row = index.row_of("style.md")
    assert row is not None and row != old_row and not index.live[old_row]
    assert not np.allclose(index.vectors[index.starts[row]], before[old_row])
    np.testing.assert_array_equal(index.vectors[index.row_of("deploy.md")], before[0])
    scores = index.lexical.scores("spaces")
    assert scores[row] > 0 and scores[old_row] == 0  # the replaced row is masked


def test_touching_a_file_without_changing_it_embeds_nothing(dirs: tuple[Path, Path]) -> None:
    embedder = HashingEmbedder()
    index = make(dirs, embedder)
    index.refresh()
    bump_mtime(dirs[0] / "deploy.md")
    report = index.refresh()
    assert (report.changed, report.embedded, embedder.embedded) == ([], 0, 3)
    # ...but the new mtime is recorded, so the next refresh does not read it again.
    assert not index.refresh().modified


def test_added_and_deleted_files(dirs: tuple[Path, Path]) -> None:
    index = make(dirs)
    index.refresh()
    write(dirs[0], "new.md", "Coffee", "User drinks espresso", "Double shot.")
    (dirs[0] / "team" / "oncall.md").unlink()
    report = index.refresh()
    assert (report.added, report.removed, report.embedded) == (["new.md"], ["team/oncall.md"], 1)
    assert index.row_of("team/oncall.md") is None
    assert sorted(d.rel for d in index.live_docs()) == ["deploy.md", "new.md", "style.md"]
    assert index.lexical.scores("pager").max() == 0  # the removed memory no longer matches


def test_a_new_process_reuses_the_saved_index(dirs: tuple[Path, Path]) -> None:
    make(dirs).refresh()
    embedder = HashingEmbedder()
    index = make(dirs, embedder)
    report = index.refresh()
    assert (report.modified, report.problems, embedder.embedded) == (False, [], 0)
    assert index.lexical.scores("pager")[index.row_of("team/oncall.md")] > 0


def test_deleted_cache_is_rebuilt(dirs: tuple[Path, Path]) -> None:
    make(dirs).refresh()
    for path in sorted(dirs[1].rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    embedder = HashingEmbedder()
    report = make(dirs, embedder).refresh()
    assert report.rebuilt and embedder.embedded == 3


@pytest.mark.parametrize("victim", ["manifest.json", "vectors-*.npy", "lexical-*.npz"])
@pytest.mark.parametrize("garbage", [b"", b"\x00garbage{", b'{"header": 1}'])
def test_corrupt_cache_is_reported_and_rebuilt(
    dirs: tuple[Path, Path], victim: str, garbage: bytes
) -> None:
    make(dirs).refresh()
    (target,) = list(dirs[1].rglob(victim))
    target.write_bytes(garbage)
    embedder = HashingEmbedder()
    index = make(dirs, embedder)
    report = index.refresh()
    assert report.rebuilt and report.problems
    assert embedder.embedded == 3
    assert len(index.docs) == 3
    # The rebuilt cache is whole again.
    assert not make(dirs, HashingEmbedder()).refresh().problems


def test_cache_lives_outside_the_memory_dir(dirs: tuple[Path, Path]) -> None:
    before = sorted(p.relative_to(dirs[0]) for p in dirs[0].rglob("*"))
    make(dirs).refresh()
    assert sorted(p.relative_to(dirs[0]) for p in dirs[0].rglob("*")) == before
    assert (dirs[1] / "search" / "hashing-256" / "manifest.json").exists()
    assert len(list((dirs[1] / "search" / "hashing-256").glob("vectors-*.npy"))) == 1


def test_bad_frontmatter_is_still_searchable_as_text(dirs: tuple[Path, Path]) -> None:
    (dirs[0] / "broken.md").write_text("---\nname: [unclosed\n---\nthe kafka broker notes\n")
    index = make(dirs)
    index.refresh()
    row = index.row_of("broken.md")
    assert row is not None and index.docs[row].name == "broken"
    assert index.lexical.scores("kafka broker")[row] > 0


def test_freshness_check_against_headers(dirs: tuple[Path, Path]) -> None:
    from memdir.scan import scan_headers

    index = make(dirs)
    index.refresh()
    assert index.is_fresh_for(scan_headers(dirs[0]).headers)
    bump_mtime(dirs[0] / "style.md")  # edited after indexing
    stale, rows = index.resolve(scan_headers(dirs[0]).headers)
    assert [h.filename for h in stale] == ["style.md"]
    assert sorted(rows.tolist()) == [0, 1, 2]
    write(dirs[0], "later.md", "Later", "A new memory", "body")
    assert not index.is_fresh_for(scan_headers(dirs[0]).headers)


def test_concurrent_refreshes_leave_a_loadable_cache(dirs: tuple[Path, Path]) -> None:
    import threading

    errors: list[BaseException] = []

    def refresh_many(index: SearchIndex, tag: str) -> None:
        try:
            for i in range(5):
                write(dirs[0], f"{tag}-{i}.md", f"note {tag} {i}", "a note", f"body {tag} {i}")
                index.refresh()
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=refresh_many, args=(make(dirs), tag)) for tag in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    report = make(dirs).refresh()
    assert report.problems == []
    cache = dirs[1] / "search" / "hashing-256"
    assert len(list(cache.glob("vectors-*.npy"))) == 1


def test_long_memories_are_embedded_in_passages(dirs: tuple[Path, Path]) -> None:
    from memdir.recall.embed import MiniLMEmbedder
    from memdir.recall.search_index import PASSAGE_WORDS

    filler = " ".join(["the team met and talked about the roadmap and hiring plans"] * 40)
    body = f"{filler}\nThe espresso machine on floor three is broken; use the kettle instead."
    write(dirs[0], "meeting.md", "Weekly meeting", "Notes from the weekly meeting", body)
    embedder = MiniLMEmbedder()
    index = SearchIndex(dirs[0], dirs[1], embedder)
    index.refresh()
    row = index.row_of("meeting.md")
    assert row is not None
    words = len(body.split())
    assert index.docs[row].passages == -(-words // PASSAGE_WORDS) > 1
    assert index.vectors.shape[0] == sum(d.passages for d in index.docs)
    query = embedder.embed(["is the coffee machine broken?"])[0]
    scores = index.semantic_scores(query)
    start = int(index.starts[row])
    passages = index.vectors[start : start + index.docs[row].passages] @ query
    assert scores[row] == pytest.approx(float(passages.max()))
    texts = read_memory_text(dirs[0] / "meeting.md", "meeting.md")[0].passages()
    assert "espresso machine" in texts[int(np.argmax(passages))]  # the passage holding the fact
    # A new process loads the same passage layout without embedding anything.
    again = SearchIndex(dirs[0], dirs[1], embedder)
    report = again.refresh()
    assert (report.modified, report.problems) == (False, [])
    np.testing.assert_allclose(again.semantic_scores(query), scores)


def test_changes_survive_into_a_new_process_without_re_embedding(dirs: tuple[Path, Path]) -> None:
    make(dirs).refresh()
    write(dirs[0], "style.md", "Code style", "User prefers spaces now", "Indent with 4 spaces.")
    bump_mtime(dirs[0] / "style.md")
    write(dirs[0], "new.md", "Coffee", "User drinks espresso", "Double shot.")
    (dirs[0] / "deploy.md").unlink()
    first = make(dirs)
    report = first.refresh()
    assert not report.compacted  # appended rows, saved as the overlay of the same base
    assert len(list((dirs[1] / "search" / "hashing-256").glob("overlay-*.npz"))) == 1
    embedder = HashingEmbedder()
    again = make(dirs, embedder)
    report = again.refresh()
    assert (report.modified, report.problems, embedder.embedded) == (False, [], 0)
    assert sorted(d.rel for d in again.live_docs()) == ["new.md", "style.md", "team/oncall.md"]
    for query in ("espresso", "spaces", "pager", "staging"):
        assert _by_rel(again, again.lexical.scores(query)) == _by_rel(
            first, first.lexical.scores(query)
        )
    np.testing.assert_allclose(
        again.semantic_scores(embedder.embed(["spaces"])[0])[again.row_of("style.md")],
        first.semantic_scores(embedder.embed(["spaces"])[0])[first.row_of("style.md")],
    )


def _by_rel(index: SearchIndex, scores: np.ndarray) -> dict[str, float]:
    return {d.rel: round(float(scores[index.row_of(d.rel)]), 5) for d in index.live_docs()}


def test_overlay_scores_match_a_full_rebuild_ranking(tmp_path: Path) -> None:
    memory, cache = tmp_path / "m", tmp_path / "c"
    topics = ["kafka broker", "postgres vacuum", "react hooks", "merge freeze", "oncall pager"]
    for i in range(40):
        write(memory, f"n{i:02d}.md", f"note {i}", f"about {topics[i % 5]}", f"details {i}")
    live = SearchIndex(memory, cache, HashingEmbedder())
    live.refresh()
    for i in range(0, 40, 4):  # a tenth of the memories change after the base was built
        write(memory, f"n{i:02d}.md", f"note {i}", f"now about {topics[(i + 1) % 5]}", "changed")
        bump_mtime(memory / f"n{i:02d}.md")
    assert not live.refresh().compacted
    fresh = SearchIndex(memory, tmp_path / "fresh", HashingEmbedder())
    fresh.refresh()
    for query in topics:
        a, b = (
            _by_rel(live, live.lexical.scores(query)),
            _by_rel(fresh, fresh.lexical.scores(query)),
        )
        assert {r for r in a if a[r] > 0} == {r for r in b if b[r] > 0}
        assert all(a[r] == pytest.approx(b[r], rel=0.25) for r in a)  # statistics drift a little


def test_a_large_overlay_is_compacted_into_a_new_base(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.recall import live_lexical

    monkeypatch.setattr(live_lexical, "COMPACT_MIN_ROWS", 1)
    index = make(dirs)
    index.refresh()
    for i in range(3):
        write(dirs[0], f"extra{i}.md", f"Extra {i}", "more notes", f"body {i}")
    report = index.refresh()
    assert report.compacted
    assert [d.rel for d in index.docs] == sorted([*MEMORIES, "extra0.md", "extra1.md", "extra2.md"])
    assert index.live.all()
    cache = dirs[1] / "search" / "hashing-256"
    assert list(cache.glob("overlay-*.npz")) == [] and len(list(cache.glob("vectors-*"))) == 1
    assert not make(dirs).refresh().modified


def test_progress_is_reported_while_embedding(dirs: tuple[Path, Path]) -> None:
    index = make(dirs)
    seen: list[tuple[int, int]] = []
    index.progress = lambda done, total: seen.append((done, total))
    index.refresh()
    assert seen and seen[-1] == (3, 3)


def test_what_recall_reads_of_one_memory_is_bounded(dirs: tuple[Path, Path]) -> None:
    """Issue #18.9: one 50 MB memory kept `reindex` busy for minutes at 780 MB; recall indexes a
    bounded prefix of each file (the rest is still on disk, `doctor` names the file)."""
    from memdir.recall.memory_text import RECALL_READ_BYTES
    from memdir.recall.search_index import PASSAGE_WORDS

    words = "kettle " + "roadmap hiring budget " * 400_000 + "zebrafish"  # ≈ 8.8 MB of words
    write(dirs[0], "huge.md", "Huge", "a very long memory", words)
    write(dirs[0], "line.md", "Line", "one long line", "start " + "y" * 5_000_000 + " zebrafish")
    size = (dirs[0] / "huge.md").stat().st_size
    text, _sha, read_size = read_memory_text(dirs[0] / "huge.md", "huge.md")
    assert read_size == size > RECALL_READ_BYTES  # the real size, for change detection
    assert len(text.body.encode()) <= RECALL_READ_BYTES
    assert "kettle" in text.for_lexical() and "zebrafish" not in text.for_lexical()
    index = make(dirs)
    report = index.refresh()
    assert sorted(report.added) == sorted([*MEMORIES, "huge.md", "line.md"])
    row = index.row_of("huge.md")
    assert row is not None and index.docs[row].size == size
    assert index.docs[row].passages * PASSAGE_WORDS <= RECALL_READ_BYTES
    assert index.refresh().embedded == 0  # unchanged: nothing is read or embedded again


def test_positions_are_each_rows_passages_in_the_order_asked(tmp_path: Path) -> None:
    memory, cache = tmp_path / "memory", tmp_path / "cache"
    long_body = "\n\n".join(
        f"Paragraph {n}: " + "the deploy runbook says more " * 40 for n in range(6)
    )
    for n in range(7):
        body = long_body if n % 3 == 0 else f"Short note {n}."
        write(memory, f"m{n}.md", f"Memory {n}", f"when {n} matters", body)
    index = SearchIndex(memory, cache, HashingEmbedder())
    index.refresh()
    passages = [d.passages for d in index.docs]
    assert max(passages) > 1 and min(passages) == 1  # both shapes are there
    for rows in ([], [0], [6, 0, 3], list(range(7)), [3, 3]):
        want = [p for r in rows for p in range(index.starts[r], index.starts[r] + passages[r])]
        assert index.positions(rows).tolist() == want
        assert index.positions(rows).dtype == np.int64
