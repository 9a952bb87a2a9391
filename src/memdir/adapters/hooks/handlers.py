"""The hook context, recall for ``user-prompt-submit``, and what the other hooks share.

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

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters import recall_client
from memdir.adapters.hooks import hooklog
from memdir.adapters.hooks.hookio import MAX_CONTEXT_CHARS, HookInput
from memdir.adapters.hooks.state import Injected, SessionStore
from memdir.errors import DaemonError, HookInputError
from memdir.prompt_context import RecallContext

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect
    from memdir.config import Settings
    from memdir.extract.base import Extractor
    from memdir.paths import ResolvedPaths

EVIDENCE_SECONDS = 0.15  # checking the picked memories (cached per HEAD: ~ms once checked)
RECALL_INTRO = "Memories that may be relevant to this prompt (from memdir; verify before relying):"
EXTRACT_MODES = ("auto", "rules", "model", "off")

# How a context recalls: (context, query, paths to exclude) -> (memories, how). The warm daemon
# passes its own (its engines are already loaded); everyone else uses :func:`recall_for`.
# (context, query, paths to skip, query context, session id) -> (memories, how they were found)
Recaller = Callable[["HookContext", str, list[str], RecallContext, str], tuple[list[Injected], str]]
# Inside the daemon, session-start warms the engine in place instead of spawning a daemon.
WarmUp = Callable[["HookContext"], None]


@dataclass
class HookContext:
    """Everything a handler needs, resolved by the CLI entry point."""

    settings: Settings
    paths: ResolvedPaths
    dialect: Dialect  # the host's way of saying things (memdir.adapters.hosts)
    env: Mapping[str, str] = field(default_factory=dict)
    use_daemon: bool = True
    daemon_idle: float = recall_client.DEFAULT_IDLE_SECONDS
    extract_mode: str = "auto"
    worker_command: list[str] = field(default_factory=list)  # argv that runs the worker
    make_extractor: Callable[[], Extractor] | None = None  # tests inject a scripted one
    recaller: Recaller | None = None
    warm_up: WarmUp | None = None
    # the forwarded request this daemon-side context answers (``fastpath``), and, in a hook
    # that stopped waiting for the daemon, the request it gave up on: that answer is taken back
    # (``SessionState.take_back``) so nobody's unread answer keeps a memory from the session
    request: str | None = None
    unanswered: str | None = None

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
            from memdir.adapters.hooks.hostmodel import background_spec

            return (
                "model" if background_spec(self.settings, self.dialect.model_provider) else "rules"
            )
        return mode


def should_recall(prompt: str) -> bool:
    """Single-word prompts ("yes", "continue") carry too little to recall on."""
    stripped = prompt.strip()
    return bool(stripped) and any(ch.isspace() for ch in stripped)


def log_event(hc: HookContext, inp: HookInput, started: float, **fields: Any) -> None:
    entry = {"session": inp.session_id, "event": inp.event, **fields}
    entry["ms"] = round((time.perf_counter() - started) * 1000, 1)
    if hc.warm_up is not None:
        entry["daemon"] = True  # answered by the warm daemon, no hook process start
    if hc.request is not None:
        entry["request"] = hc.request
    if hc.unanswered is not None:
        entry["replaces"] = hc.unanswered  # the daemon's answer this hook stopped waiting for
    hooklog.record(hc.cache_dir, entry)


# -- user-prompt-submit ---------------------------------------------------------------------


def _readable_transcript(inp: HookInput, hc: HookContext) -> Path | None:
    """The hook's transcript under the rule every hook reads it by (``transcript_file``)."""
    from memdir.adapters.hooks.transcript_file import checked_transcript

    try:
        return checked_transcript(inp.transcript_path, hc.dialect.transcript_roots(hc.env))
    except HookInputError:
        return None


def recall_in_process(
    hc: HookContext, query: str, exclude: list[str], context: RecallContext | None = None
) -> list[Injected]:
    from memdir.recall.warm import build_engine, recall_attachments

    provider = None
    if hc.settings.recall_selector == "llm":  # opted in: MEMDIR_MODEL, else the host model
        from memdir.adapters.hooks.hostmodel import background_provider

        provider = background_provider(
            hc.settings,
            hc.env,
            cwd=hc.paths.cwd,
            purpose="recall",
            provider=hc.dialect.model_provider,
        )
    if provider is not None:
        from memdir.recall.factory import build_recall

        engine = build_recall(hc.paths.memory_dir, hc.cache_dir, kind="llm", provider=provider)
    else:
        engine = build_engine(hc.paths.memory_dir, hc.cache_dir)
    found = recall_attachments(engine, query, exclude, 5, context=context)
    return [Injected.from_json(d) for d in found]


