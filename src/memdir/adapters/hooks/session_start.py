"""``session-start``: the memory instructions, ``MEMORY.md`` and, after a compaction, the notes.

Invariants: the text stays under :data:`SESSION_START_CHARS`; in ``--claude`` mode the memory
instructions and ``MEMORY.md`` are left to the host, which already puts them in its system
prompt; no block is put into one context twice (:meth:`~.state.SessionState.claim_start`), a
resume after a compaction included.

A host whose session-start context does not survive a resume (Gemini CLI drops every stored
user message that starts with the ``<hook_context>`` its SessionStart prefixed, the user's own
first prompt with it) says so with ``start_in_first_prompt``: its session-start only warms the
daemon and records the source, and the first prompt carries the blocks
(:func:`pending_start`), in a part of the user's turn that the host keeps.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.adapters.hooks.handlers import log_event, start_daemon
from memdir.adapters.hooks.hookio import clip

if TYPE_CHECKING:
    from memdir.adapters.hooks.handlers import HookContext
    from memdir.adapters.hooks.hookio import HookInput

SESSION_START_CHARS = 8_000
WORK_RECALL_CHARS = 3_000  # kept from MEMORY.md for the memories recalled on the work (Cursor)

# -- session-start --------------------------------------------------------------------------


def instructions(hc: HookContext) -> str:
    """Short memory instructions for the session, in the settings' mode."""
    settings, paths = hc.settings, hc.paths
    how = (
        "Memories relevant to the current work are added here at the start; nothing is added "
        "per prompt, so call the memdir MCP tool memory_recall with the task before starting it."
        if getattr(hc.dialect, "recall_at_start", False)
        else "Memories relevant to each prompt are added to the conversation automatically."
    )
    lines = [
        "# Memory (memdir)",
        f"You have a persistent, file-based memory at {paths.memory_dir}. {how}",
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


def _index_section(hc: HookContext) -> str:
    from memdir.prompts import index_section

    section = index_section(_read(hc.paths.entrypoint))
    if hc.settings.team_memory_enabled and not hc.settings.daily_log_mode:
        team = index_section(
            _read(hc.paths.team_entrypoint), heading="## MEMORY.md (team)", team=True
        )
        section = f"{section}\n\n{team}"
    return section


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
    if _deferred(hc):
        return _defer(inp, hc)
    if not getattr(hc.dialect, "recall_at_start", False):
        text = start_blocks(inp, hc)
        return hc.dialect.render(inp.event, text, None) if text else ""
    # no recall per prompt (Cursor): the memories for the repository's current work come here
    from memdir.adapters.hooks.work_recall import begin_work_query, work_memories

    asking = hc.settings.auto_memory_enabled and (hc.paths.project_root / ".git").exists()
    read_work = begin_work_query(hc.paths.cwd) if asking else None  # git runs meanwhile
    text = start_blocks(inp, hc, reserve=WORK_RECALL_CHARS if asking else 0)
    work = read_work() if read_work is not None else ("", ())
    room = SESSION_START_CHARS - (len(text) + 2 if text else 0)
    text = "\n\n".join(t for t in (text, work_memories(inp, hc, room, work)) if t)
    return hc.dialect.render(inp.event, text, None) if text else ""


def _deferred(hc: HookContext) -> bool:
    return bool(getattr(hc.dialect, "start_in_first_prompt", False))


def _defer(inp: HookInput, hc: HookContext) -> str:
    started = time.perf_counter()
    if not hc.settings.auto_memory_enabled:
        log_event(hc, inp, started, skipped="memory disabled", source=inp.source)
        return ""
    start_daemon(hc)
    with hc.sessions.update(inp.session_id) as state:
        state.start_pending = inp.source or "startup"
    log_event(hc, inp, started, source=inp.source, deferred="to the first prompt")
    return ""


def pending_start(inp: HookInput, hc: HookContext) -> str:
    """The blocks a deferred session start left for this prompt ('' for none); taken once."""
    if not _deferred(hc) or inp.agent_id:
        return ""
    with hc.sessions.update(inp.session_id) as state:
        source, state.start_pending = state.start_pending, ""
    if not source:
        return ""
    return start_blocks(replace(inp, event="session-start", source=source), hc)


def start_blocks(inp: HookInput, hc: HookContext, reserve: int = 0) -> str:
    """The session-start text for ``inp`` (its blocks claimed for the context), '' for none;
    ``reserve`` characters are left free of MEMORY.md for what the caller adds."""
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
    # (identity, text) per block: a block is claimed by what it says, not by how it was cut
    parts: list[tuple[str, str]] = []
    if not hc.settings.claude_mode:  # in --claude mode the host injects its own MEMORY.md
        text = instructions(hc)
        parts.append((text, text))
    if inp.source == "compact":  # a model notes update started at pre-compact may still run
        from memdir.adapters.hooks.notes_worker import wait_for_notes

        wait_for_notes(hc, inp.session_id)
    notes = session_notes(hc, inp.session_id) if inp.source == "compact" else ""
    if notes:
        from memdir.session.reinject import fit_notes

        header = "## Session notes (kept across the compaction)\n\n"
        room = SESSION_START_CHARS - sum(len(p) + 2 for _, p in parts) - len(header)
        path = hc.paths.session_memory_path(inp.session_id)
        parts.append((notes, header + fit_notes(notes, room, notes_path=path)))
    if parts and not hc.settings.claude_mode:
        room = SESSION_START_CHARS - reserve - sum(len(p) + 2 for _, p in parts)
        section = _index_section(hc)
        if section and room > 200:
            parts.insert(1, (section, clip(section, room)))
    kept, skipped = _claim_start(hc, inp, parts) if parts else ([], None)
    text = clip("\n\n".join(kept), SESSION_START_CHARS)
    if skipped is not None or not text:
        log_event(hc, inp, started, source=inp.source, skipped=skipped)
        return ""
    log_event(hc, inp, started, source=inp.source, chars=len(text), text=text)
    return text


def _claim_start(
    hc: HookContext, inp: HookInput, parts: list[tuple[str, str]]
) -> tuple[list[str], str | None]:
    """The blocks that go into the context, and why none does (it holds them already)."""
    import hashlib

    def digest(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    keys = [digest(identity) for identity, _ in parts]
    # the host's timestamp, where it sends one, keeps a real second event (Gemini's next
    # compression seconds later) from reading as the same event delivered twice
    fields = [inp.source or "", inp.transcript_path or "", inp.cwd or "", inp.timestamp or ""]
    event = "\0".join([*fields, *keys])
    # a host that puts the context in the system prompt of each process (Qwen Code) starts
    # every resumed process without it: each of its session starts is a new context
    source = inp.source or ""
    if not getattr(hc.dialect, "start_kept", True):
        source = "startup"
    with hc.sessions.update(inp.session_id) as state:
        why, new = state.claim_start(digest(event), keys, source, time.time())
    return [text for key, (_, text) in zip(keys, parts, strict=True) if key in new], why
