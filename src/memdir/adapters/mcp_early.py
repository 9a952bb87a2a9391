"""Answer the MCP handshake before the MCP SDK has loaded, so ``memdir mcp`` is ready at once.

A host that starts ``memdir mcp`` waits for the answers to ``initialize`` and then
``tools/list`` (and ``prompts/list``, ``resources/list``) before the server counts as connected;
importing the official SDK alone takes about a second on two shared cores. Those answers do not
depend on the memory dir: they are what the SDK itself answers, recorded per protocol version
in ``mcp_manifest.json`` (package data). ``tests/integration/test_mcp_early.py`` fails when the
SDK's own answers drift from it; ``python scripts/mcp-manifest.py`` rewrites it.

How, without touching the SDK: before it loads, fds 0 and 1 are replaced by pipes and two relay
threads stand between the real stdin/stdout and the SDK.
- inbound: each message goes on to the SDK unchanged (so its session state is exactly as if
  it had answered everything); a handshake request the manifest covers is also answered at
  once, and its id remembered;
- outbound: the SDK's own answer to a remembered id is dropped (the client already has the same
  answer); everything else goes out unchanged, one line per message.
The SDK is imported only when a request arrives that the manifest does not answer (a tool call, a
resource read): a session whose agent never calls a memory tool never pays the SDK's second of CPU,
which would otherwise compete with the host on the same cores. Until then the relayed messages wait
in the pipe. When the host closes stdin, the process ends as soon as nothing is owed (every
request answered): at once when nothing was, else once the SDK has answered what it owes (up to
:data:`DRAIN_SECONDS`; the SDK alone, handed the EOF, may drop a call still running). A host that
stops its servers by closing stdin would otherwise wait for the SDK to finish loading only to see
it exit. Any message the relays cannot parse passes through untouched; a
handshake request the manifest does not cover (a paginated list) is left to the SDK. A
``server/discover`` probe that comes before ``initialize`` is refused at once ("method not found")
and not handed on, so the client and the SDK both use the handshake the manifest answers, instead
of the client waiting for the SDK to load (Claude Code 2.1 waits about 3 s).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path
from typing import Any, BinaryIO

MANIFEST = Path(__file__).with_name("mcp_manifest.json")
LISTS = ("tools/list", "prompts/list", "resources/list")
DISCOVER = "server/discover"  # the stateless protocol's probe (2026-07-28), sent before initialize
DRAIN_SECONDS = 20.0  # after the host's EOF, how long owed answers are waited for


class EarlyAnswers:
    """The two relays; :meth:`close` hands the SDK's last messages out once it has returned."""

    def __init__(self, manifest: dict[str, Any], version: str, real_out: int) -> None:
        self._manifest = manifest
        self._server_version = version
        # Lives as long as the process: it is the real stdout.
        # Buffered (a raw write may be partial), flushed after every message.
        self._out: BinaryIO = open(real_out, "wb")  # noqa: SIM115
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # notified when nothing is owed
        self._answered: set[str] = set()
        self._pending: set[str] = set()  # requests handed to the SDK and not yet answered
        self._protocol: str | None = None
        self._outbound: threading.Thread | None = None
        # set by the first request only the SDK can answer: until then it need not load at all
        self.sdk_needed = threading.Event()

    def _send(self, line: bytes) -> None:
        with self._lock:
            self._out.write(line)
            self._out.flush()

    def _answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The reply's ``result`` or ``error`` member, or None to leave the request to the SDK."""
        method, params = message.get("method"), message.get("params") or {}
        if method == DISCOVER and self._protocol is None:
            # Refused at once, as a server without the stateless protocol would: the client
            # falls back to ``initialize`` now (which the manifest covers) instead of waiting
            # seconds for the SDK to load and answer its probe (Claude Code waits ~3 s). The SDK
            # must not see the probe: it would then hold the session to the stateless envelope.
            return {"error": {"code": -32601, "message": f"Method not found: {DISCOVER}"}}
        if method == "initialize" and self._protocol is None:
            asked = params.get("protocolVersion")
            versions = self._manifest["versions"]
            self._protocol = asked if asked in versions else self._manifest["latest"]
            result = dict(versions[self._protocol]["initialize"])
            result["protocolVersion"] = self._protocol
            result["serverInfo"] = {"name": "memdir", "version": self._server_version}
            return {"result": result}
        if method in LISTS and self._protocol is not None and not params.get("cursor"):
            return {"result": self._manifest["versions"][self._protocol][method]}
        return None

    def _early_reply(self, line: bytes) -> bool:
        """Answer ``line`` now when the manifest covers it; False when the SDK must not see it."""
        with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
            message = json.loads(line)
            if isinstance(message, dict) and "id" in message:
                answer = self._answer(message)
                if answer is not None:
                    reply = {"jsonrpc": "2.0", "id": message["id"], **answer}
                    if "error" in answer:  # the refused probe: the SDK never hears of it
                        self._send(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
                        return False
                    self._answered.add(json.dumps(message["id"]))
                    self._send(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
        return True

    def inbound(self, real_in: int, to_sdk: int) -> None:
        # OSError: the host or the SDK has gone; the process is ending, nothing to hand on.
        with (
            contextlib.suppress(OSError),
            open(real_in, "rb") as source,
            open(to_sdk, "wb") as sink,
        ):
            for line in source:
                if self._early_reply(line):
                    self._track(line)
                    sink.write(line)
                    sink.flush()
            # The host closed our stdin: it wants no more requests. End as soon as none is owed
            # rather than when the SDK has finished loading (seconds: the host waits for us);
            # its stdin stays open meanwhile, so a call it is still running is answered.
            with self._lock:
                self._settled.wait_for(lambda: not self._pending, timeout=DRAIN_SECONDS)
                if not self._pending:
                    os._exit(0)
        # Leaving the block closed ``sink``: the SDK sees the host's EOF and returns.

    def _track(self, line: bytes) -> None:
        """Remember a request the SDK now owes an answer to (unless answered here already)."""
        with contextlib.suppress(ValueError, TypeError):
            message = json.loads(line)
            if isinstance(message, dict) and "method" in message and "id" in message:
                key = json.dumps(message["id"])
                if key not in self._answered:
                    with self._lock:
                        self._pending.add(key)
                    self.sdk_needed.set()

    def outbound(self, from_sdk: int) -> None:
        with contextlib.suppress(OSError), open(from_sdk, "rb") as source:
            for line in source:
                key = None
                with contextlib.suppress(ValueError, TypeError):
                    message = json.loads(line)
                    if isinstance(message, dict) and "method" not in message:
                        key = json.dumps(message.get("id"))
                if key is not None and key in self._answered:
                    self._answered.discard(key)
                    continue
                self._send(line)
                if key is not None:
                    with self._lock:
                        self._pending.discard(key)
                        if not self._pending:
                            self._settled.notify_all()

    def start(self, real_in: int, to_sdk: int, from_sdk: int) -> None:
        threading.Thread(target=self.inbound, args=(real_in, to_sdk), daemon=True).start()
        self._outbound = threading.Thread(target=self.outbound, args=(from_sdk,), daemon=True)
        self._outbound.start()

    def close(self) -> None:
        """After the SDK returned: end its stdout pipe, let the last lines out (bounded)."""
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # drops the last write end of the SDK's pipe
        os.close(devnull)
        if self._outbound is not None:
            self._outbound.join(timeout=5)


# flags ``memdir [...] mcp [...]`` may carry for a stdio server: with a value, and without
_VALUED = frozenset({"--dir", "--settings"})
_BARE = frozenset({"--json", "--text", "--claude", "--preload"})
started: EarlyAnswers | None = None  # the relays the console script put up before the CLI loaded


def is_stdio_mcp(argv: list[str]) -> bool:
    """True for exactly ``[flags] mcp [flags]`` serving stdio; another command, ``--transport``,
    ``--help`` or a typo is the CLI's to decide."""
    args, command = list(argv), None
    while args:
        token = args.pop(0)
        if token in _VALUED and args:
            args.pop(0)
        elif token.startswith(("--dir=", "--settings=")) or token in _BARE:
            continue
        elif token == "mcp" and command is None:
            command = token
        else:
            return False
    return command is not None


def start_before_cli(argv: list[str], env: dict[str, str]) -> EarlyAnswers | None:
    """Put the relays up before the CLI is even imported (~50 ms sooner: the host counts the
    server connected at the handshake, and waits for it before its first model request), for
    exactly ``[flags] mcp [flags]`` over stdio; anything else is left to the CLI as before."""
    global started
    if env.get("MEMDIR_MCP_EARLY", "1") in ("0", "off") or started is not None:
        return started
    if not is_stdio_mcp(argv):
        return None
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return None  # no SDK to take over: the CLI's missing-extra error is all the client gets
    from memdir import __version__
    from memdir.adapters.stdio_exit import exit_on_stop_signals

    exit_on_stop_signals()
    started = start_early_answers(__version__)
    return started


def start_early_answers(version: str) -> EarlyAnswers | None:
    """Put the relays between this process's stdio and the SDK (call before it loads).

    None, and nothing changed, when there is no usable manifest.
    """
    try:
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
        manifest["versions"][manifest["latest"]]["initialize"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    real_in, real_out = os.dup(0), os.dup(1)
    to_sdk_r, to_sdk_w = os.pipe()
    from_sdk_r, from_sdk_w = os.pipe()
    os.dup2(to_sdk_r, 0)
    os.dup2(from_sdk_w, 1)
    os.close(to_sdk_r)
    os.close(from_sdk_w)
    relays = EarlyAnswers(manifest, version, real_out)
    relays.start(real_in, to_sdk_w, from_sdk_r)
    return relays


__all__ = [
    "DISCOVER",
    "LISTS",
    "MANIFEST",
    "EarlyAnswers",
    "is_stdio_mcp",
    "start_before_cli",
    "start_early_answers",
]
