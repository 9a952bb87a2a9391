"""The recall daemon as a real process on a real Unix socket, and its client's fallbacks."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.adapters import recall_client
from memdir.adapters.recall_daemon import RecallDaemon
from memdir.errors import DaemonError
from memdir.recall.warm import build_engine, recall_attachments
from memdir.store import MemoryStore


@pytest.fixture
def memory(tmp_path: Path) -> tuple[Path, Path]:
    memory_dir, cache_dir = tmp_path / "memory", tmp_path / "cache"
    store = MemoryStore(memory_dir)
    store.create("Deploys", "production deploys go to fly.io blue-green", "project", "fly deploy\n")
    store.create("Coffee", "the user drinks espresso without sugar", "user", "espresso\n")
    return memory_dir, cache_dir


def start(sock: Path, *, idle: float = 60.0) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "memdir.adapters.recall_daemon", "--socket", str(sock)]
    proc = subprocess.Popen([*command, "--idle", str(idle)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while True:
        try:
            recall_client.request(sock, {"op": "status"}, timeout=1.0)
            return proc
        except DaemonError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    sock = recall_client.socket_path(tmp_path / "mh")
    proc = start(sock)
    yield sock, proc
    if proc.poll() is None:
        proc.terminate()
    proc.wait(timeout=10)
    assert proc.stderr is not None
    proc.stderr.close()


def test_daemon_answers_exactly_what_in_process_recall_gives(
    daemon: tuple[Path, subprocess.Popen[bytes]], memory: tuple[Path, Path]
) -> None:
    sock, _ = daemon
    memory_dir, cache_dir = memory
    query = "how do we deploy to production?"
    remote = recall_client.recall(
        sock, memory_dir=memory_dir, cache_dir=cache_dir, query=query, exclude=[]
    )
    local = recall_attachments(build_engine(memory_dir, cache_dir), query, [], 5)
    assert remote == local
    assert [Path(a["path"]).name for a in remote] == ["deploys.md"]
    excluded = recall_client.recall(
        sock, memory_dir=memory_dir, cache_dir=cache_dir, query=query, exclude=[remote[0]["path"]]
    )
    assert excluded == []


def test_socket_is_private_and_status_reports_memory(
    daemon: tuple[Path, subprocess.Popen[bytes]], memory: tuple[Path, Path]
) -> None:
    sock, proc = daemon
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    status = recall_client.request(sock, {"op": "status"})
    assert status["pid"] == proc.pid and status["rss_kib"] > 0


def test_bad_requests_do_not_kill_it(daemon: tuple[Path, subprocess.Popen[bytes]]) -> None:
    sock, proc = daemon
    for raw in (b"not json\n", b"[]\n", b'{"v": 99}\n', b'{"v": 1, "op": "nope"}\n', b"\n"):
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(sock))
            conn.sendall(raw)
            conn.shutdown(socket.SHUT_WR)
            answer = json.loads(conn.makefile("rb").readline())
        assert answer["ok"] is False
    with pytest.raises(DaemonError, match="memory_dir and cache_dir are required"):
        recall_client.request(sock, {"op": "recall", "query": "x y"})
    assert proc.poll() is None


def test_second_daemon_on_the_same_socket_exits_at_once(
    daemon: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    sock, first = daemon
    second = subprocess.run(
        [sys.executable, "-m", "memdir.adapters.recall_daemon", "--socket", str(sock)],
        timeout=60,
        capture_output=True,
    )
    assert second.returncode == 0
    assert recall_client.request(sock, {"op": "status"})["pid"] == first.pid


def test_stale_daemon_is_refused_and_stopped(
    daemon: tuple[Path, subprocess.Popen[bytes]],
    memory: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sock, proc = daemon
    monkeypatch.setattr(recall_client, "fingerprint", lambda: "1:another-build:0")
    with pytest.raises(DaemonError, match="stale"):
        recall_client.recall(
            sock, memory_dir=memory[0], cache_dir=memory[1], query="deploy how", exclude=[]
        )
    assert proc.wait(timeout=10) == 0
    assert not sock.exists()


def test_idle_daemon_exits_and_removes_its_socket(tmp_path: Path) -> None:
    sock = recall_client.socket_path(tmp_path / "mh")
    proc = start(sock, idle=1.0)
    assert proc.wait(timeout=30) == 0
    assert not sock.exists()
    assert proc.stderr is not None
    proc.stderr.close()


def test_a_daemon_whose_socket_file_is_removed_exits(tmp_path: Path) -> None:
    """Issue #27.8: it lingered (about 260 MB) until its 15-minute idle timeout."""
    sock = recall_client.socket_path(tmp_path / "mh")
    proc = start(sock, idle=900.0)
    assert recall_client.request(sock, {"op": "status"}, timeout=5.0)["ok"]
    sock.unlink()
    assert proc.wait(timeout=30) == 0  # well before the idle timeout
    assert proc.stderr is not None
    proc.stderr.close()


