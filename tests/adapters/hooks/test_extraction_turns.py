"""Two sessions' extraction workers at once (two hosts in one repository) both save.

Found on a loaded CI machine (Claude Code and Codex, one memory dir): one worker wrote its memory,
and before it had recorded the file as extraction's own, the other's "did the agent write
memory this turn?" check saw the new file and skipped its turn for good. The workers now take
turns from the check to the record.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from memdir.adapters.hooks import extraction
from memdir.adapters.hooks.extraction import WorkerReport, run_worker
from memdir.adapters.hooks.state import SessionStore
from memdir.extract.base import ExtractionResult
from memdir.extract.rule_extractor import RuleExtractor
from memdir.llm.base import Message
from memdir.store import MemoryStore
from memdir.transcripts import Transcript

MODEL = "claude-sonnet-4-5"


class SlowSaver:
    """Saves ``fact`` and then, when told to, waits (as a model run would) before returning."""

    def __init__(self, memory_dir: Path, fact: str, hold: threading.Event | None) -> None:
        self.memory_dir, self.fact, self.hold = memory_dir, fact, hold
        self.saved = threading.Event()

    async def extract(self, messages: Sequence[Message], *, new_messages: int) -> ExtractionResult:
        memory = MemoryStore(self.memory_dir).create(self.fact, self.fact, "project", self.fact)
        self.saved.set()
        if self.hold is not None:
            await asyncio.to_thread(self.hold.wait, 30)
        return ExtractionResult(self.memory_dir, written=[self.memory_dir / memory.path])


def _session(tmp_path: Path, name: str, fact: str) -> Path:
    path = tmp_path / f"{name}.jsonl"
    transcript = Transcript(path, name, str(tmp_path))
    transcript.user(f"Remember that {fact}.")
    transcript.assistant("Noted.", model=MODEL)
    return path


def test_a_parallel_sessions_fresh_write_does_not_skip_this_sessions_turn(tmp_path: Path) -> None:
    memory_dir, cache_dir = tmp_path / "memory", tmp_path / "cache"
    store = SessionStore(cache_dir)
    release = threading.Event()
    first = SlowSaver(memory_dir, "the cache server is kiwi-9", hold=release)
    second = SlowSaver(memory_dir, "the queue server is mango-4", hold=None)
    reports: dict[str, WorkerReport] = {}

    def work(session: str, extractor: SlowSaver) -> None:
        reports[session] = run_worker(
            store=store,
            cache_dir=cache_dir,
            memory_dir=memory_dir,
            session_id=session,
            transcript=_session(tmp_path, session, extractor.fact),
            make_extractor=lambda: extractor,
            include_meta=False,
        )

    a = threading.Thread(target=work, args=("claude-1", first))
    a.start()
    assert first.saved.wait(30)  # kiwi-9 is on disk, not yet recorded as extraction's own
    b = threading.Thread(target=work, args=("codex-1", second))
    b.start()
    b.join(timeout=1.0)  # the second worker waits its turn instead of skipping
    assert b.is_alive() and not second.saved.is_set()
    release.set()
    a.join(30)
    b.join(30)
    assert reports["codex-1"].skipped is None and reports["codex-1"].runs == 1
    texts = "\n".join(p.read_text() for p in memory_dir.glob("*.md"))
    assert "kiwi-9" in texts and "mango-4" in texts
    assert store.load("codex-1").cursor is not None


def rules_worker(tmp_path: Path, path: Path) -> WorkerReport:
    """The Stop worker with the offline rules, as a host session "s" in ``tmp_path`` runs it."""
    memory_dir = tmp_path / "memory"
    return run_worker(
        store=SessionStore(tmp_path / "cache"),
        cache_dir=tmp_path / "cache",
        memory_dir=memory_dir,
        session_id="s",
        transcript=path,
        make_extractor=lambda: RuleExtractor(MemoryStore(memory_dir)),
        include_meta=False,
    )


def test_a_sighting_noted_in_the_daily_log_is_not_the_agent_writing_memory(
    tmp_path: Path,
) -> None:
    """The worker notes a first draft-PR ask in the daily log; the next turn must still be
    extracted (a log line is a journal entry, not a memory the agent saved)."""
    memory_dir, path = tmp_path / "memory", tmp_path / "s.jsonl"
    transcript = Transcript(path, "s", str(tmp_path))
    said = ["commit, push and open a draft PR", "Remember that the cache server is kiwi-9."]
    for text in said:
        transcript.user(text)
        transcript.assistant("Done.", model=MODEL)
        assert rules_worker(tmp_path, path).skipped is None
    assert [p.name for p in (memory_dir / "logs").rglob("*.md")]  # the sighting was noted
    [memory] = MemoryStore(memory_dir).list()
    assert "kiwi-9" in MemoryStore(memory_dir).read(memory.filename).body


def test_a_stop_that_arrives_as_the_last_run_ends_is_not_left_for_the_next_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next turn's Stop spawns its worker in the moment between the running worker's last
    look at ``extract_pending`` and its release: the newcomer finds the lock held, raises the
    flag and leaves; the holder had already looked, so that turn waited for the following Stop.
    The holder now looks again after releasing."""
    memory_dir, cache_dir = tmp_path / "memory", tmp_path / "cache"
    store, path = SessionStore(cache_dir), tmp_path / "s.jsonl"
    transcript = Transcript(path, "s", str(tmp_path))
    transcript.user("Remember that the cache server is kiwi-9.")
    transcript.assistant("Noted.", model=MODEL)
    newcomer: list[WorkerReport] = []
    landed: list[bool] = []

    def work() -> WorkerReport:
        return rules_worker(tmp_path, path)

    real_record = extraction.hooklog.record

    def record(cache: Path, row: dict[str, object]) -> None:
        real_record(cache, row)
        if not landed:  # the next turn lands and its Stop's worker starts, right now
            landed.append(True)
            transcript.user("Remember that the queue server is mango-4.")
            transcript.assistant("Noted.", model=MODEL)
            other = threading.Thread(target=lambda: newcomer.append(work()))  # its own worker
            other.start()
            other.join(30)

    monkeypatch.setattr(extraction.hooklog, "record", record)
    report = work()
    assert newcomer[0].skipped == "another extraction runs; it will pick this up"
    assert report.runs == 2 and not store.load("s").extract_pending
    texts = "\n".join(p.read_text() for p in memory_dir.glob("*.md"))
    assert "kiwi-9" in texts and "mango-4" in texts


def test_what_a_worker_would_find_past_the_cursor(tmp_path: Path) -> None:
    store, path = SessionStore(tmp_path / "cache"), tmp_path / "s.jsonl"
    transcript = Transcript(path, "s", str(tmp_path))
    transcript.user("Remember that the cache server is kiwi-9.")
    transcript.assistant("Noted.", model=MODEL)
    assert extraction.unextracted(store, "s", path) == 2
    rules_worker(tmp_path, path)
    assert extraction.unextracted(store, "s", path) == 0
    transcript.user("[Request interrupted by user for tool use]")  # no message to extract
    assert extraction.unextracted(store, "s", path) == 0
    transcript.user("and the queue server is mango-4")
    assert extraction.unextracted(store, "s", path) == 1
