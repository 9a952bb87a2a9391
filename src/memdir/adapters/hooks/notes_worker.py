"""Session notes with the model, in a detached worker: ``PreCompact`` never waits for a model.

``pre-compact`` first brings the notes up to date offline (fast, always there), then — when a
model is available for background work (``MEMDIR_MODEL`` or the user's own Claude Code CLI) —
spawns this worker, which runs the sandboxed LLM notes updater (one Edit tool, on that one file)
over the whole transcript. The host compacts meanwhile; ``session-start`` with
``source=compact`` waits for the worker (at most :data:`NOTES_WAIT_SECONDS`, under the host's
30-second hook timeout) before it puts the notes back.

Invariants: single flight per session (``<session>.notes.lock``); a failed or unavailable model
leaves the offline notes as they were (the updater rolls back a broken structure) and logs one
``notes`` row saying so; the row carries the call's cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks import hooklog
from memdir.adapters.hooks.extraction import extract_lock, wait_idle
from memdir.atomic import FileLock
from memdir.errors import LockHeldError

if TYPE_CHECKING:
    from memdir.adapters.hooks.handlers import HookContext

NOTES_WAIT_SECONDS = 20.0


def notes_lock(hc: HookContext, session_id: str) -> FileLock:
    return extract_lock(hc.sessions, session_id, "notes")


def _pending_marker(hc: HookContext, session_id: str) -> Path:
    return hc.sessions.lock_path(session_id, "notes-pending")


def mark_notes_pending(hc: HookContext, session_id: str) -> None:
    """Say a notes worker is on its way, before spawning it: until the new process takes its
    lock, the lock alone would tell ``session-start`` that nothing runs."""
    marker = _pending_marker(hc, session_id)
    marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    marker.touch(mode=0o600)


def _pending(hc: HookContext, session_id: str) -> bool:
    try:
        age = time.time() - _pending_marker(hc, session_id).stat().st_mtime
    except OSError:
        return False
    return age < NOTES_WAIT_SECONDS  # an older marker is a worker that died: stop waiting


def wait_for_notes(hc: HookContext, session_id: str, timeout: float = NOTES_WAIT_SECONDS) -> bool:
    """Wait until no notes worker is starting or running for the session; False if ``timeout``
    passed first."""
    deadline = time.monotonic() + timeout
    while _pending(hc, session_id):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return wait_idle(hc.sessions, session_id, max(0.0, deadline - time.monotonic()), "notes")


def run_notes_worker(hc: HookContext, session_id: str, transcript: Path) -> dict[str, Any]:
    """The worker's body: one LLM notes update over ``transcript``; returns the logged row."""
    from memdir.adapters.hooks.hostmodel import background_provider

    row: dict[str, Any] = {"session": session_id, "event": "notes", "updater": "llm"}
    started = time.monotonic()
    lock = notes_lock(hc, session_id)
    try:
        lock.acquire()
    except LockHeldError:
        row["skipped"] = "another notes update runs"
        hooklog.record(hc.cache_dir, row)
        return row  # the marker stays: the running worker clears it
    try:
        provider = background_provider(
            hc.settings,
            hc.env,
            cwd=hc.paths.cwd,
            purpose="notes",
            session=session_id,
            provider=hc.dialect.model_provider,
        )
        if provider is None:
            row["skipped"] = "no model for background work"
        else:
            row.update(_update(hc, session_id, transcript, provider))
    finally:
        lock.release()
    row["ms"] = round((time.monotonic() - started) * 1000, 1)
    hooklog.record(hc.cache_dir, row)
    with contextlib.suppress(OSError):  # the row is written: session-start may go on
        _pending_marker(hc, session_id).unlink()
    return row


def _update(hc: HookContext, session_id: str, transcript: Path, provider: Any) -> dict[str, Any]:
    from memdir.adapters.hooks.host_transcript import readable
    from memdir.session.convert import load_transcript
    from memdir.session.llm_updater import LLMUpdater
    from memdir.session.memory import SessionMemory

    messages, _issues = load_transcript(readable(hc.dialect, transcript, hc.cache_dir))
    memory = SessionMemory(hc.paths.session_memory_path(session_id), LLMUpdater(provider))
    outcome = asyncio.run(memory.update_now(messages))
    out: dict[str, Any] = {"ok": outcome.ok, "changed": outcome.changed, "error": outcome.error}
    if not outcome.ok:
        out["fallback"] = "kept the offline notes"
    out.update(getattr(provider, "totals", dict)())
    return out


__all__ = [
    "NOTES_WAIT_SECONDS",
    "notes_lock",
    "run_notes_worker",
    "wait_for_notes",
]