def test_client_errors_are_daemon_errors(tmp_path: Path) -> None:
    sock = recall_client.socket_path(tmp_path / "mh")
    with pytest.raises(DaemonError, match="no recall daemon"):
        recall_client.request(sock, {"op": "status"})
    sock.parent.mkdir(parents=True)
    with socket.socket(socket.AF_UNIX) as dead:  # a socket file nobody listens on
        dead.bind(str(sock))
    with pytest.raises(DaemonError):
        recall_client.request(sock, {"op": "status"})


def test_long_home_gets_a_short_private_socket(tmp_path: Path) -> None:
    home = tmp_path / ("x" * 120)
    sock = recall_client.socket_path(home)
    assert len(os.fsencode(str(sock))) <= 100
    assert sock.parent.name == f"memdir-{os.getuid()}"
    assert recall_client.socket_path(home) == sock


def test_handler_evicts_the_least_recently_used_memory_dir(tmp_path: Path) -> None:
    daemon = RecallDaemon(max_engines=2)
    dirs = []
    for i in range(3):
        store = MemoryStore(tmp_path / f"m{i}")
        store.create("Note", "a note about deploys", "project", "x\n")
        dirs.append((str(tmp_path / f"m{i}"), str(tmp_path / f"c{i}")))
    for memory_dir, cache_dir in dirs:
        answer = daemon.handle(
            {"v": 1, "op": "warm", "memory_dir": memory_dir, "cache_dir": cache_dir}
        )
        assert answer["ok"]
    assert list(daemon.warm.engines) == dirs[1:]


def test_the_warm_index_follows_new_and_edited_memories(memory: tuple[Path, Path]) -> None:
    memory_dir, cache_dir = memory
    daemon = RecallDaemon()
    ask = "which port does staging postgres use"

    def names() -> list[str]:
        found = daemon.recall(str(memory_dir), str(cache_dir), ask, [], 5)
        for fresh in daemon.warm.freshness.values():  # let the after-answer refresh finish
            if fresh.background is not None:
                fresh.background.join(30)
        return [Path(a["path"]).name for a in found]

    assert names() == []
    store = MemoryStore(memory_dir)
    store.create(
        "Staging port", "the staging postgres database listens on port 5433", "project", "5433\n"
    )
    assert names() == ["staging_port.md"]  # a new memory: seen on the very next call
    target = memory_dir / "coffee.md"  # edited in place by another tool (no rename)
    with open(target, "r+") as fh:
        text = fh.read().replace(
            "the user drinks espresso without sugar", "staging postgres port notes"
        )
        fh.seek(0)
        fh.write(text)
        fh.truncate()
    names()  # answered from the index as it was; refreshed right after
    assert "coffee.md" in names()


def test_a_hook_waits_for_a_daemon_started_moments_ago_not_for_none(tmp_path: Path) -> None:
    import threading

    sock = tmp_path / "run" / "recall.sock"
    sock.parent.mkdir()
    assert recall_client.wait_if_starting(sock) is False  # never spawned: no wait
    stamp = sock.with_name(sock.name + ".spawned")
    stamp.write_text(str(os.getpid()))  # a live "daemon"
    threading.Timer(0.3, sock.touch).start()  # the daemon binds its socket a moment later
    assert recall_client.wait_if_starting(sock) is True
    sock.unlink()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stamp.write_text(str(dead.pid))  # spawned moments ago but already gone (stopped, crashed)
    assert recall_client.wait_if_starting(sock) is False
    os.utime(stamp, (time.time() - 60, time.time() - 60))  # a spawn long ago that never came up
    assert recall_client.wait_if_starting(sock) is False
