"""Run one hook event from raw stdin to (stdout, stderr), wherever it runs.

The same function serves ``memdir hook <event>`` in a fresh process and the warm recall daemon
answering a forwarded event (:mod:`.forwarded`), so both print byte-identical answers. Invariant:
:func:`run_event` never raises — bad JSON, broken settings, a locked state file or a bug all end
as ``("", "memdir hook <event>: <one line>\\n")`` plus a record in the hook log.

Settings are resolved here from an injected env mapping and cwd (this is an entry point).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.adapters import recall_client
from memdir.adapters.hooks import hooklog, lifecycle, shown
from memdir.adapters.hooks.fastpath import UNANSWERED_ENV
from memdir.adapters.hooks.handlers import (
    EXTRACT_MODES,
    HookContext,
    Recaller,
    WarmUp,
    env_flag,
    log_event,
    user_prompt_submit,
)
from memdir.adapters.hooks.hookio import HookInput, read_body
from memdir.adapters.hooks.session_start import pending_start, session_start
from memdir.errors import ConfigError

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect
    from memdir.config import Settings
    from memdir.paths import ResolvedPaths


def _once_per_turn(handler: Callable[[HookInput, HookContext], str]) -> Callable[..., str]:
    """A host that fires an event again for the same turn (Qwen Code's prompt hook on each
    tool-result continuation, Antigravity's PreInvocation on each model call) says so with
    ``HookInput.turn``: the first call is answered, the others are not."""

    def once(inp: HookInput, hc: HookContext) -> str:
        if inp.turn is not None and not _claim_turn(inp, hc):
            log_event(hc, inp, time.perf_counter(), skipped="answered already for this turn")
            return ""
        return handler(inp, hc)

    return once


def _prompt(inp: HookInput, hc: HookContext) -> str:
    # a deferred session start first (its claim sees the context as the host resumed it), then
    # what a compaction the host recorded took out: each block lands once between them
    start = pending_start(inp, hc)
    restart = lifecycle.after_host_compaction(inp, hc)
    return user_prompt_submit(inp, hc, "\n\n".join(t for t in (start, restart) if t))


def _check_memory_dir(memory_dir: Path) -> None:
    """A memory dir that is not a directory gives the host nothing at all: not even the
    instructions, which would tell the model to save memories where none can be."""
    if memory_dir.exists() and not memory_dir.is_dir():
        raise ConfigError(
            f"the memory dir {memory_dir} is not a directory; memory is off until it is moved "
            "aside (`memdir doctor` says more)"
        )


def fallback_cache(resolve: Callable[[], Path], env: Mapping[str, str]) -> Path:
    """The project's cache dir from the settings, else (the settings themselves are broken)
    the unresolved one, so the error still leaves its row in the hook log."""
    from memdir.config import memdir_home_from_env

    try:
        return resolve()
    except ConfigError:
        return hooklog.unresolved_cache(memdir_home_from_env(env))


def _with_transcript(inp: HookInput, hc: HookContext) -> HookInput:
    """A host that names its transcript only at some events (Copilot CLI: at the turn's end)
    says where a session's is with the optional ``session_transcript(session_id, env)``."""
    finder = getattr(hc.dialect, "session_transcript", None)
    if inp.transcript_path is not None or finder is None:
        return inp
    found = finder(inp.session_id, hc.env)
    return replace(inp, transcript_path=str(found)) if found is not None else inp


def _claim_turn(inp: HookInput, hc: HookContext) -> bool:
    assert inp.turn is not None
    with hc.sessions.update(inp.session_id) as state:
        return state.claim_turn(inp.turn)


HANDLERS: dict[str, Callable[[HookInput, HookContext], str]] = {
    "session-start": _once_per_turn(session_start),
    "user-prompt-submit": _once_per_turn(_prompt),
    "stop": lifecycle.stop,
    "pre-compact": lifecycle.pre_compact,
    "session-end": lifecycle.session_end,
}


@dataclass(frozen=True)
class HookFlags:
    """The global CLI flags that change what memory a hook sees."""

    memory_dir: Path | None = None
    settings: Path | None = None
    claude: bool = False
    host: str = "claude-code"  # the dialect's name; the hook's own option, not a global flag

    def argv(self) -> list[str]:
        out: list[str] = []
        if self.memory_dir is not None:
            out += ["--dir", str(self.memory_dir)]
        if self.settings is not None:
            out += ["--settings", str(self.settings)]
        if self.claude:
            out.append("--claude")
        return out

    def hook_argv(self) -> list[str]:
        """The options of ``memdir hook`` itself, before the event word."""
        return [] if self.host == "claude-code" else ["--host", self.host]


def daemon_idle(env: Mapping[str, str]) -> float:
    raw = env.get("MEMDIR_DAEMON_IDLE", "").strip()
    if not raw:
        return recall_client.DEFAULT_IDLE_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ConfigError(f"MEMDIR_DAEMON_IDLE={raw!r}: give the idle timeout in seconds (> 0)")
    return value


def _settings_and_paths(
    env: Mapping[str, str], cwd: Path, flags: HookFlags
) -> tuple[Settings, ResolvedPaths]:
    from memdir.config import load_settings
    from memdir.paths import resolve_paths

    settings = load_settings(
        env,
        cwd=cwd,
        flag_settings=flags.settings,
        claude_mode=flags.claude,
        memory_dir_flag=flags.memory_dir,
    )
    return settings, resolve_paths(settings, cwd=cwd)


def cache_dir_for(env: Mapping[str, str], cwd: Path, flags: HookFlags) -> Path:
    """The cache dir (hook log, state) from the settings alone: a bad hook-only setting such
    as ``MEMDIR_HOOK_EXTRACT`` must still leave its record in the log."""
    return _settings_and_paths(env, cwd, flags)[1].cache_dir


def make_context(
    env: Mapping[str, str],
    cwd: Path,
    flags: HookFlags,
    dialect: Dialect,
    *,
    recaller: Recaller | None = None,
    warm_up: WarmUp | None = None,
) -> HookContext:
    """Resolve settings and paths for a hook running in ``cwd`` with ``env``."""
    mode = env.get("MEMDIR_HOOK_EXTRACT", "auto").strip().lower() or "auto"
    if mode not in EXTRACT_MODES:
        raise ConfigError(f"MEMDIR_HOOK_EXTRACT={mode!r}: choose {', '.join(EXTRACT_MODES)}")
    settings, paths = _settings_and_paths(env, cwd, flags)
    hook = ["hook", *flags.hook_argv()]
    worker = [sys.executable, "-m", "memdir", *flags.argv(), *hook, "extract-worker"]
    return HookContext(
        settings=settings,
        paths=paths,
        dialect=dialect,
        env=env,
        use_daemon=env_flag(env, "MEMDIR_HOOK_DAEMON", True),
        daemon_idle=daemon_idle(env),
        extract_mode=mode,
        worker_command=worker,
        recaller=recaller,
        warm_up=warm_up,
        unanswered=env.get(UNANSWERED_ENV) or None,
    )


def run_event(
    event: str,
    raw: bytes,
    dialect: Dialect,
    build: Callable[[Path | None], HookContext],
    fallback_cache: Callable[[], Path],
) -> tuple[str, str]:
    """(stdout, stderr) of ``memdir hook <event>`` for stdin ``raw``; never raises.

    ``build(cwd)`` makes the context for the cwd the host sent (None: the process's own).
    """
    cache_dir: Path | None = None
    session = None
    try:
        inp = dialect.parse(event, read_body(raw))
        session = inp.session_id
        cwd = Path(inp.cwd) if inp.cwd and Path(inp.cwd).is_dir() else None
        hc = build(cwd)
        cache_dir = hc.cache_dir
        _check_memory_dir(hc.paths.memory_dir)
        inp = _with_transcript(inp, hc)
        text = HANDLERS[event](inp, hc)
        lifecycle.refresh_host_files(hc, session, event)
        return (text + "\n" if text else ""), ""
    except Exception as exc:  # the host must never see a traceback or a failed hook
        message = " ".join(str(exc).split()) or type(exc).__name__
        if cache_dir is None:
            with contextlib.suppress(Exception):  # e.g. the settings themselves are broken
                cache_dir = fallback_cache()
        if cache_dir is not None:
            row = {"session": session, "event": event, "error": message}
            if dialect.name != "claude-code":
                row["host"] = dialect.name
            hooklog.record(cache_dir, row)
        show = True
        with contextlib.suppress(Exception):
            show = shown.should_show(cache_dir, session, event, message)
        if not show:
            return "", ""  # shown once this prompt already; the log has this event's row
        return "", f"memdir hook {event}: {message}\n"
