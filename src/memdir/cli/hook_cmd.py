"""``memdir hook [--host <name>] <event>``: every host's hooks; ``memdir hook log``; the daemon.

The event commands read the host's JSON on stdin and print the host's JSON answer. They never
fail the host: every problem — bad JSON, a missing transcript, a locked state file, a bug — ends
with exit 0, nothing injected, one ``memdir hook <event>: ...`` line on stderr and a record in
the hook log. This module is on the per-prompt path: it imports only what parsing needs and
loads each handler's dependencies inside it.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from memdir.adapters.hooks.dialect import EVENT_WORDS
from memdir.cli.context import CliContext
from memdir.cli.output import table

DAEMON_ACTIONS = ("status", "start", "stop", "run")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "hook",
        help="agent hosts' hooks: recall per prompt, extraction at stop, and their log",
        description="Run by the host: reads the hook's JSON on stdin, answers in its format.",
    )
    from memdir.adapters.hosts import DEFAULT, DIALECTS

    p.add_argument(
        "--host",
        choices=tuple(DIALECTS),
        default=DEFAULT,
        help="the host whose hook JSON this is (default: claude-code)",
    )
    events = p.add_subparsers(dest="hook_event", metavar="<event>", required=True)
    for word in EVENT_WORDS:
        e = events.add_parser(word, help=f"memdir's {word} event, in the host's JSON")
        e.set_defaults(handler=cmd_event)
    log = events.add_parser("log", help="show what the hooks injected and saved")
    log.add_argument("--session", help="only this session id")
    log.add_argument("--limit", type=int, default=20)
    log.add_argument("--full", action="store_true", help="print the injected text too")
    log.set_defaults(handler=cmd_log)
    d = events.add_parser("daemon", help="the per-user recall daemon (status, start, stop, run)")
    d.add_argument("action", choices=DAEMON_ACTIONS)
    d.add_argument("--idle", type=float, default=None, help="seconds idle before it exits")
    d.set_defaults(handler=cmd_daemon)
    w = events.add_parser("extract-worker")  # internal: no help, so not listed
    w.add_argument("--session", required=True)
    w.add_argument("--transcript", type=Path, required=True)
    w.set_defaults(handler=cmd_worker)
    n = events.add_parser("notes-worker")  # internal: the model's session-notes update
    n.add_argument("--session", required=True)
    n.add_argument("--transcript", type=Path, required=True)
    n.set_defaults(handler=cmd_notes_worker)
    dw = events.add_parser("dream-worker")  # internal: the model dream at session end
    dw.add_argument("--session", required=True)
    dw.set_defaults(handler=cmd_dream_worker)
    pi = events.add_parser("plugin-info")  # internal: what OpenCode's plugin needs to forward
    pi.set_defaults(handler=cmd_plugin_info)
    ew = events.add_parser("end-worker")  # internal: the session's end, off the host's wait
    ew.add_argument("--session", required=True)
    ew.add_argument("--transcript", type=Path, default=None)
    ew.add_argument("--reason", default=None)
    ew.set_defaults(handler=cmd_end_worker)


def hook_flags(ctx: CliContext) -> Any:
    from memdir.adapters.hooks.runner import HookFlags

    args = ctx.args
    memory_dir = getattr(args, "dir", None)
    settings = getattr(args, "settings", None)
    return HookFlags(
        memory_dir=Path(memory_dir).absolute() if memory_dir is not None else None,
        settings=Path(settings).absolute() if settings is not None else None,
        claude=bool(getattr(args, "claude", False)),
        host=getattr(args, "host", None) or "claude-code",
    )


def hook_context(ctx: CliContext, cwd: Path | None = None) -> Any:
    """The handlers' context for ``cwd`` (default: the command's), settings read here."""
    from memdir.adapters.hooks.runner import make_context

    flags = hook_flags(ctx)
    return make_context(ctx.env, cwd or ctx.cwd, flags, _dialect(flags.host))


def _dialect(name: str) -> Any:
    from memdir.adapters.hosts import dialect

    return dialect(name)


def _read_stdin() -> bytes:
    stream = sys.stdin
    if stream is None or stream.isatty():
        return b""
    return stream.buffer.read(4 * 1024 * 1024 + 1)


def _quiet_library_warnings() -> None:
    # Warnings would add stderr lines the host shows; the hook log has the record instead.
    for handler in logging.getLogger("memdir").handlers:
        if getattr(handler, "_memdir_cli", False):
            handler.setLevel(logging.ERROR)


def cmd_event(ctx: CliContext) -> int:
    from memdir.adapters.hooks.hostmodel import is_child
    from memdir.adapters.hooks.runner import fallback_cache, run_event

    if is_child(ctx.env):  # a CLI memdir itself started: no recursion, no log rows
        return 0
    _quiet_library_warnings()
    stdout, stderr = run_event(
        ctx.args.hook_event,
        _read_stdin(),
        _dialect(hook_flags(ctx).host),
        lambda cwd: hook_context(ctx, cwd),
        lambda: fallback_cache(lambda: ctx.paths.cache_dir, ctx.env),
    )
    ctx.out.stdout.write(stdout)
    ctx.out.stdout.flush()
    ctx.out.stderr.write(stderr)
    return 0


def cmd_log(ctx: CliContext) -> int:
    from memdir.adapters.hooks import hooklog
    from memdir.config import memdir_home_from_env
    from memdir.errors import ConfigError

    a = ctx.args
    home = memdir_home_from_env(ctx.env)
    broken = None
    try:
        cache_dir = ctx.paths.cache_dir
    except ConfigError as exc:  # the log is how the user learns why memory stopped: show it
        broken, cache_dir = str(exc), hooklog.unresolved_cache(home)
        ctx.out.warn(f"{broken}; the hooks' own record of it follows")
    rows = hooklog.read_all(cache_dir, home, session=a.session, limit=a.limit)
    if ctx.out.json_mode:
        ctx.out.data(rows)
        return 0
    if not rows:
        ctx.out.data([], f"(no hook activity logged in {hooklog.log_path(cache_dir)})")
        return 0
    lines = [table([_summary(r) for r in rows], ["time", "session", "event", "ms", "what"])]
    if broken is None:
        lines.append(_spend_line(ctx, a.session))
    if a.full:
        for r in rows:
            if r.get("text"):
                lines += ["", f"--- {r.get('event')} {_time(r)} ---", str(r["text"])]
    ctx.out.data(rows, "\n".join(lines))
    return 0


def _spend_line(ctx: CliContext, session: str | None) -> str:
    """Today's host-model spend (and this session's, when one is asked for)."""
    from memdir.adapters.hooks.hostmodel import host_ledger

    ledger = host_ledger(ctx.settings)
    today = ledger.spend()
    line = (
        f"host model today: ${today.cost_usd:.4f} in {today.calls} calls "
        f"(budget ${ctx.settings.host_model_budget_usd:.2f})"
    )
    if session:
        mine = ledger.spend(session=session)
        line += f"; this session: ${mine.cost_usd:.4f} in {mine.calls} calls"
    return "\n" + line


def _time(row: dict[str, Any]) -> str:
    import time

    ts = row.get("ts")
    return time.strftime("%H:%M:%S", time.localtime(ts)) if isinstance(ts, int | float) else ""


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    what: list[str] = []
    if row.get("error"):
        what.append(f"error: {row['error']}")
    if row.get("skipped"):
        what.append(f"skipped: {row['skipped']}")
    injected = row.get("injected") or []
    if injected:
        names = ", ".join(Path(p).name for p in injected)
        what.append(f"injected {len(injected)} ({names}) via {row.get('via')}")
    elif row.get("event") == "user-prompt-submit" and not row.get("skipped"):
        what.append(f"nothing relevant (via {row.get('via')})")
    for key in ("notice", "extraction", "source", "trigger", "reason", "rules"):
        if row.get(key):
            what.append(f"{key}: {row[key]}")
    if row.get("event") == "extract" and row.get("written"):
        what.append("wrote " + ", ".join(Path(p).name for p in row["written"]))
    if row.get("event") == "notes" and row.get("ok"):
        what.append("notes updated by the model" if row.get("changed") else "notes unchanged")
    if row.get("fallback"):
        what.append(str(row["fallback"]))
    if isinstance(row.get("cost_usd"), int | float):
        tokens = f"{row.get('input_tokens', 0)}+{row.get('output_tokens', 0)} tokens"
        what.append(f"model ${row['cost_usd']:.4f} ({tokens})")
    session = str(row.get("session") or "")
    return {
        "time": _time(row),
        "session": session[:8],
        "event": row.get("event"),
        "ms": row.get("ms"),
        "what": "; ".join(what),
    }


def cmd_daemon(ctx: CliContext) -> int:
    from memdir.adapters import recall_client
    from memdir.errors import DaemonError

    sock = recall_client.socket_path(ctx.settings.memdir_home)
    action = ctx.args.action
    from memdir.adapters.hooks.runner import daemon_idle

    idle = ctx.args.idle if ctx.args.idle is not None else daemon_idle(ctx.env)
    if action == "run":
        from memdir.adapters.recall_daemon import serve

        return serve(sock, idle_seconds=idle)
    try:
        if action == "stop":
            recall_client.request(sock, {"op": "stop"}, timeout=2.0)
            ctx.out.data({"stopped": True, "socket": str(sock)}, "recall daemon stopped")
            return 0
        if action == "start":
            recall_client.spawn(sock, idle_seconds=idle)
            _wait_for(sock)
        status = recall_client.request(sock, {"op": "status"}, timeout=2.0)
    except DaemonError as exc:
        ctx.out.data({"running": False, "socket": str(sock), "reason": str(exc)}, str(exc))
        return 1 if action != "stop" else 0
    status = {"running": True, "socket": str(sock), **status}
    status.pop("ok", None)
    ctx.out.data(status)
    return 0


def _wait_for(sock: Path, timeout: float = 30.0) -> None:
    import time

    from memdir.adapters import recall_client
    from memdir.errors import DaemonError

    deadline = time.monotonic() + timeout
    while True:
        try:
            recall_client.request(sock, {"op": "status"}, timeout=1.0)
            return
        except DaemonError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def cmd_worker(ctx: CliContext) -> int:
    from memdir.adapters.hooks.lifecycle import run_extraction

    hc = hook_context(ctx)
    report = run_extraction(hc, ctx.args.session, ctx.args.transcript)
    ctx.out.data({"runs": report.runs, "saved": report.saved, "skipped": report.skipped})
    return 0


def cmd_notes_worker(ctx: CliContext) -> int:
    from memdir.adapters.hooks.notes_worker import run_notes_worker

    row = run_notes_worker(hook_context(ctx), ctx.args.session, ctx.args.transcript)
    ctx.out.data(row)
    return 0


def cmd_end_worker(ctx: CliContext) -> int:
    from memdir.adapters.hooks.end_worker import run_end_worker

    args = ctx.args
    ctx.out.data(run_end_worker(hook_context(ctx), args.session, args.transcript, args.reason))
    return 0


def cmd_dream_worker(ctx: CliContext) -> int:
    from memdir.adapters.hooks.dream_worker import run_dream_worker

    ctx.out.data(run_dream_worker(hook_context(ctx), ctx.args.session))
    return 0


def cmd_plugin_info(ctx: CliContext) -> int:
    """The daemon socket, this build's fingerprint and where session files go: a plugin running
    inside its host (OpenCode) forwards events itself and asks once per host process."""
    import json

    from memdir.adapters.hosts.opencode import plugin_info

    ctx.out.stdout.write(json.dumps(plugin_info(ctx.env)) + "\n")
    return 0
