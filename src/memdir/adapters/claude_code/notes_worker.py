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
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.claude_code import hooklog
from memdir.adapters.claude_code.extraction import extract_lock, wait_idle
from memdir.atomic import FileLock
from memdir.errors import LockHeldError

if TYPE_CHECKING:
    from memdir.adapters.claude_code.handlers import HookContext

NOTES_WAIT_SECONDS = 20.0


def notes_lock(hc: HookContext, session_id: str) -> FileLock:
    return extract_lock(hc.sessions, session_id, "notes")


def wait_for_notes(hc: HookContext, session_id: str, timeout: float = NOTES_WAIT_SECONDS) -> bool:
    """Wait until no notes worker runs for the session; False if ``timeout`` passed first."""
    return wait_idle(hc.sessions, session_id, timeout, "notes")


def run_notes_worker(hc: HookContext, session_id: str, transcript: Path) -> dict[str, Any]:
    """The worker's body: one LLM notes update over ``transcript``; returns the logged row."""
    from memdir.adapters.claude_code.hostmodel import background_provider

    row: dict[str, Any] = {"session": session_id, "event": "notes", "updater": "llm"}
    started = time.monotonic()
    lock = notes_lock(hc, session_id)
    try:
        lock.acquire()
    except LockHeldError:
        row["skipped"] = "another notes update runs"
        hooklog.record(hc.cache_dir, row)
        return row
    try:
        provider = background_provider(
            hc.settings, hc.env, cwd=hc.paths.cwd, purpose="notes", session=session_id
        )
        if provider is None:
            row["skipped"] = "no model for background work"
        else:
            row.update(_update(hc, session_id, transcript, provider))
    finally:
        lock.release()
    row["ms"] = round((time.monotonic() - started) * 1000, 1)
    hooklog.record(hc.cache_dir, row)
    return row


def _update(hc: HookContext, session_id: str, transcript: Path, provider: Any) -> dict[str, Any]:
    from memdir.session.convert import load_transcript
    from memdir.session.llm_updater import LLMUpdater
    from memdir.session.memory import SessionMemory

    messages, _issues = load_transcript(transcript)
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
