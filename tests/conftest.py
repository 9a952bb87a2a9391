"""Test-wide guards: no test reaches a network, and no test sees the developer's environment."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import memdir.llm.base

# Property tests must not fail on a slow, shared CI machine: no per-example deadline.
settings.register_profile("memdir", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("memdir")

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


class NetworkBlocked(RuntimeError):
    """Raised when a test tries to reach anything but loopback or a Unix socket."""


def _is_local(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    if isinstance(address, tuple) and address:
        host = address[0]
        if host in ("localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return False


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _is_local(address):
        raise NetworkBlocked(f"tests may not reach the network (connect to {address!r})")
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _is_local(address):
        raise NetworkBlocked(f"tests may not reach the network (connect to {address!r})")
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host not in (None, "localhost", "127.0.0.1", "::1", b"localhost", b"127.0.0.1"):
        try:
            if not ipaddress.ip_address(
                host if isinstance(host, str) else host.decode()
            ).is_loopback:
                raise NetworkBlocked(f"tests may not resolve {host!r}")
        except ValueError:
            raise NetworkBlocked(f"tests may not resolve {host!r}") from None
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = _guarded_getaddrinfo

# Libraries that might try a hub must not; child processes inherit these.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

# No test may build a provider that talks to a real model; LLM calls go through ScriptedProvider.
memdir.llm.base.ALLOW_REAL_PROVIDERS = False

_CLEARED_PREFIXES = ("MEMDIR_", "CLAUDE_", "ANTHROPIC_", "OPENAI_", "TEAM_MEMORY_")


@pytest.fixture(autouse=True)
def clean_environ(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Each test starts with no memdir/Claude/provider variables and a private HOME."""
    for key in list(os.environ):
        if key.startswith(_CLEARED_PREFIXES):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    # Hooks default to the user's own Claude Code CLI as their model: no test (or process it
    # starts) may reach it by accident; host-model tests switch it on explicitly.
    monkeypatch.setenv("MEMDIR_HOST_MODEL", "off")
    # ``memdir install`` and ``memdir import`` start a recall daemon to build the index ahead
    # (memdir.adapters.recall_prepare): tests that want one say so.
    monkeypatch.setenv("MEMDIR_PREPARE_RECALL", "0")
    # ... also for the CLI run in-process with an env of its own (``main(env={"HOME": ...})``):
    # each such import left a daemon of ~500 MB behind for its 15-minute idle
    from memdir.adapters import recall_prepare

    real_prepare = recall_prepare.prepare

    def prepare(env: Mapping[str, str], *args: Any, **kwargs: Any) -> str | None:
        if "MEMDIR_PREPARE_RECALL" not in env:
            env = {**env, "MEMDIR_PREPARE_RECALL": "0"}
        return real_prepare(env, *args, **kwargs)

    monkeypatch.setattr(recall_prepare, "prepare", prepare)
    yield


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the recall daemons a test left under this run's temp dirs: each holds ~500 MB for
    its idle timeout, and a run that leaves them slows whatever runs next on the machine."""
    import signal

    base = str(session.config._tmp_path_factory.getbasetemp())  # type: ignore[attr-defined]
    for proc in os.listdir("/proc"):
        if not proc.isdigit():
            continue
        try:
            with open(f"/proc/{proc}/cmdline", "rb") as fh:
                cmdline = fh.read().decode("utf-8", "replace")
        except OSError:
            continue
        if "recall_daemon" in cmdline and base in cmdline:
            with contextlib.suppress(OSError):
                os.kill(int(proc), signal.SIGTERM)
