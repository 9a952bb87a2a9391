"""The per-prompt fast path: forward ``memdir hook user-prompt-submit`` to the warm daemon.

A hook is a new process on every prompt. Loading the CLI (argparse, settings, dataclasses, the
handlers) costs more than the recall itself once the daemon is warm, so the console script
first tries this module, which imports only the standard library: it sends the hook's stdin,
cwd, global flags and the environment variables that decide settings to the daemon, which runs
the very same :func:`~memdir.adapters.claude_code.runner.run_event` and returns its stdout and
stderr. Anything unusual — another event, flags it does not know, no daemon, a stale daemon,
stdin that is not UTF-8, ``MEMDIR_HOOK_DAEMON=0`` — returns None and the full CLI runs instead,
with stdin handed over intact.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

from memdir.adapters import recall_client
from memdir.errors import DaemonError

TYPE_CHECKING = False  # importing typing would cost every prompt
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

FORWARDED_EVENTS = frozenset({"user-prompt-submit"})
_ENV_PREFIXES = ("MEMDIR_", "CLAUDE_", "ANTHROPIC_", "OPENAI_", "XDG_")
_ENV_NAMES = frozenset(
    {"HOME", "USER", "LOGNAME", "PATH", "APPDATA", "TMPDIR", "TEAM_MEMORY_SYNC_URL"}
)
_OFF = frozenset({"0", "false", "no", "off"})


def parse_argv(argv: Sequence[str], cwd: str) -> tuple[dict[str, Any], str] | None:
    """(global flags, event) for ``[flags] hook <event>``; None for anything else."""
    flags: dict[str, Any] = {"dir": None, "settings": None, "claude": False}
    args = list(argv)
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option in ("--dir", "--settings") and args:
            flags[option[2:]] = os.path.join(cwd, args.pop(0))
        elif option == "--claude":
            flags["claude"] = True
        elif option not in ("--json", "--text"):
            return None
    if len(args) != 2 or args[0] != "hook" or args[1] not in FORWARDED_EVENTS:
        return None
    return flags, args[1]


def _memdir_home(env: Mapping[str, str]) -> Path | None:
    raw = env.get("MEMDIR_HOME", "")
    if raw:
        return Path(raw) if os.path.isabs(raw) else None
    home = env.get("HOME", "")
    return Path(home) / ".memdir" if os.path.isabs(home) else None


def forward(
    argv: Sequence[str], stdin: bytes, env: Mapping[str, str], cwd: str
) -> tuple[str, str] | None:
    """(stdout, stderr) from the daemon, or None when the full CLI must run."""
    parsed = parse_argv(argv, cwd)
    home = _memdir_home(env)
    if parsed is None or home is None or env.get("MEMDIR_HOOK_DAEMON", "").lower() in _OFF:
        return None
    flags, event = parsed
    try:
        text = stdin.decode("utf-8")
    except UnicodeDecodeError:
        return None
    forwarded = {k: v for k, v in env.items() if k in _ENV_NAMES or k.startswith(_ENV_PREFIXES)}
    sock = recall_client.socket_path(home)
    try:
        answer = recall_client.request(
            sock,
            {
                "op": "hook",
                "fingerprint": recall_client.fingerprint(),
                "event": event,
                "stdin": text,
                "cwd": cwd,
                "env": forwarded,
                "flags": flags,
            },
        )
    except DaemonError:  # absent, slow or stale (then told to stop): the full CLI runs
        return None
    stdout, stderr = answer.get("stdout"), answer.get("stderr")
    if not isinstance(stdout, str) or not isinstance(stderr, str):
        return None
    return stdout, stderr


def try_forward(argv: Sequence[str]) -> int | None:
    """The console script's first step: an exit code if the daemon answered, else None."""
    if parse_argv(argv, os.getcwd()) is None:
        return None
    if os.environ.get("MEMDIR_CHILD", "").strip() == "1":
        return 0  # a CLI memdir itself started (memdir.llm.claude_code): its hooks do nothing
    stdin = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
    result = forward(argv, stdin, os.environ, os.getcwd())
    if result is None:
        # hand the bytes already read to the full CLI
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        return None
    sys.stdout.write(result[0])
    sys.stdout.flush()
    sys.stderr.write(result[1])
    return 0
