"""Entry point: ``memdir [global options] <command> ...``. Returns a process exit code.

Exit codes: 0 success, 1 a check found problems (index check, doctor, secrets scan), 2 bad input
or any :class:`~memdir.errors.MemdirError`.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from memdir import __version__
from memdir.cli.context import CliContext
from memdir.cli.output import Output
from memdir.errors import MemdirError

Handler = Callable[[CliContext], int]

# Command groups: a module under ``memdir.cli`` exposing ``register(subparsers)`` (which sets
# ``handler`` defaults), listed with the command words it registers. Only the group owning the
# command being run is imported — hooks start a process on every prompt and must not load recall,
# team sync or the LLM layer to parse their arguments. ``--help`` or an unknown word loads all.
# tests/cli/test_main.py checks that each group registers exactly the words listed here.
_GROUPS: dict[str, tuple[str, ...]] = {
    "core_cmds": (
        *("where", "init", "list", "show", "add", "write", "edit", "rm", "mv"),
        *("index", "manifest", "prompt", "doctor"),
    ),
    "recall_cmd": ("recall", "reindex"),
    "stale_cmd": ("stale",),
    "extract_cmd": ("extract",),
    "backfill_cmd": ("backfill",),
    "mcp_cmd": ("mcp",),
    "secrets_cmd": ("secrets",),
    "team_cmd": ("team",),
    "demo_cmd": ("demo",),
    "session_cmd": ("compact", "session"),
    "dream_cmd": ("dream", "log", "retire"),
    "agent_cmd": ("agent",),
    "chat_cmd": ("chat",),
    "hook_cmd": ("hook",),
    "install_cmd": ("install", "uninstall"),
    "ui_cmd": ("ui",),
    "status_cmd": ("status",),
    "export_cmd": ("export",),
    "import_cmd": ("import",),
}
_GLOBAL_OPTIONS_WITH_VALUE = frozenset({"--dir", "--settings"})


def command_word(argv: Sequence[str]) -> str | None:
    """The sub-command word in ``argv`` (the first argument that is not a global option)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _GLOBAL_OPTIONS_WITH_VALUE:
            skip = True
        elif not arg.startswith("-"):
            return arg
        elif arg == "--":
            return None
    return None


def _groups_for(word: str | None) -> list[str]:
    owners = [name for name, words in _GROUPS.items() if word in words]
    return owners or list(_GROUPS)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command`` only that command's group is imported and registered."""
    parser = argparse.ArgumentParser(
        prog="memdir", description="Durable, file-based memory for LLM agents."
    )
    parser.add_argument(
        "--dir", type=Path, help="use this memory directory (relative to the working directory)"
    )
    parser.add_argument("--version", action="store_true", help="print memdir's version and exit")
    parser.add_argument("--settings", type=Path, help="an extra settings file (flag level)")
    parser.add_argument(
        "--claude",
        action="store_true",
        help="resolve paths like Claude Code (~/.claude/projects/<slug>/memory)",
    )
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", dest="json_mode", action="store_true", default=None)
    fmt.add_argument("--text", dest="json_mode", action="store_false")
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    for name in _groups_for(command):
        importlib.import_module(f"memdir.cli.{name}").register(sub)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    out_stream = stdout if stdout is not None else sys.stdout
    arguments = list(argv) if argv is not None else sys.argv[1:]
    bad = _not_utf8(arguments)
    if bad is not None:
        err = stderr if stderr is not None else sys.stderr
        err.write(f"memdir: error: argument {bad} is not valid UTF-8 text\n")
        return 2
    parser = build_parser(command_word(arguments))
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # argparse already printed the usage error
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
    json_mode = args.json_mode if args.json_mode is not None else not out_stream.isatty()
    out = Output(
        stdout=out_stream, stderr=stderr if stderr is not None else sys.stderr, json_mode=json_mode
    )
    if args.version:
        out.stdout.write(f"memdir {__version__}\n")
        return 0
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(out.stdout)
        return 2
    _route_library_warnings(out)
    ctx = CliContext(
        env=dict(os.environ) if env is None else env,
        cwd=cwd if cwd is not None else Path.cwd(),
        out=out,
        args=args,
    )
    try:
        return handler(ctx)
    except MemdirError as exc:
        out.error(str(exc))
        return 2
    except OSError as exc:  # one clear line, never a traceback (e.g. a full disk)
        where = f": {exc.filename}" if exc.filename else ""
        out.error(f"{exc.strerror or type(exc).__name__}{where}")
        return 2
    except KeyboardInterrupt:
        return 130


def _not_utf8(argv: Sequence[str]) -> str | None:
    """The first argument holding bytes that are not UTF-8 (surrogate-escaped), shown safely."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return ascii(arg)
    return None


def _route_library_warnings(out: Output) -> None:
    """Library warnings (e.g. a rebuilt cache) go to this command's stderr, one line each."""
    logger = logging.getLogger("memdir")
    for old in [h for h in logger.handlers if getattr(h, "_memdir_cli", False)]:
        logger.removeHandler(old)
    handler = logging.StreamHandler(out.stderr)
    handler.setFormatter(logging.Formatter("memdir: warning: %(message)s"))
    handler.setLevel(logging.WARNING)
    handler._memdir_cli = True  # type: ignore[attr-defined]
    logger.addHandler(handler)


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
