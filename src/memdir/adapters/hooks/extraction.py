"""Extraction at ``Stop``, run by a detached worker so the host never waits.

Invariants (the reference's extraction rules, applied across processes):
- Single flight per session: the worker holds ``<session>.extract.lock``. A stop that finds it
  held only sets ``extract_pending`` in the session state; the running worker then does exactly
  one trailing run over whatever the transcript holds by then.
- The cursor (uuid of the last transcript message covered) lives in the session state and moves
  only when a run succeeded, so a failed or killed run is retried over the same messages.
- If the main agent itself wrote to the memory dir since the cursor, nothing is extracted and the
  cursor moves on: two writers must not record the same thing. "Wrote" is read off the memory
  dir (:mod:`memdir.extract.changes`: a memory file changed since the first new message, other
  than by extraction), so every writer counts — the host's Write/Edit, memdir's own MCP
  ``memory_save``, a shell command — not only tool names we know.
- Extractions of every session of the memory dir take turns (``hooks/extracting.lock`` in the
  cache dir) from that check until their writes are recorded as extraction's own: otherwise a
  parallel session's worker (another host in the same repository) would see a file written a
  moment before and skip its own turn.
- Only the main thread is read: sidechains (sub-agents), compact summaries and torn lines are
  skipped. A "Saved N memories" notice is queued in the state for the next prompt's hook.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.adapters.hooks import hooklog
from memdir.adapters.hooks.state import SessionStore
from memdir.atomic import FileLock
from memdir.errors import LockHeldError
from memdir.extract.base import ConversationMessage, ExtractionResult, Extractor, Turn
from memdir.extract.changes import OwnWrites, changed_since
from memdir.extract.service import messages_since, wrote_memory
from memdir.extract.transcript import turns_from_entries
from memdir.transcripts import read_transcript

MAX_TRAILING_RUNS = 5  # a session that keeps stopping faster than extraction runs still ends
# how long a worker waits for another session's extraction (a host-model run takes a minute);
# past it the turn stays pending for the session's next stop
TURN_WAIT_SECONDS = 300.0


@dataclass(frozen=True)
class WorkerReport:
    runs: int
    saved: list[str]
    skipped: str | None = None


def extract_lock(store: SessionStore, session_id: str, what: str = "extract") -> FileLock:
    """A session's single-flight lock for one kind of worker (extract, notes)."""
    return FileLock(store.lock_path(session_id, what), timeout=0)


def extraction_running(store: SessionStore, session_id: str, what: str = "extract") -> bool:
    """True while a worker holds the session's lock for ``what``."""
    lock = extract_lock(store, session_id, what)
    try:
        lock.acquire()
    except LockHeldError:
        return True
    lock.release()
    return False


def wait_idle(store: SessionStore, session_id: str, timeout: float, what: str = "extract") -> bool:
    """Wait until no worker runs for this session; False if ``timeout`` passed first."""
    deadline = time.monotonic() + timeout
    while extraction_running(store, session_id, what):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def fell_back_before(cache_dir: Path, session_id: str) -> bool:
    """True when an earlier extraction of the session already fell back (and said so)."""
    rows = hooklog.read(cache_dir, session=session_id, limit=0)
    return any(r.get("event") == "extract" and r.get("fallback") for r in rows)


def _turns(transcript: Path, *, include_meta: bool) -> tuple[list[Turn], dict[str, int]]:
    """The main-thread turns, and each entry's time (ns since the epoch) by uuid."""
    read = read_transcript(transcript)
    entries = [e for e in read.entries if not e.get("isCompactSummary")]
    times: dict[str, int] = {}
    for entry in entries:
        uuid, stamp = entry.get("uuid"), entry.get("timestamp")
        if isinstance(uuid, str) and isinstance(stamp, str):
            try:
                moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                continue
            if moment.tzinfo is not None:
                times[uuid] = int(moment.timestamp() * 1_000_000_000)
    return turns_from_entries(entries, include_meta=include_meta), times


def unextracted(
    store: SessionStore, session_id: str, transcript: Path, *, include_meta: bool = False
) -> int:
    """How many of the transcript's messages lie past the session's cursor: 0 when a worker
    would find nothing to do (a turn of only an interruption or a snapshot has no message)."""
    turns, _times = _turns(transcript, include_meta=include_meta)
    return len(messages_since(turns, store.load(session_id).cursor))


