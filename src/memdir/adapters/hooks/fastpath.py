"""The hook fast path: forward every ``memdir hook <event>`` to the warm daemon.

A hook is a new process on every event. Loading the CLI (argparse, settings, dataclasses, the
handlers) costs more than the work of most events once the daemon is warm, so the console
script first tries this module, which imports only the standard library: it sends the hook's
stdin, cwd, global flags and environment to the daemon, which runs the very same
:func:`~memdir.adapters.hooks.runner.run_event` (see ``.forwarded``) and returns its
stdout and stderr. The whole environment goes along because the worker that ``stop`` starts
must see what the hook saw (PATH, PYTHONPATH, the model's key).

A daemon started moments ago (by ``session-start``) is waited for, briefly: loading the
recall engine a second time in this process, on the same cores, would only slow both down.

Anything unusual — flags it does not know, no daemon, a stale daemon, stdin that is not UTF-8,
``MEMDIR_HOOK_DAEMON=0`` — returns None and the full CLI runs instead, with stdin handed over
intact. One exception: when the daemon took an event with side effects (every event but the
prompt's recall) and did not answer in time, it is still working on it, so the hook ends with
nothing printed rather than doing the work a second time.
"""

from __future__ import annotations

import io
import os
import sys
import time

from memdir.adapters import recall_client
from memdir.errors import DaemonError, DaemonTimeoutError

# when this hook process began its own work (interpreter start is ~20 ms before): the daemon
# spends at most what is left of the prompt's budget from here (``forwarded.cold_wait``)
STARTED = time.time()
TYPE_CHECKING = False  # importing typing would cost every prompt
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

# seconds the daemon gets per event: under the host's own timeout for the hook (install.py);
# session-end drains the extraction (up to 30 s) before it answers
FORWARD_TIMEOUTS = {
    "user-prompt-submit": recall_client.DEFAULT_TIMEOUT,
    "session-start": 10.0,
    "stop": 10.0,
    "pre-compact": 50.0,
    "session-end": 50.0,
}
FORWARDED_EVENTS = frozenset(FORWARD_TIMEOUTS)
# how the full CLI learns which forwarded request it runs in place of (internal)
UNANSWERED_ENV = "MEMDIR_UNANSWERED_REQUEST"
_OFF = frozenset({"0", "false", "no", "off"})


def parse_argv(argv: Sequence[str], cwd: str) -> tuple[dict[str, Any], str] | None:
    """(global flags, event) for ``[flags] hook [--host <name>] <event>``; None otherwise."""
    flags: dict[str, Any] = {"dir": None, "settings": None, "claude": False, "host": None}
    args = list(argv)
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option in ("--dir", "--settings") and args:
            flags[option[2:]] = os.path.join(cwd, args.pop(0))
        elif option == "--claude":
            flags["claude"] = True
        elif option not in ("--json", "--text"):
            return None
    if len(args) == 4 and args[1] == "--host":  # hook --host <name> <event>
        flags["host"] = args.pop(2)
        args.pop(1)
    if len(args) != 2 or args[0] != "hook" or args[1] not in FORWARDED_EVENTS:
        return None
    return flags, args[1]


class Unanswered(Exception):
    """The daemon took a prompt and did not answer in time."""

    def __init__(self, request: str) -> None:
        super().__init__(f"no answer in time to request {request}")
        self.request = request


def _memdir_home(env: Mapping[str, str]) -> str | None:
    raw = env.get("MEMDIR_HOME", "")
    if raw:
        return raw if os.path.isabs(raw) else None
    home = env.get("HOME", "")
    return os.path.join(home, ".memdir") if os.path.isabs(home) else None


def forward(
    argv: Sequence[str], stdin: bytes, env: Mapping[str, str], cwd: str, request: str = ""
) -> tuple[str, str] | None:
    """(stdout, stderr) from the daemon, or None when the full CLI must run.

    Raises :class:`Unanswered` when the daemon took the prompt (``request``) and did not answer
    in time: it may still answer, and the full CLI must take back what that answer records.
    """
    parsed = parse_argv(argv, cwd)
    home = _memdir_home(env)
    if parsed is None or home is None or env.get("MEMDIR_HOOK_DAEMON", "").lower() in _OFF:
        return None
    flags, event = parsed
    try:
        text = stdin.decode("utf-8")
    except UnicodeDecodeError:
        return None
    sock = recall_client.socket_file(home)
    recall_client.wait_if_starting(sock)
    try:
        answer = recall_client.request(
            sock,
            {
                "op": "hook",
                "fingerprint": recall_client.fingerprint(),
                "event": event,
                "stdin": text,
                "cwd": cwd,
                "env": dict(env),
                "flags": flags,
                "request": request,
                "started": STARTED,
            },
            timeout=FORWARD_TIMEOUTS[event],
        )
    except DaemonTimeoutError:
        if event == "user-prompt-submit":
            raise Unanswered(request) from None  # recall only: the full CLI answers instead
        return "", f"memdir hook {event}: still running in the recall daemon\n"
    except DaemonError:  # absent or stale (then told to stop): the full CLI runs
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
    try:
        result = forward(argv, stdin, os.environ, os.getcwd(), os.urandom(8).hex())
    except Unanswered as gave_up:
        # the full CLI takes back what the daemon's unread answer records
        # (``SessionState.take_back``), or keeps it from recording
        os.environ[UNANSWERED_ENV] = gave_up.request
        result = None
    if result is None:
        # hand the bytes already read to the full CLI
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        return None
    sys.stdout.write(result[0])
    sys.stdout.flush()
    sys.stderr.write(result[1])
    return 0
