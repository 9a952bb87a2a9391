"""The session's end, in a detached worker: ``SessionEnd`` hands it over and answers at once.

The host waits for its ``SessionEnd`` hook (``claude -p`` exits only after it), so the hook only
spawns this worker. The worker does what the hook used to do inline, in order:
1. waits (bounded) for the session's running extraction to finish;
2. runs the final extraction over turns it missed (offline inline; a model one in its own worker);
3. brings the session's notes up to date: the handover ``memdir session show`` prints and a
   resumed session builds on (between compactions nothing else writes them for a host);
4. pushes team memory when sync is configured;
5. checks the dream gate and dreams (offline here, a model dream in the dream worker).
One ``session-end-worker`` row in the hook log says what each step did.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from memdir.adapters.hooks import hooklog
from memdir.adapters.hooks.handlers import HookContext
from memdir.adapters.hooks.lifecycle import (
    hook_store,
    model_for_background,
    run_extraction,
    update_notes,
)
from memdir.adapters.hooks.workers import spawn_worker
from memdir.errors import MemdirError

DRAIN_SECONDS = 30.0


def run_end_worker(
    hc: HookContext, session_id: str, transcript: Path | None, reason: str | None = None
) -> dict[str, Any]:
    """The worker's body: drain → final extraction → notes → team push → dream gate; logs one
    row."""
    from memdir.adapters.hooks.extraction import wait_idle

    started = time.monotonic()
    row: dict[str, Any] = {"session": session_id, "event": "session-end-worker"}
    if reason:
        row["reason"] = reason
    row["drained"] = wait_idle(hc.sessions, session_id, DRAIN_SECONDS)
    if row["drained"] and hc.extraction and transcript is not None:
        if hc.extraction == "model" and hc.make_extractor is None:
            # a model call may be slow: the extraction worker does it, this one goes on
            spawn_worker(hc, session_id, transcript)
            row["final_extraction"] = "started in the background"
        else:
            report = run_extraction(hc, session_id, transcript)
            row["final_extraction_runs"] = report.runs
    if transcript is not None and hc.settings.auto_memory_enabled:
        try:
            # offline: a model call at every session's end would cost more than the handover
            # gains; the model improves the notes where they matter, before a compaction
            row["notes"] = update_notes(hc, session_id, transcript, improve=False)
        except (OSError, MemdirError) as exc:  # the session is over: report, go on
            row["notes"] = f"not updated: {exc}"
    row["team_push"] = _team_push(hc)
    row["dream"] = _dream_gate(hc, session_id)
    row["ms"] = round((time.monotonic() - started) * 1000, 1)
    hooklog.record(hc.cache_dir, row)
    return row


def _dream_gate(hc: HookContext, session_id: str) -> str:
    """Check the dream gate (cheap when closed); when it is open, dream offline now.

    The session is over and the host no longer waits for this worker. The offline dreamer
    (no model, word-overlap duplicates) takes seconds, keeps a snapshot (``memdir dream undo``)
    and holds the consolidation lock, so a parallel session's hook never dreams at the same
    time. In the ``--claude`` layout the host consolidates its own directory: memdir leaves it.
    """
    from memdir.consolidate.factory import default_dreamer, dream_gate
    from memdir.consolidate.run import maybe_dream_sync

    gate = dream_gate(hc.settings, hc.paths)
    if not hc.settings.claude_mode and gate.enabled and model_for_background(hc):
        # a model dream may outlast the hook: the detached worker checks the gate and dreams
        spawn_worker(hc, session_id, None, "dream-worker")
        return "checked in the background (model dream when the gate is open)"
    if hc.settings.claude_mode:
        result = gate.check(current_session=session_id)
        return (
            "gate open; left to the host in the --claude layout"
            if result.open
            else (f"gate closed ({result.reason})")
        )
    store = hook_store(hc)
    # maybe_dream checks the gate itself: a second check would trip the 10-minute scan throttle
    outcome = maybe_dream_sync(gate, default_dreamer(store, hc.paths), current_session=session_id)
    if outcome.gate is not None and not outcome.gate.open:
        return f"gate closed ({outcome.gate.reason})"
    if not outcome.ran:
        return f"not run ({outcome.reason})"
    return outcome.notice or "ran; nothing to improve"


def _team_push(hc: HookContext) -> str:
    settings = hc.settings
    if not (settings.team_memory_enabled and settings.team_sync_url):
        return "not configured"
    if not (settings.team_repo and settings.team_token):
        return "skipped: MEMDIR_TEAM_REPO and MEMDIR_TEAM_TOKEN are needed"
    import asyncio

    from memdir.team.client import TeamSyncClient
    from memdir.team.client_state import state_path

    url, repo, token = settings.team_sync_url, settings.team_repo, settings.team_token
    team_dir = hc.paths.team_dir

    async def push() -> str:
        async with TeamSyncClient(
            url=url,
            token=token,
            repo=repo,
            team_dir=team_dir,
            state_path=state_path(hc.cache_dir, url, repo, team_dir),
        ) as client:
            result = await client.push()
        return f"pushed {len(result.uploaded)} files"

    try:
        return asyncio.run(push())
    except Exception as exc:  # the session is over: report, never fail the hook
        return f"failed: {exc}"


__all__ = ["DRAIN_SECONDS", "run_end_worker"]
