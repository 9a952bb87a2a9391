from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import pytest

from memdir.model import MemoryHeader
from memdir.recall.base import Selection
from memdir.recall.engine import MemoryRecall, should_recall
from memdir.recall.prefetch import RecallPrefetch
from memdir.recall.session import SESSION_BUDGET_BYTES, RecallSession
from memdir.store import MemoryStore


class RecordingSelector:
    """Picks the given names (if offered) and records what it was shown."""

    def __init__(self, picks: Sequence[str], delay: float = 0.0, fail: bool = False):
        self.picks = list(picks)
        self.delay = delay
        self.fail = fail
        self.seen: list[list[str]] = []

    async def select(
        self,
        query: str,
        headers: Sequence[MemoryHeader],
        *,
        recent_tools: Sequence[str] = (),
        limit: int = 5,
    ) -> list[Selection]:
        self.seen.append([h.filename for h in headers])
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("selector exploded")
        offered = {h.filename for h in headers}
        return [Selection(p) for p in self.picks if p in offered][:limit]


class ReverseRanker:
    """Ranks oldest first: proves the manifest is filled by the ranker, not by recency."""

    def rank(
        self, query: str, k: int = 200, *, headers: Sequence[MemoryHeader] | None = None
    ) -> list[MemoryHeader]:
        assert headers is not None
        return sorted(headers, key=lambda h: h.mtime)[:k]


@pytest.fixture
def memdir_with(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "mem")
    for i in range(8):
        store.create(f"m{i}", f"memory number {i}", "project", f"body {i}\n")
        os.utime(store.root / f"m{i}.md", (1_000_000 + i, 1_000_000 + i))
    return store


@pytest.mark.parametrize(
    ("query", "ok"),
    [
        ("yes", False),
        ("  continue  ", False),
        ("", False),
        ("fix the build", True),
        ("好的", False),
        ("集成测试可以用模拟数据库吗？", True),
    ],
)
def test_single_word_prompts_are_skipped(query: str, ok: bool) -> None:
    assert should_recall(query) is ok


async def test_find_returns_at_most_five_in_selector_order(memdir_with: MemoryStore) -> None:
    sel = RecordingSelector(["m3.md", "m1.md", "m7.md", "m0.md", "m2.md", "m4.md", "nope.md"])
    found = await MemoryRecall(memdir_with.root, sel).find("which memory now", limit=9)
    assert [m.filename for m in found] == ["m3.md", "m1.md", "m7.md", "m0.md", "m2.md"]
    assert found[0].path == memdir_with.root / "m3.md"


async def test_already_surfaced_are_never_offered_again(memdir_with: MemoryStore) -> None:
    sel = RecordingSelector(["m1.md", "m2.md"])
    recall = MemoryRecall(memdir_with.root, sel)
    session = RecallSession()
    first = await recall.recall("tell me things", session)
    assert [a.filename for a in first] == ["m1.md", "m2.md"]
    second = await recall.recall("tell me more things", session)
    assert second == []
    assert "m1.md" not in sel.seen[-1] and "m2.md" not in sel.seen[-1]


async def test_memories_the_agent_read_are_not_surfaced(memdir_with: MemoryStore) -> None:
    sel = RecordingSelector(["m1.md"])
    session = RecallSession()
    session.mark_read([memdir_with.root / "m1.md"])
    assert await MemoryRecall(memdir_with.root, sel).recall("what about m1", session) == []


async def test_manifest_cap_is_filled_by_the_ranker(memdir_with: MemoryStore) -> None:
    sel = RecordingSelector([])
    await MemoryRecall(memdir_with.root, sel, manifest_cap=3).find("anything at all")
    assert sel.seen[-1] == ["m7.md", "m6.md", "m5.md"]  # no ranker: newest, like the reference
    await MemoryRecall(memdir_with.root, sel, ranker=ReverseRanker(), manifest_cap=3).find(
        "anything at all"
    )
    assert sel.seen[-1] == ["m0.md", "m1.md", "m2.md"]


async def test_selector_failure_yields_nothing(memdir_with: MemoryStore) -> None:
    recall = MemoryRecall(memdir_with.root, RecordingSelector(["m1.md"], fail=True))
    assert await recall.find("this will fail") == []


