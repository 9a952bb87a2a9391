"""The session-level hooks: ``session-start``, ``stop``, ``pre-compact``, ``session-end``.

Invariants: none of them blocks the host for long — extraction runs in a detached worker, the
session-end drain is bounded — and none raises past :func:`~.runner.run_event`. ``session-start``
stays under :data:`SESSION_START_CHARS`; in ``--claude`` mode it leaves the memory instructions
and ``MEMORY.md`` to the host, which already puts them in its system prompt.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.handlers import HookContext, log_event, start_daemon
from memdir.adapters.hooks.hookio import HookInput, clip
from memdir.errors import HookInputError

if TYPE_CHECKING:
    from memdir.extract.base import Extractor
    from memdir.store import MemoryStore

SESSION_START_CHARS = 8_000

# -- session-start --------------------------------------------------------------------------


def instructions(hc: HookContext) -> str:
    """Short memory instructions for the session, in the settings' mode."""
    settings, paths = hc.settings, hc.paths
    lines = [
        "# Memory (memdir)",
        f"You have a persistent, file-based memory at {paths.memory_dir}. Memories relevant to "
        "each prompt are added to the conversation automatically.",
    ]
    if settings.daily_log_mode:
        lines.append(
            f"- Record what is worth keeping as timestamped bullets appended to "
            f"{paths.logs_dir}/YYYY/MM/YYYY-MM-DD.md (append only); MEMORY.md is a distilled "
            "index maintained for you — do not edit it."
        )
    else:
        lines += [
            "- Save what will matter in later sessions — who the user is and how they like to "
            "work, corrections to your approach, project facts that are not in the code, where "
            "outside information lives — as one Markdown file per memory with frontmatter "
            "(name, description, type: user | feedback | project | reference), plus a one-line "
            "pointer `- [Title](file.md) — hook` in MEMORY.md.",
            "- When the user asks you to remember something, save it now; when asked to forget "
            "something, delete or fix that memory. Update an existing memory instead of adding "
            "a duplicate. Do not save code structure, git history or temporary task state.",
        ]
        if settings.team_memory_enabled:
            lines.append(
                f"- Memories for the whole team go in {paths.team_dir} (its own MEMORY.md); "
                "never put credentials or secrets there."
            )
    lines.append(
        "- Memories are point-in-time notes: check files, functions and flags still exist "
        "before recommending from memory. If the user says to ignore memory, do so."
    )
    return "\n".join(lines)


def _index_text(hc: HookContext, room: int) -> str:
    from memdir.prompts import index_section

    section = index_section(_read(hc.paths.entrypoint))
    if hc.settings.team_memory_enabled and not hc.settings.daily_log_mode:
        team = index_section(
            _read(hc.paths.team_entrypoint), heading="## MEMORY.md (team)", team=True
        )
        section = f"{section}\n\n{team}"
    return clip(section, room) if room > 200 else ""


