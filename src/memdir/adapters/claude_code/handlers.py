"""What each hook event does. Every handler returns the text to print on stdout ('' = nothing).

Invariants:
- Handlers never block the user's prompt on slow work: extraction runs in a detached worker;
  recall asks the warm daemon and recalls in-process only when it is absent or stale.
- Nothing is injected twice in a session (see :mod:`.state`), injected text stays under the
  host's cap, and a sub-agent's prompt gets no recall (it has its own context).
- Errors are the caller's business (``memdir hook`` turns every one into exit 0 + one line):
  handlers raise :class:`~memdir.errors.MemdirError` or let unexpected errors through.
- In ``--claude`` mode the host's own auto-memory already puts the memory instructions and
  MEMORY.md in its system prompt and runs its own extraction: memdir adds recall and session
  notes only, unless told otherwise (``MEMDIR_HOOK_EXTRACT``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters import recall_client
from memdir.adapters.claude_code import hooklog
from memdir.adapters.claude_code.hookio import MAX_CONTEXT_CHARS, HookInput, clip, context_output
from memdir.adapters.claude_code.state import Injected, SessionStore
from memdir.errors import DaemonError

if TYPE_CHECKING:
    from memdir.config import Settings
    from memdir.extract.base import Extractor
    from memdir.paths import ResolvedPaths

SESSION_START_CHARS = 8_000
RECALL_INTRO = "Memories that may be relevant to this prompt (from memdir; verify before relying):"
DRAIN_SECONDS = 30.0
EXTRACT_MODES = ("auto", "rules", "model", "off")

# How a context recalls: (context, query, paths to exclude) -> (memories, how). The warm daemon
# passes its own (its engines are already loaded); everyone else uses :func:`recall_for`.
Recaller = Callable[["HookContext", str, list[str]], tuple[list[Injected], str]]


@dataclass
class HookContext:
    """Everything a handler needs, resolved by the CLI entry point."""

    settings: Settings
    paths: ResolvedPaths
    env: Mapping[str, str] = field(default_factory=dict)
    use_daemon: bool = True
    daemon_idle: float = recall_client.DEFAULT_IDLE_SECONDS
    extract_mode: str = "auto"
    worker_command: list[str] = field(default_factory=list)  # argv that runs the worker
    make_extractor: Callable[[], Extractor] | None = None  # tests inject a scripted one
    recaller: Recaller | None = None

    @property
    def cache_dir(self) -> Path:
        return self.paths.cache_dir

    @property
    def sessions(self) -> SessionStore:
        return SessionStore(self.paths.cache_dir)

    @property
    def socket(self) -> Path:
        return recall_client.socket_path(self.settings.memdir_home)

    @property
    def extraction(self) -> str | None:
        """'rules' or 'model' when stop should extract, None when it should not."""
        mode = self.extract_mode
        if mode == "off" or not self.settings.auto_memory_enabled:
            return None
        if mode == "auto":
            if self.settings.claude_mode:
                return None  # the host's own extraction writes this dir
            return "model" if self.settings.model else "rules"
        return mode


def should_recall(prompt: str) -> bool:
    """Single-word prompts ("yes", "continue") carry too little to recall on."""
    stripped = prompt.strip()
    return bool(stripped) and any(ch.isspace() for ch in stripped)


def _log(hc: HookContext, inp: HookInput, started: float, **fields: Any) -> None:
    entry = {"session": inp.session_id, "event": inp.event, **fields}
    entry["ms"] = round((time.perf_counter() - started) * 1000, 1)
    hooklog.record(hc.cache_dir, entry)


# -- user-prompt-submit ---------------------------------------------------------------------


def recall_in_process(hc: HookContext, query: str, exclude: list[str]) -> list[Injected]:
    from memdir.adapters.recall_daemon import build_engine, recall_attachments

    if hc.settings.recall_selector == "llm" and hc.settings.model:
        from memdir.llm.factory import provider_from_spec
        from memdir.recall.factory import build_recall

        provider = provider_from_spec(hc.settings.model, hc.env)
        engine = build_recall(hc.paths.memory_dir, hc.cache_dir, kind="llm", provider=provider)
    else:
        engine = build_engine(hc.paths.memory_dir, hc.cache_dir)
    return [Injected.from_json(d) for d in recall_attachments(engine, query, exclude, 5)]


def recall_for(hc: HookContext, query: str, exclude: list[str]) -> tuple[list[Injected], str]:
    """(memories, how): from the warm daemon when possible, else in-process."""
    if hc.use_daemon and hc.settings.recall_selector != "llm":
        try:
            found = recall_client.recall(
                hc.socket,
                memory_dir=hc.paths.memory_dir,
                cache_dir=hc.cache_dir,
                query=query,
                exclude=exclude,
            )
            return [Injected.from_json(d) for d in found], "daemon"
        except DaemonError:
            start_daemon(hc)
    return recall_in_process(hc, query, exclude), "in-process"


def start_daemon(hc: HookContext) -> None:
    if not hc.use_daemon:
        return
    log_file = hc.cache_dir / "hooks" / "daemon.log"
    log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    recall_client.spawn(
        hc.socket,
        idle_seconds=hc.daemon_idle,
        warm=(hc.paths.memory_dir, hc.cache_dir),
        log_file=log_file,
    )


def render_memories(found: list[Injected]) -> str:
    if not found:
        return ""
    return "\n\n".join([RECALL_INTRO, *(m.text for m in found)])


def user_prompt_submit(inp: HookInput, hc: HookContext) -> str:
    started = time.perf_counter()
    sessions = hc.sessions
    prompt = inp.prompt or ""
    reason = None
    if not hc.settings.auto_memory_enabled:
        reason = "memory disabled"
    elif inp.agent_id:
        reason = "sub-agent prompt"
    elif not should_recall(prompt):
        reason = "single-word prompt"
    found: list[Injected] = []
    how = "none"
    if reason is None:
        before = sessions.load(inp.session_id)
        if before.exhausted:
            reason = "session budget used up"
        else:
            found, how = (hc.recaller or recall_for)(hc, prompt, before.surfaced)
    budget = MAX_CONTEXT_CHARS - len(RECALL_INTRO) - 2
    with sessions.update(inp.session_id) as state:
        notices = state.take_notices()
        injected = state.accept(found, max_chars=budget)
        used = state.used_bytes
    text = render_memories(injected)
    _log(
        hc,
        inp,
        started,
        via=how,
        skipped=reason,
        injected=[m.path for m in injected],
        chars=len(text),
        session_bytes=used,
        notice="; ".join(notices) or None,
        text=text,
    )
    return context_output(inp.event, text, system_message="; ".join(notices) or None)


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
    try:
        return path.read_text("utf-8")
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
        _log(hc, inp, started, skipped="memory disabled", source=inp.source)
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
    notes = session_notes(hc, inp.session_id) if inp.source == "compact" else ""
    if notes:
        parts.append(f"## Session notes (kept across the compaction)\n\n{notes}")
    if parts and not hc.settings.claude_mode:
        room = SESSION_START_CHARS - sum(len(p) + 2 for p in parts)
        index = _index_text(hc, room)
        if index:
            parts.insert(1, index)
    text = clip("\n\n".join(parts), SESSION_START_CHARS)
    _log(hc, inp, started, source=inp.source, chars=len(text), text=text)
    return context_output(inp.event, text)


# -- stop, pre-compact, session-end ---------------------------------------------------------


def stop(inp: HookInput, hc: HookContext) -> str:
    from memdir.adapters.claude_code.extraction import extraction_running

    started = time.perf_counter()
    mode = hc.extraction
    transcript = Path(inp.transcript_path) if inp.transcript_path else None
    if mode is None or inp.agent_id:
        _log(hc, inp, started, skipped="extraction off" if mode is None else "sub-agent")
        return ""
    if transcript is None or not transcript.is_file():
        _log(hc, inp, started, skipped=f"no transcript at {inp.transcript_path}")
        return ""
    sessions = hc.sessions
    if extraction_running(sessions, inp.session_id):
        with sessions.update(inp.session_id) as state:
            state.extract_pending = True
        _log(hc, inp, started, extraction="queued behind the running one")
        return ""
    _spawn_worker(hc, inp.session_id, transcript)
    _log(hc, inp, started, extraction=f"started ({mode})")
    return ""


def _spawn_worker(hc: HookContext, session_id: str, transcript: Path) -> None:
    import subprocess

    command = [*hc.worker_command, "--session", session_id, "--transcript", str(transcript)]
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
        )


def pre_compact(inp: HookInput, hc: HookContext) -> str:
    """Bring the session notes up to date (offline), so ``session-start`` with
    ``source=compact`` can put them back; the recall byte budget starts afresh (the old
    attachments leave the context) while the never-twice set stays."""
    started = time.perf_counter()
    with hc.sessions.update(inp.session_id) as state:
        state.used_bytes = 0
        state.compactions += 1
    _log(hc, inp, started, trigger=inp.trigger, notes=_update_notes(inp, hc))
    return ""  # PreCompact cannot add context


def _update_notes(inp: HookInput, hc: HookContext) -> str:
    if hc.settings.claude_mode:
        return "left to the host (its session memory owns that file in --claude mode)"
    transcript = Path(inp.transcript_path) if inp.transcript_path else None
    if transcript is None or not transcript.is_file():
        return f"no transcript at {inp.transcript_path}"
    from memdir.session import update_notes_from_transcript

    outcome = update_notes_from_transcript(transcript, hc.paths.session_memory_path(inp.session_id))
    if not outcome.ok:
        return f"not updated: {outcome.error}"
    return f"updated ({outcome.messages_covered} messages)" if outcome.changed else "unchanged"


def session_end(inp: HookInput, hc: HookContext) -> str:
    """Drain the extraction, catch up on turns it missed, push team memory when configured."""
    from memdir.adapters.claude_code.extraction import wait_idle

    started = time.perf_counter()
    done: dict[str, Any] = {"reason": inp.reason}
    sessions = hc.sessions
    done["drained"] = wait_idle(sessions, inp.session_id, DRAIN_SECONDS)
    transcript = Path(inp.transcript_path) if inp.transcript_path else None
    if done["drained"] and hc.extraction and transcript is not None and transcript.is_file():
        report = run_extraction(hc, inp.session_id, transcript)
        done["final_extraction_runs"] = report.runs
    done["team_push"] = _team_push(hc)
    done["dream"] = _dream_gate(hc, inp.session_id)
    _log(hc, inp, started, **done)
    return ""


def _dream_gate(hc: HookContext, session_id: str) -> str:
    """Check the dream gate (cheap when closed). This build has the gate and lock but no
    dreamer to run, so an open gate is reported for ``memdir hook log`` and left open."""
    from memdir.consolidate.factory import dream_gate

    result = dream_gate(hc.settings, hc.paths).check(current_session=session_id)
    if not result.open:
        return f"gate closed ({result.reason})"
    return f"gate open ({len(result.sessions)} sessions to review); no dreamer in this build"


def run_extraction(hc: HookContext, session_id: str, transcript: Path) -> Any:
    """The worker's body (also run inline at session end)."""
    from memdir.adapters.claude_code.extraction import run_worker

    return run_worker(
        store=hc.sessions,
        cache_dir=hc.cache_dir,
        memory_dir=hc.paths.memory_dir,
        session_id=session_id,
        transcript=transcript,
        make_extractor=hc.make_extractor or (lambda: default_extractor(hc)),
        include_meta=hc.extraction == "model",
    )


def default_extractor(hc: HookContext) -> Extractor:
    from memdir.store import MemoryStore
    from memdir.team.guard import team_secret_guard

    memory_dir = hc.paths.memory_dir
    store = MemoryStore(
        memory_dir,
        guards=[team_secret_guard(root=memory_dir)],
        header_cache=hc.cache_dir / "headers.json",
    )
    if hc.extraction == "model" and hc.settings.model:
        from memdir.extract.agent import AgentExtractor
        from memdir.llm.factory import provider_from_spec

        provider = provider_from_spec(hc.settings.model, hc.env)
        return AgentExtractor(provider, store, cwd=hc.paths.cwd)
    from memdir.extract.rule_extractor import RuleExtractor

    return RuleExtractor(store)


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


HANDLERS: dict[str, Callable[[HookInput, HookContext], str]] = {
    "session-start": session_start,
    "user-prompt-submit": user_prompt_submit,
    "stop": stop,
    "pre-compact": pre_compact,
    "session-end": session_end,
}


def env_flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = env.get(name, "").strip().lower()
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    return default
