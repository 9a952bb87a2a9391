"""Entry point: ``memdir [global options] <command> ...``. Returns a process exit code.

Exit codes: 0 success, 1 a check found problems (index check, doctor, secrets scan), 2 bad input
or any :class:`~memdir.errors.MemdirError`.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from memdir import __version__
from memdir.cli import (
    core_cmds,
    demo_cmd,
    extract_cmd,
    mcp_cmd,
    recall_cmd,
    secrets_cmd,
    team_cmd,
)
from memdir.cli.context import CliContext
from memdir.cli.output import Output
from memdir.errors import MemdirError

Handler = Callable[[CliContext], int]

# Each command-group module exposes ``register(subparsers)`` and sets ``handler`` defaults.
_GROUPS = [core_cmds, recall_cmd, extract_cmd, mcp_cmd, secrets_cmd, team_cmd, demo_cmd]


def build_parser() -> argparse.ArgumentParser:
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
    for group in _GROUPS:
        group.register(sub)
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
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
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
    except KeyboardInterrupt:
        return 130


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