def _read(path: Path) -> str:
    from memdir.pathsafe import read_regular

    try:  # a FIFO at MEMORY.md must not hold the session start until the host's timeout
        return read_regular(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def session_notes(hc: HookContext, session_id: str) -> str:
    """This session's notes (written before compaction); '' when absent or still the template."""
    text = _read(hc.paths.session_memory_path(session_id)).strip()
    if not text:
        return ""
    from memdir.session.notes import builtin_template

    return "" if text == builtin_template().strip() else text


def session_start(inp: HookInput, hc: HookContext) -> str:
    started = time.perf_counter()
    if not hc.settings.auto_memory_enabled:
        log_event(hc, inp, started, skipped="memory disabled", source=inp.source)
        return ""
    start_daemon(hc)  # warm the recall daemon while the user types the first prompt
    with hc.sessions.update(inp.session_id) as state:
        if inp.source in ("startup", "clear"):
            state.surfaced, state.used_bytes = [], 0  # a fresh context
        elif inp.source == "compact":
            state.used_bytes = 0
    hc.sessions.prune()
    parts: list[str] = []
    if not hc.settings.claude_mode:  # in --claude mode the host injects its own MEMORY.md
        parts.append(instructions(hc))
    if inp.source == "compact":  # a model notes update started at pre-compact may still run
        from memdir.adapters.hooks.notes_worker import wait_for_notes

        wait_for_notes(hc, inp.session_id)
    notes = session_notes(hc, inp.session_id) if inp.source == "compact" else ""
    if notes:
        from memdir.session.reinject import fit_notes

        header = "## Session notes (kept across the compaction)\n\n"
        room = SESSION_START_CHARS - sum(len(p) + 2 for p in parts) - len(header)
        path = hc.paths.session_memory_path(inp.session_id)
        parts.append(header + fit_notes(notes, room, notes_path=path))
    if parts and not hc.settings.claude_mode:
        room = SESSION_START_CHARS - sum(len(p) + 2 for p in parts)
        index = _index_text(hc, room)
        if index:
            parts.insert(1, index)
    text = clip("\n\n".join(parts), SESSION_START_CHARS)
    skipped = _claim_start(hc, inp, text) if text else None
    if skipped is not None:
        log_event(hc, inp, started, source=inp.source, skipped=skipped)
        return ""
    log_event(hc, inp, started, source=inp.source, chars=len(text), text=text)
    return hc.dialect.render(inp.event, text, None)


def _claim_start(hc: HookContext, inp: HookInput, text: str) -> str | None:
    """None when ``text`` goes into the context; else why not (it is there already)."""
    import hashlib

    block = hashlib.sha256(text.encode()).hexdigest()[:16]
    event = "\0".join([inp.source or "", inp.transcript_path or "", inp.cwd or "", block])
    with hc.sessions.update(inp.session_id) as state:
        return state.claim_start(
            hashlib.sha256(event.encode()).hexdigest()[:16],
            block,
            inp.source or "",
            time.time(),
        )


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


def _transcript(inp: HookInput, hc: HookContext) -> tuple[Path | None, str]:
    """The transcript file to read, or None and why not (the rule: ``transcript_file``)."""
    from memdir.adapters.hooks.transcript_file import checked_transcript

    try:
        return checked_transcript(inp.transcript_path, hc.dialect.transcript_roots(hc.env)), ""
    except HookInputError as exc:
        return None, str(exc)


def model_for_background(hc: HookContext) -> bool:
    """A model worker is worth spawning: a model is configured (a host CLI that is present)."""
    from memdir.adapters.hooks.hostmodel import HOST_SPEC_PREFIX, background_spec

    spec = background_spec(hc.settings, hc.dialect.model_provider)
    if not spec or hc.extract_mode == "off" or not hc.worker_command:
        return False
    if spec.startswith(HOST_SPEC_PREFIX):
        from memdir.llm.claude_code import find_cli

        return find_cli(hc.env) is not None
    return True


WORKER_NICENESS = 10


def background_prefix() -> list[str]:
    """``nice -n 10`` when the system has ``nice``: a worker starts while the host is still
    finishing its turn (Stop) or exiting (SessionEnd), on the same cores; it must not slow the
    host down, and a second later nobody is waiting for it."""
    import shutil

    nice = shutil.which("nice")
    return [nice, "-n", str(WORKER_NICENESS)] if nice else []


def spawn_worker(
    hc: HookContext,
    session_id: str,
    transcript: Path | None,
    worker: str = "extract-worker",
    extra: Sequence[str] = (),
) -> None:
    import subprocess

    base = [*hc.worker_command[:-1], worker] if hc.worker_command else []
    command = [*background_prefix(), *base, "--session", session_id, *extra]
    if transcript is not None:
        command += ["--transcript", str(transcript)]
    log_file = hc.cache_dir / "hooks" / "worker.log"
    log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(log_file, "ab") as err:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            close_fds=True,
            cwd=str(hc.paths.cwd),
            env=dict(hc.env),  # the hook's environment, also when the daemon runs this hook
        )


def pre_compact(inp: HookInput, hc: HookContext) -> str:
    """Bring the session notes up to date (offline), so ``session-start`` with
    ``source=compact`` can put them back; the recall byte budget starts afresh (the old
    attachments leave the context) while the never-twice set stays."""
    started = time.perf_counter()
    with hc.sessions.update(inp.session_id) as state:
        state.used_bytes = 0
        state.compactions += 1
    log_event(hc, inp, started, trigger=inp.trigger, notes=_update_notes(inp, hc))
    return ""  # PreCompact cannot add context


def _update_notes(inp: HookInput, hc: HookContext) -> str:
    if hc.settings.claude_mode:
        return "left to the host (its session memory owns that file in --claude mode)"
    transcript, refused = _transcript(inp, hc)
    if transcript is None:
        return refused
    from memdir.adapters.hooks.host_transcript import readable
    from memdir.session import update_notes_from_transcript

    notes = hc.paths.session_memory_path(inp.session_id)
    outcome = update_notes_from_transcript(readable(hc.dialect, transcript, hc.cache_dir), notes)
    if not outcome.ok:
        return f"not updated: {outcome.error}"
    done = f"updated ({outcome.messages_covered} messages)" if outcome.changed else "unchanged"
    if model_for_background(hc):
        from memdir.adapters.hooks.notes_worker import mark_notes_pending

        mark_notes_pending(hc, inp.session_id)
        spawn_worker(hc, inp.session_id, transcript, "notes-worker")  # the model improves them
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


def run_extraction(hc: HookContext, session_id: str, transcript: Path) -> Any:
    """The worker's body (also run inline at session end)."""
    from memdir.adapters.hooks.extraction import run_worker
    from memdir.adapters.hooks.host_transcript import readable

    transcript = readable(hc.dialect, transcript, hc.cache_dir)
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
            return FallbackExtractor(AgentExtractor(provider, store, cwd=cwd), RuleExtractor(store))
    return RuleExtractor(store)
