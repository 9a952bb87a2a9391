"""Hook events the fast path forwarded, answered inside the warm recall daemon.

Every hook event is a new process; a full CLI start costs far more than the work of most events.
The console script's fast path (:mod:`.fastpath`) sends the event's stdin, cwd, flags and
environment to the daemon, which runs the very same :func:`~.runner.run_event` here and returns
its stdout and stderr — so an answer is byte-identical to the full CLI's. The only differences
are where recall's engine comes from (the daemon's warm ones) and that ``session-start`` warms
that engine in place instead of spawning a daemon.

This is the one place the daemon reaches into the hooks: the daemon imports this module, the
hooks never import the daemon (they talk to it over the socket through ``recall_client``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks import hooklog
from memdir.adapters.hooks.handlers import HookContext, recall_in_process
from memdir.adapters.hooks.runner import (
    HANDLERS,
    HookFlags,
    cache_dir_for,
    fallback_cache,
    make_context,
    run_event,
)
from memdir.adapters.hooks.state import Injected
from memdir.errors import ConfigError, MemdirError
from memdir.prompt_context import RecallContext
from memdir.recall.warm import WarmRecall

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect

# A person is waiting: the whole prompt hook, process start included, stays within this many
# seconds of the hook's start. A daemon that session start launched moments ago is loading its
# engine (about 0.3-0.5 s from spawn); waiting for it inside this budget gives the first prompt
# the warm answer itself (issue #37: answering at once left the prompt that states the task
# without recall, and a one-shot ``codex exec`` / ``gemini -p`` never got any).
ATTENDED_BUDGET = 0.45
# ... except while the memory dir has no index anywhere (a fresh install, a dir never recalled
# from): its first load reads every memory, about 0.5 s more for 200, once per dir. The first
# prompt then waits up to this long for it rather than going without (``memdir install`` and
# ``memdir import`` build the index ahead: see ``recall_prepare``).
FIRST_BUILD_BUDGET = 1.5
# Nobody is (``claude -p``): wait for the load, under the hook client's own timeout.
UNATTENDED_COLD_WAIT = 4.0


def cold_wait(
    env: Mapping[str, str],
    dialect: Dialect | None = None,
    started: float | None = None,
    *,
    first_build: bool = False,
) -> float:
    """Seconds a prompt waits for a daemon still loading its engine.

    ``MEMDIR_RECALL_COLD_WAIT`` when set. Otherwise it depends on whether a person is waiting:
    the host's dialect says when nobody attends the session (Claude Code marks ``claude -p``
    and the SDK with ``CLAUDE_CODE_SESSION_ATTENDED=0``); such a run waits for the load.
    Any other prompt waits for what is left of :data:`ATTENDED_BUDGET` since the hook process
    began (``started``, a ``time.time()`` the fast path sends), or of
    :data:`FIRST_BUILD_BUDGET` when the dir has no index yet (``first_build``). Past the wait
    the prompt goes without recall and what recall finds is delivered with the session's next
    prompt — the exception now, measured in docs/benchmarks.md ("Cold first prompt").
    """
    raw = env.get("MEMDIR_RECALL_COLD_WAIT", "").strip()
    if not raw:
        if dialect is not None and dialect.unattended(env):
            return UNATTENDED_COLD_WAIT
        budget = FIRST_BUILD_BUDGET if first_build else ATTENDED_BUDGET
        if started is None:
            return budget / 2  # a caller that cannot say when the hook began
        return min(budget, max(0.0, started + budget - time.time()))
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"MEMDIR_RECALL_COLD_WAIT={raw!r}: a number of seconds") from None
    if not 0 <= value <= 60:
        raise ConfigError(f"MEMDIR_RECALL_COLD_WAIT={raw!r}: between 0 and 60 seconds")
    return value


def serve_hook(
    body: dict[str, Any], warm: WarmRecall, lookup: Callable[[str], Dialect]
) -> dict[str, Any]:
    """``{"stdout", "stderr"}`` of the forwarded event, or ``{"ok": False, "error"}``;
    ``lookup`` finds the dialect the hook named (the daemon passes the hosts' registry)."""
    env, cwd, raw = body.get("env"), body.get("cwd"), body.get("stdin")
    flags = body.get("flags") or {}
    event = body.get("event")
    if not (isinstance(env, dict) and isinstance(cwd, str) and isinstance(raw, str)):
        return {"ok": False, "error": "a hook request needs env, cwd and stdin"}
    if event not in HANDLERS or not isinstance(flags, dict):
        return {"ok": False, "error": f"no hook event {event!r}"}
    host = flags.get("host") or "claude-code"
    try:
        dialect = lookup(str(host))
    except MemdirError as exc:
        return {"ok": False, "error": str(exc)}
    hook_flags = HookFlags(
        memory_dir=Path(flags["dir"]) if flags.get("dir") else None,
        settings=Path(flags["settings"]) if flags.get("settings") else None,
        claude=bool(flags.get("claude")),
        host=dialect.name,
    )

    def recaller(
        hc: HookContext, query: str, exclude: list[str], context: RecallContext, session: str
    ) -> tuple[list[Injected], str]:
        if hc.settings.recall_selector == "llm" and hc.settings.model:
            return recall_in_process(hc, query, exclude), "daemon (llm selector)"
        memory_dir, cache_dir = str(hc.paths.memory_dir), str(hc.cache_dir)
        first = warm.first_build(memory_dir, cache_dir)
        wait = cold_wait(hc.env, hc.dialect, started, first_build=first)
        if not warm.ready(memory_dir, cache_dir, wait):
            args = (memory_dir, cache_dir, query, exclude, 5, context)
            threading.Thread(target=settle, args=(hc, session, args), daemon=True).start()
            return [], "daemon (still loading: recall settles for the next prompt)"
        found = warm.recall(memory_dir, cache_dir, query, exclude, 5, context)
        return [Injected.from_json(d) for d in found], "daemon"

    def settle(hc: HookContext, session: str, args: tuple[Any, ...]) -> None:
        """Recall for a prompt already answered; the session's next prompt delivers it."""
        row: dict[str, Any] = {"session": session, "event": "recall-settled"}
        try:
            found = [Injected.from_json(d) for d in warm.recall(*args)]
            with hc.sessions.update(session) as state:
                state.settled, state.settled_at = found, time.time()
            row["found"] = [m.path for m in found]
        except Exception as exc:  # a background thread: report it where the hooks report
            row["error"] = " ".join(str(exc).split()) or type(exc).__name__
        hooklog.record(hc.cache_dir, row)

    def warm_up(hc: HookContext) -> None:
        warm.ready(str(hc.paths.memory_dir), str(hc.cache_dir), 0)  # starts the load, no wait

    home = Path(cwd)
    started = body.get("started")
    started = float(started) if isinstance(started, (int, float)) else None
    request = body.get("request")
    request = request if isinstance(request, str) and request else None
    stdout, stderr = run_event(
        str(event),
        raw.encode("utf-8"),
        dialect,
        lambda c: replace(
            make_context(env, c or home, hook_flags, dialect, recaller=recaller, warm_up=warm_up),
            request=request,
        ),
        lambda: fallback_cache(lambda: cache_dir_for(env, home, hook_flags), env),
    )
    return {"stdout": stdout, "stderr": stderr}