def recall_for(
    hc: HookContext, query: str, exclude: list[str], context: RecallContext, session_id: str
) -> tuple[list[Injected], str]:
    """(memories, how): from the warm daemon when possible, else in-process."""
    if hc.use_daemon and hc.settings.recall_selector != "llm":
        try:
            found = recall_client.recall(
                hc.socket,
                memory_dir=hc.paths.memory_dir,
                cache_dir=hc.cache_dir,
                query=query,
                exclude=exclude,
                context=context.to_json(),
            )
            return [Injected.from_json(d) for d in found], "daemon"
        except DaemonError:
            start_daemon(hc)
    return recall_in_process(hc, query, exclude, context), "in-process"


def start_daemon(hc: HookContext) -> None:
    if hc.warm_up is not None:
        hc.warm_up(hc)
        return
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


def user_prompt_submit(inp: HookInput, hc: HookContext, restart: str = "") -> str:
    """Recall for the prompt; ``restart`` (blocks a session start would give, after a
    compaction the host did not announce: ``lifecycle.after_host_compaction``) goes first."""
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
    if hc.unanswered:
        with sessions.update(inp.session_id) as state:
            state.take_back(hc.unanswered)
    if reason is None:
        before = sessions.load(inp.session_id)
        if before.exhausted:
            reason = "session budget used up"
        else:
            # recent turns, files, tools: the transcript tail, bounded (memdir.prompt_context)
            from memdir.adapters.hooks.host_transcript import recall_context

            context = recall_context(hc.dialect, _readable_transcript(inp, hc))
            recaller = hc.recaller or recall_for
            found, how = recaller(hc, prompt, before.surfaced, context, inp.session_id)
    found, evidence = with_evidence(hc, found)
    budget = MAX_CONTEXT_CHARS - len(RECALL_INTRO) - 2 - (len(restart) + 2 if restart else 0)
    with sessions.update(inp.session_id) as state:
        if hc.request is not None and hc.request in state.given_up:
            # the hook stopped waiting and answered this prompt itself: nobody reads this one
            hooklog.record(hc.cache_dir, {"session": inp.session_id, "event": "daemon-late"})
            return ""
        notices = state.take_notices()
        settled_at = state.settled_at
        late = state.take_settled(time.time()) if reason is None else []
        late = [m for m in late if os.path.isfile(m.path)]  # deleted since: not delivered
        injected = state.accept([*found, *late], max_chars=budget)
        used = state.used_bytes
        if hc.request is not None and (injected or notices or late):  # else nothing to undo
            state.record_answer(hc.request, injected, notices, late, settled_at)
    text = "\n\n".join(t for t in (restart, render_memories(injected)) if t)
    log_event(
        hc,
        inp,
        started,
        via=how,
        prompt=prompt,  # so `memdir ui` can show what was asked (hooklog cuts and redacts it)
        skipped=reason,
        injected=[m.path for m in injected],
        settled=[m.path for m in injected if m in late] or None,
        chars=len(text),
        session_bytes=used,
        notice="; ".join(notices) or None,
        evidence=evidence or None,
        text=text,
    )
    return hc.dialect.render(inp.event, text, "; ".join(notices) or None)


def with_evidence(
    hc: HookContext, found: list[Injected], budget: float = EVIDENCE_SECONDS
) -> tuple[list[Injected], dict[str, str]]:
    """``found`` checked against the repository (:mod:`memdir.evidence`): a memory that relies
    on something gone is replaced by a one-line note, one whose anchors changed or moved
    carries a caveat; and {path: verdict} of the memories that are not simply current."""
    from memdir.evidence.service import budget as evidence_budget
    from memdir.evidence.service import enabled

    if not found or not enabled(hc.env) or not hc.settings.auto_memory_enabled:
        return found, {}
    budget = evidence_budget(hc.env, budget)
    from memdir.evidence import screen

    out: list[Injected] = []
    states: dict[str, str] = {}
    paths = [m.path for m in found]
    screened = screen(paths, hc.paths.project_root, hc.cache_dir, budget=budget)
    if hc.warm_up is not None and any(
        "time budget" in " ".join(c.evidence.skipped) for c in screened
    ):
        # in the daemon: finish the check off the prompt path, so the next prompt has it cached
        root, cache = hc.paths.project_root, hc.cache_dir
        threading.Thread(
            target=screen, args=(paths, root, cache), kwargs={"budget": 30.0}, daemon=True
        ).start()
    for memory, checked in zip(found, screened, strict=True):
        ev = checked.evidence
        text = ev.shown(memory.content, Path(memory.filename).stem, memory.filename)
        if ev.held_back:  # the note stands alone, without the memory's header
            states[memory.path] = "held back"
            out.append(replace(memory, header=text, content="", truncated=False))
        elif text != memory.content:
            states[memory.path] = ev.state
            out.append(replace(memory, content=text))
        else:
            out.append(memory)
    return out, states


def env_flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = env.get(name, "").strip().lower()
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    return default
