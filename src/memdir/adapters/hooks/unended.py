"""Hosts with no session-end event (Codex CLI): a session's end runs at a later start.

Claude Code and Gemini CLI say when a session ends, and memdir then drains the extraction,
pushes team memory and checks the dream gate (:mod:`.end_worker`). A host that never says so
would leave all of that undone; instead each of its hooks records the session's host and
transcript (:func:`track`), and the next session start of that host in the same memory dir hands
every earlier session quiet for :data:`UNENDED_IDLE_SECONDS` to the same end worker, once
(:func:`finish_unended`). A session that goes on after that is tracked again.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.workers import checked_path, spawn_worker

if TYPE_CHECKING:
    from memdir.adapters.hooks.handlers import HookContext
    from memdir.adapters.hooks.hookio import HookInput

UNENDED_IDLE_SECONDS = 120.0  # a session quiet this long, in a host that never says it ended
MAX_UNENDED = 3  # finished per session start: the rest wait for the next one


def track(state: Any, inp: HookInput, hc: HookContext) -> None:
    """Remember the host and transcript of a session whose host sends no session end."""
    if "session-end" in hc.dialect.events:
        return
    state.host, state.ended = hc.dialect.name, False
    if inp.transcript_path:
        state.transcript = inp.transcript_path


def finish_unended(hc: HookContext, current: str) -> list[str] | None:
    """End the earlier sessions of a host that has no session-end event (Codex CLI): each one
    quiet for :data:`UNENDED_IDLE_SECONDS` gets the session-end worker (drain, team push,
    dream gate) now, at the next session start, once."""
    if "session-end" in hc.dialect.events or not hc.worker_command:
        return None
    done: list[str] = []
    now = time.time()
    for session_id in hc.sessions.unended(hc.dialect.name, now - UNENDED_IDLE_SECONDS):
        if session_id == current or len(done) >= MAX_UNENDED:
            continue
        with hc.sessions.update(session_id) as state:
            if state.ended:
                continue
            state.ended = True
            raw = state.transcript
        transcript, _ = checked_path(raw, hc)
        spawn_worker(hc, session_id, transcript, "end-worker", ["--reason=next-session-start"])
        done.append(session_id)
    return done or None