def agent_wrote(
    new: Sequence[ConversationMessage], times: dict[str, int], memory_dir: Path, cache_dir: Path
) -> str | None:
    """Why extraction must skip ``new`` (the agent saved memory itself), or None."""
    if wrote_memory(new, memory_dir):
        return "main agent wrote memory"
    since = min((times[t.uuid] for t in new if t.uuid in times), default=None)
    if since is None:  # no timestamps: the whole dir would look new; trust the tool names
        return None
    changed = changed_since(memory_dir, since, own=OwnWrites(cache_dir).load())
    if changed is not None:
        return f"main agent wrote memory ({changed.name} changed this turn)"
    return None


def run_worker(
    *,
    store: SessionStore,
    cache_dir: Path,
    memory_dir: Path,
    session_id: str,
    transcript: Path,
    make_extractor: Callable[[], Extractor],
    include_meta: bool,
) -> WorkerReport:
    """Extract from the transcript since the session's cursor, with trailing runs.

    A worker that finds the lock held sets ``extract_pending`` and leaves it to the holder. The
    holder looks at that flag after each run, but a newcomer can arrive between that look and
    the release (the next turn's Stop right as the row is written), and its messages would
    wait for the Stop after, so after releasing the holder looks once more and, if the flag is
    up and the lock is free, takes the lock again.
    """

    def trailing_runs() -> WorkerReport:
        """Runs under the session's lock until nothing is new or nobody asked for another."""
        runs = 0
        saved: list[str] = []
        extractor: Extractor | None = None
        for _ in range(MAX_TRAILING_RUNS):
            with store.update(session_id) as state:
                cursor = state.cursor
                state.extract_pending = False
            turns, times = _turns(transcript, include_meta=include_meta)
            new = list(messages_since(turns, cursor))
            if not new:
                break
            last = new[-1].uuid
            started = time.monotonic()
            try:
                turn = FileLock(cache_dir / "hooks" / "extracting.lock", timeout=TURN_WAIT_SECONDS)
                with turn:
                    skip = agent_wrote(new, times, memory_dir, cache_dir)
                    if skip is not None:
                        result = ExtractionResult(memory_dir, skipped=skip)
                    else:
                        extractor = extractor or make_extractor()
                        runs += 1
                        messages = [t.message for t in turns]
                        result = asyncio.run(extractor.extract(messages, new_messages=len(new)))
                        OwnWrites(cache_dir).add(result.written)
            except LockHeldError:  # the cursor stays: the next stop extracts these messages
                with store.update(session_id) as state:
                    state.extract_pending = True
                return WorkerReport(runs, saved, skipped="other sessions' extractions ran long")
            first_fallback = result.fallback and not fell_back_before(cache_dir, session_id)
            with store.update(session_id) as state:
                if result.ok:
                    state.cursor = last
                if result.notice:
                    state.notices.append(result.notice)
                if first_fallback:  # said once per session; the log has every one
                    state.notices.append(f"memdir: {result.fallback}")
                pending = state.extract_pending
            saved += [str(p) for p in result.written]
            hooklog.record(
                cache_dir,
                {
                    "session": session_id,
                    "event": "extract",
                    "new_messages": len(new),
                    "written": [str(p) for p in result.written],
                    "removed": [str(p) for p in result.removed],
                    "notice": result.notice,
                    "ok": result.ok,
                    "error": result.error,
                    "skipped": result.skipped,
                    "fallback": result.fallback,
                    **(result.run.cost() if result.run is not None else {}),
                    "ms": round((time.monotonic() - started) * 1000, 1),
                },
            )
            if not pending:
                break
        return WorkerReport(runs, saved)

    runs = 0
    saved: list[str] = []
    lock = extract_lock(store, session_id)
    for _ in range(MAX_TRAILING_RUNS):
        try:
            lock.acquire()
        except LockHeldError:
            with store.update(session_id) as state:
                state.extract_pending = True
            if runs:
                return WorkerReport(runs, saved)
            return WorkerReport(0, [], skipped="another extraction runs; it will pick this up")
        try:
            done = trailing_runs()
        finally:
            lock.release()
        runs, saved = runs + done.runs, saved + done.saved
        if done.skipped is not None:
            return WorkerReport(runs, saved, skipped=done.skipped)
        if not store.load(session_id).extract_pending:
            break
    return WorkerReport(runs, saved)
