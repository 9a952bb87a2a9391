"""The turn- and session-level hooks: ``stop``, ``pre-compact``, ``session-end`` (the start
is :mod:`.session_start`, the prompt :mod:`.handlers`).

Invariants: none of them blocks the host for long — extraction runs in a detached worker, the
session-end drain is bounded — and none raises past :func:`~.runner.run_event`.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.handlers import HookContext, log_event
from memdir.adapters.hooks.hookio import HookInput
from memdir.adapters.hooks.workers import spawn_worker
from memdir.adapters.hooks.workers import transcript_of as _transcript

if TYPE_CHECKING:
    from memdir.extract.base import Extractor
    from memdir.store import MemoryStore

# -- stop, pre-compact, session-end ---------------------------------------------------------


def stop(inp: HookInput, hc: HookContext) -> str:
    from memdir.adapters.hooks.extraction import extraction_running

    started = time.perf_counter()
    mode = hc.extraction
    if mode is None or inp.agent_id:
        log_event(hc, inp, started, skipped="extraction off" if mode is None else "sub-agent")
        return ""
    transcript, refused = _transcript(inp, hc)
    if transcript is None:
        log_event(hc, inp, started, skipped=refused)
        return ""
    sessions = hc.sessions
    if extraction_running(sessions, inp.session_id):
        with sessions.update(inp.session_id) as state:
            state.extract_pending = True
        log_event(hc, inp, started, extraction="queued behind the running one")
        return ""
    spawn_worker(hc, inp.session_id, transcript)
    log_event(hc, inp, started, extraction=f"started ({mode})")
    return ""


def model_for_background(hc: HookContext) -> bool:
    """A model worker is worth spawning: a model is configured (a host CLI that is present)."""
    from memdir.adapters.hooks.hostmodel import background_spec, host_cli_present

    spec = background_spec(hc.settings, hc.dialect.model_provider)
    if not spec or hc.extract_mode == "off" or not hc.worker_command:
        return False
    return host_cli_present(spec, hc.env)


def pre_compact(inp: HookInput, hc: HookContext) -> str:
    """Bring the session notes up to date (offline), so ``session-start`` with
    ``source=compact`` can put them back; the recall byte budget starts afresh (the old
    attachments leave the context) while the never-twice set stays."""
    started = time.perf_counter()
    with hc.sessions.update(inp.session_id) as state:
        state.compacted_at = time.time()
        if not _counts_compactions(hc):  # else the transcript says when one happened
            state.used_bytes = 0
            state.compactions += 1
    log_event(hc, inp, started, trigger=inp.trigger, notes=_update_notes(inp, hc))
    return ""  # PreCompact cannot add context


def _counts_compactions(hc: HookContext) -> bool:
    """The host records its compactions in the transcript (the dialect's optional
    ``compactions(path) -> int``) and sends no session-start after one (Gemini CLI)."""
    return callable(getattr(hc.dialect, "compactions", None))


def after_host_compaction(inp: HookInput, hc: HookContext) -> str:
    """The first prompt after a compaction the host recorded but did not announce: what a
    ``session-start`` with ``source=compact`` gives (instructions, MEMORY.md, session notes,
    the recall budget afresh), with the notes first brought up to date from the transcript —
    whose own records still hold the turns the compaction summarised. '' when there was none.

    Gemini CLI fires ``PreCompress`` before every model call and no ``SessionStart`` after
    compressing, so its compactions are counted in its session file instead."""
    if not _counts_compactions(hc) or inp.agent_id or not hc.settings.auto_memory_enabled:
        return ""
    transcript, _refused = _transcript(inp, hc)
    if transcript is None:
        return ""
    started = time.perf_counter()
    seen = int(hc.dialect.compactions(transcript))  # type: ignore[attr-defined]
    with hc.sessions.update(inp.session_id) as state:
        if seen <= state.compactions:
            return ""
        state.compactions = seen
    noted = replace(inp, event="pre-compact", trigger="transcript")
    log_event(hc, noted, started, trigger=noted.trigger, notes=_update_notes(noted, hc))
    from memdir.adapters.hooks.session_start import start_blocks

    return start_blocks(replace(inp, event="session-start", source="compact"), hc)


def _update_notes(inp: HookInput, hc: HookContext) -> str:
    if hc.settings.claude_mode:
        return "left to the host (its session memory owns that file in --claude mode)"
    transcript, refused = _transcript(inp, hc)
    if transcript is None:
        return refused
    return update_notes(hc, inp.session_id, transcript)


def update_notes(
    hc: HookContext, session_id: str, transcript: Path, *, improve: bool = True
) -> str:
    """The session's notes brought up to date offline from ``transcript`` (with ``improve``, a
    model improves them in the notes worker when one is configured); what happened, for the
    hook log."""
    if hc.settings.claude_mode:
        return "left to the host (its session memory owns that file in --claude mode)"
    from memdir.adapters.hooks.host_transcript import readable
    from memdir.session import update_notes_from_transcript

    notes = hc.paths.session_memory_path(session_id)
    outcome = update_notes_from_transcript(readable(hc.dialect, transcript, hc.cache_dir), notes)
    if not outcome.ok:
        return f"not updated: {outcome.error}"
    done = f"updated ({outcome.messages_covered} messages)" if outcome.changed else "unchanged"
    if improve and model_for_background(hc):
        from memdir.adapters.hooks.notes_worker import mark_notes_pending

        mark_notes_pending(hc, session_id)
        spawn_worker(hc, session_id, transcript, "notes-worker")  # the model improves them
        done += "; model update started in the background"
    return done


def session_end(inp: HookInput, hc: HookContext) -> str:
    """Hand the session's end to a detached worker (``end_worker``) and answer at once.

    The host waits for this hook: ``claude -p`` exits only after it, and an ``async`` hook still
    running at exit is killed and waited on (~1.5 s in Claude Code 2.1). So nothing here waits
    for the extraction, a model, the team server or a dream."""
    started = time.perf_counter()
    transcript, _refused = _transcript(inp, hc)
    if not hc.worker_command:
        log_event(hc, inp, started, reason=inp.reason, finish="not started (no worker command)")
        return ""
    # one argv word: a reason that starts with "-" (free host text) must not read as an option
    reason = [f"--reason={inp.reason}"] if inp.reason else []
    spawn_worker(hc, inp.session_id, transcript, "end-worker", reason)
    log_event(hc, inp, started, reason=inp.reason, finish="started in the background")
    return ""


def refresh_host_files(hc: HookContext, session_id: str | None, event: str) -> None:
    """A host's files memdir keeps in step with the memory dir (the dialect's optional
    ``after_event(hc) -> str``: Cursor's rules file), after every hook and every extraction;
    a failure is logged, never raised (the hook's own answer stands)."""
    after = getattr(hc.dialect, "after_event", None)
    if after is None:
        return
    try:
        outcome = str(after(hc))
    except Exception as exc:  # the hook's answer must not be lost to a side file
        outcome = f"failed: {' '.join(str(exc).split()) or type(exc).__name__}"
    if outcome != "unchanged":
        from memdir.adapters.hooks import hooklog

        row = {"session": session_id, "event": event, "host": hc.dialect.name, "rules": outcome}
        hooklog.record(hc.cache_dir, row)


def run_extraction(hc: HookContext, session_id: str, transcript: Path) -> Any:
    """The worker's body (also run inline at session end)."""
    from memdir.adapters.hooks.host_transcript import readable

    transcript = readable(hc.dialect, transcript, hc.cache_dir)
    try:
        return _extract(hc, session_id, transcript)
    finally:
        refresh_host_files(hc, session_id, "extract")


def _extract(hc: HookContext, session_id: str, transcript: Path) -> Any:
    from memdir.adapters.hooks.extraction import run_worker

    return run_worker(
        store=hc.sessions,
        cache_dir=hc.cache_dir,
        memory_dir=hc.paths.memory_dir,
        session_id=session_id,
        transcript=transcript,
        make_extractor=hc.make_extractor or (lambda: default_extractor(hc, session_id)),
        include_meta=hc.extraction == "model",
    )


def hook_store(hc: HookContext) -> MemoryStore:
    """The memory dir's store with every credential guard the settings ask for: the detached
    extraction worker and the session-end dream write through exactly what the CLI does."""
    from memdir.team.guard import guarded_store

    return guarded_store(
        hc.paths.memory_dir,
        private_secrets=hc.settings.private_secrets,
        header_cache=hc.cache_dir / "headers.json",
    )


def default_extractor(hc: HookContext, session_id: str | None = None) -> Extractor:
    store = hook_store(hc)
    from memdir.extract.rule_extractor import RuleExtractor

    if hc.extraction == "model":
        from memdir.adapters.hooks.hostmodel import background_provider
        from memdir.extract.agent import AgentExtractor
        from memdir.extract.fallback import FallbackExtractor

        cwd = hc.paths.cwd
        provider = background_provider(
            hc.settings,
            hc.env,
            cwd=cwd,
            purpose="extract",
            session=session_id,
            provider=hc.dialect.model_provider,
        )
        if provider is not None:  # the host model's failures fall back to the rules
            from memdir.extract.session_pass import WithSessionLessons

            # the whole-session rules (a fix proven over several turns) run beside the model,
            # so the hook path saves what `memdir extract` saves over the same session
            agent = FallbackExtractor(
                AgentExtractor(provider, store, cwd=cwd), RuleExtractor(store)
            )
            return WithSessionLessons(agent, store)
    return RuleExtractor(store)