async def test_session_budget_stops_surfacing(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    names = []
    for i in range(30):
        # distinct memories (identical copies would surface once: recall.fold)
        store.create(f"big{i}", f"big number {i}", "project", ("x" * 99 + "\n") * 40)
        names.append(f"big{i}.md")
    session = RecallSession()
    recall = MemoryRecall(store.root, RecordingSelector(names))
    total = 0
    for turn in range(10):
        total += len(await recall.recall(f"turn {turn} please", session))
    assert session.used_bytes >= SESSION_BUDGET_BYTES
    assert session.used_bytes < SESSION_BUDGET_BYTES + 5 * 4_500
    assert total < 30
    session.reset_budget()
    assert len(await recall.recall("after compaction", session)) > 0


async def test_prefetch_never_blocks_and_takes_when_ready(memdir_with: MemoryStore) -> None:
    slow = RecordingSelector(["m1.md"], delay=0.3)
    prefetch = RecallPrefetch(MemoryRecall(memdir_with.root, slow), RecallSession())
    loop = asyncio.get_running_loop()
    started = loop.time()
    prefetch.start("what is in m1")
    assert prefetch.take() is None  # not ready: the turn goes on without it
    assert loop.time() - started < 0.1
    prefetch.start("what is in m1 again")  # a new turn cancels the unfinished one
    await asyncio.sleep(0.5)
    taken = prefetch.take()
    assert taken is not None and [a.filename for a in taken] == ["m1.md"]
    assert prefetch.take() is None  # consumed once


async def test_prefetch_close_cancels_cleanly(memdir_with: MemoryStore) -> None:
    slow = RecordingSelector(["m1.md"], delay=5)
    session = RecallSession()
    prefetch = RecallPrefetch(MemoryRecall(memdir_with.root, slow), session)
    prefetch.start("a slow question")
    await asyncio.sleep(0.05)
    await prefetch.aclose()
    assert prefetch.take() is None
    assert session.surfaced == set()  # nothing marked surfaced by an abandoned recall


async def test_prefetch_with_a_slow_llm_selector_never_delays_the_turn(
    memdir_with: MemoryStore,
) -> None:
    from memdir.llm.base import Completion
    from memdir.llm.scripted import ScriptedProvider
    from memdir.recall.llm_select import LLMSelector

    provider = ScriptedProvider(
        [Completion.from_json({"selected_memories": ["m2.md", "invented.md"]})], delay=0.4
    )
    recall = MemoryRecall(memdir_with.root, LLMSelector(provider), manifest_cap=200)
    prefetch = RecallPrefetch(recall, RecallSession())
    loop = asyncio.get_running_loop()
    started = loop.time()
    prefetch.start("what does m2 say about the project")
    for _ in range(3):  # three quick agent steps while the side query is still running
        assert prefetch.take() is None
        await asyncio.sleep(0.05)
    assert loop.time() - started < 0.35
    await asyncio.sleep(0.5)
    taken = prefetch.take()
    assert taken is not None and [a.filename for a in taken] == ["m2.md"]  # whitelist held
    request = provider.last_request
    assert "Available memories:" in str(request.messages[0].content)


class CountingIndexedSelector:
    """An IndexedSelector fake: ranks by name, records the exclusions it was given."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.excluded: list[set[str]] = []

    async def select(self, *args: object, **kwargs: object) -> list[Selection]:
        raise AssertionError("an indexed selector is asked through select_unseen")

    def select_unseen(
        self,
        query: str,
        exclude: AbstractSet[str],
        *,
        recent_tools: Sequence[str] = (),
        limit: int = 5,
    ) -> list[Selection]:
        self.excluded.append(set(exclude))
        return [Selection(n, score=1.0) for n in self.names if n not in exclude][:limit]


async def test_indexed_selector_gets_the_session_exclusions_not_headers(
    memdir_with: MemoryStore,
) -> None:
    sel = CountingIndexedSelector(["m1.md", "m2.md", "gone.md"])
    recall = MemoryRecall(memdir_with.root, sel)
    session = RecallSession()
    first = await recall.recall("what about the build", session)
    assert [a.filename for a in first] == ["m1.md", "m2.md"]  # gone.md has no file: skipped
    assert await recall.recall("what about the build", session) == []
    assert sel.excluded == [set(), {"m1.md", "m2.md"}]


async def test_a_long_lived_recall_reads_only_what_changed(
    memdir_with: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.recall import headers as headers_module

    reads: list[str] = []
    real = headers_module.read_head

    def counting(path: Path, **kwargs: Any) -> list[str]:
        reads.append(path.relative_to(memdir_with.root).as_posix())
        return real(path, **kwargs)

    monkeypatch.setattr(headers_module, "read_head", counting)
    sel = RecordingSelector(["m9.md", "m1.md"])
    recall = MemoryRecall(memdir_with.root, sel)
    assert [m.filename for m in await recall.find("which memory now")] == ["m1.md"]
    assert len(reads) == 8
    reads.clear()
    await recall.find("which memory now")
    assert reads == []  # nothing changed: no file read
    memdir_with.create("m9", "memory number 9", "project", "body 9\n")
    (memdir_with.root / "m3.md").unlink()
    found = await recall.find("which memory now")
    assert reads == ["m9.md"] and [m.filename for m in found] == ["m9.md", "m1.md"]
    assert "m3.md" not in sel.seen[-1]


async def test_a_header_selector_that_picks_two_copies_surfaces_the_newest_once(
    memdir_with: MemoryStore,
) -> None:
    memdir_with.create("m3 copy", "memory number 3", "project", "body 3\n", rel="m3_copy.md")
    os.utime(memdir_with.root / "m3_copy.md", (2_000_000, 2_000_000))
    sel = RecordingSelector(["m3.md", "m1.md", "m3_copy.md"])
    found = await MemoryRecall(memdir_with.root, sel).find("which memory now")
    assert [m.filename for m in found] == ["m3_copy.md", "m1.md"]
