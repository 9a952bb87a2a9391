"""The per-user recall daemon: keeps the embedder and search indexes warm for hook processes.

``python -m memdir.adapters.recall_daemon --socket PATH [--idle SECONDS] [--warm MEM CACHE]``
(started on demand by :func:`memdir.adapters.recall_client.spawn`).

Invariants:
- One daemon per socket: it holds ``<socket>.lock`` for its whole life; a second one that loses
  the race exits at once. The socket is 0600 in a 0700 directory, and a peer with another uid is
  refused (``SO_PEERCRED``) — memory contents never cross users.
- A thin transport: the warm engines live in :mod:`memdir.recall.warm` (the hook's in-process
  fallback uses the same functions, so both surface identical text) and forwarded hook events run
  the hook's own code (:mod:`memdir.adapters.hooks.forwarded`); nothing below imports this
  module.
- Memory stays bounded: at most ``MAX_ENGINES`` memory dirs are kept (least recently used
  evicted), and after ``idle`` seconds without a request (none in flight: a forwarded
  ``session-end`` may drain for a while) the daemon exits and removes its socket. It also exits
  within a second when its socket file is removed or replaced: nobody could reach it again.
- A request never kills the daemon: any error becomes ``{"ok": false, "error": ...}``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import socket
import socketserver
import struct
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memdir.adapters.recall_client import (
    DEFAULT_IDLE_SECONDS,
    MAX_MESSAGE_BYTES,
    PROTOCOL,
    ensure_private_dir,
    fingerprint,
)
from memdir.atomic import FileLock
from memdir.errors import LockHeldError
from memdir.prompt_context import RecallContext
from memdir.recall.warm import MAX_ENGINES, WarmRecall

log = logging.getLogger(__name__)

FINISH_SECONDS = 60.0  # at exit, how long requests in flight may still run
WARM_WAIT_SECONDS = 120.0  # a "warm" request waits for the load, however large the dir


def rss_kib() -> int:
    """Resident memory of this process in KiB (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return 0


class RecallDaemon:
    """The request handler's state: the warm engines, counters, the idle clock."""

    def __init__(self, *, max_engines: int = MAX_ENGINES) -> None:
        self.warm = WarmRecall(max_engines=max_engines)
        self.started = time.time()
        self.last_request = time.monotonic()
        self.requests = 0
        self.in_flight = 0  # requests being answered: the idle clock waits for them
        self.counter = threading.Lock()
        self.fingerprint = fingerprint()

    @property
    def idle_since(self) -> float | None:
        """When the last request arrived, or None while one is still being answered."""
        return None if self.in_flight else self.last_request

    def recall(
        self,
        memory_dir: str,
        cache_dir: str,
        query: str,
        exclude: Sequence[str],
        limit: int,
        context: RecallContext | None = None,
    ) -> list[dict[str, Any]]:
        return self.warm.recall(memory_dir, cache_dir, query, exclude, limit, context)

    def handle(self, body: Any) -> dict[str, Any]:
        with self.counter:
            self.in_flight += 1
            self.requests += 1
            self.last_request = time.monotonic()
        try:
            return self._answer(body)
        finally:
            with self.counter:
                self.in_flight -= 1
                self.last_request = time.monotonic()

    def _answer(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or body.get("v") != PROTOCOL:
            return {"ok": False, "error": f"expected protocol {PROTOCOL}"}
        op = body.get("op")
        base = {"ok": True, "fingerprint": self.fingerprint}
        wanted = body.get("fingerprint")
        if wanted is not None and wanted != self.fingerprint:
            # another memdir build asks: refuse before doing anything, so it can run the hook
            # itself without the work (state, log) being done twice
            return {"ok": False, "stale": True, "error": "the daemon runs another memdir build"}
        if op == "status":
            return {**base, **self.status()}
        if op == "stop":
            return {**base, "stopping": True}
        if op == "hook":
            return {**base, **self.hook(body)}
        if op in ("recall", "warm"):
            memory_dir, cache_dir = body.get("memory_dir"), body.get("cache_dir")
            if not isinstance(memory_dir, str) or not isinstance(cache_dir, str):
                return {"ok": False, "error": "memory_dir and cache_dir are required"}
            query = body.get("query") if op == "recall" else "warm up the index"
            exclude = body.get("exclude") or []
            limit = body.get("limit", 5)
            if not isinstance(query, str) or not isinstance(exclude, list):
                return {"ok": False, "error": "query must be a string, exclude a list"}
            started = time.perf_counter()
            if op == "warm":  # the same load a cold prompt waits on (``WarmRecall.ready``)
                self.warm.ready(memory_dir, cache_dir, WARM_WAIT_SECONDS)
                elapsed = round((time.perf_counter() - started) * 1000, 2)
                return {**base, "attachments": [], "ms": elapsed}
            context = RecallContext.from_json(body.get("context"))
            found = self.recall(
                memory_dir, cache_dir, query, [str(p) for p in exclude], int(limit), context
            )
            elapsed = round((time.perf_counter() - started) * 1000, 2)
            return {**base, "attachments": found if op == "recall" else [], "ms": elapsed}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def hook(self, body: dict[str, Any]) -> dict[str, Any]:
        """Run a forwarded hook event exactly as the hook process would (see ``.forwarded``)."""
        from memdir.adapters.hooks.forwarded import serve_hook
        from memdir.adapters.hosts import dialect

        return serve_hook(body, self.warm, dialect)

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "rss_kib": rss_kib(),
            "cpu_s": round(time.process_time(), 3),
            "uptime_s": round(time.time() - self.started, 1),
            "requests": self.requests,
            "memory_dirs": self.warm.memory_dirs(),
        }


def _peer_uid(conn: socket.socket) -> int | None:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:  # not Linux: the 0600 socket in a 0700 dir is the protection
        return None
    creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        uid = _peer_uid(self.connection)
        if uid is not None and uid != os.getuid():
            return  # another user's process: say nothing
        raw = self.rfile.readline(MAX_MESSAGE_BYTES + 1)
        try:
            body = json.loads(raw)
            answer = self.server.daemon.handle(body)
        except Exception as exc:  # one bad request must not end the daemon
            log.exception("recall daemon request failed")
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        self.wfile.write(json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n")
        if isinstance(body, dict) and body.get("op") == "stop" and answer.get("ok"):
            threading.Thread(target=self.server.shutdown, daemon=True).start()


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, daemon: RecallDaemon) -> None:
        self.daemon = daemon
        super().__init__(path, _Handler)


def _still_ours(sock_path: Path, inode: int) -> bool:
    try:
        return sock_path.stat().st_ino == inode
    except OSError:
        return False


def serve(
    sock_path: Path, *, idle_seconds: float = DEFAULT_IDLE_SECONDS, warm: Sequence[str] = ()
) -> int:
    """Run until idle or stopped; 0, also when another daemon already serves this socket."""
    ensure_private_dir(sock_path.parent)
    try:
        lock = FileLock(sock_path.with_name(sock_path.name + ".lock"), timeout=0)
        lock.acquire()
    except LockHeldError:
        return 0  # lost the start race: the other daemon serves
    daemon = RecallDaemon()
    try:
        with contextlib.suppress(FileNotFoundError):
            sock_path.unlink()  # a dead daemon's socket: we hold the lock, so it is stale
        old_mask = os.umask(0o177)
        try:
            server = _Server(str(sock_path), daemon)
        finally:
            os.umask(old_mask)
        os.chmod(sock_path, 0o600)
        inode = sock_path.stat().st_ino

        def watchdog() -> None:
            while True:
                time.sleep(min(1.0, idle_seconds / 4))
                since = daemon.idle_since
                if since is not None and time.monotonic() - since > idle_seconds:
                    server.shutdown()
                    return
                if not _still_ours(sock_path, inode):
                    # the socket file was removed or replaced (a cleaned-up HOME, a test's
                    # teardown): nobody can reach this daemon any more, so it must not linger
                    # for its idle timeout holding its engines (~260 MB)
                    server.shutdown()
                    return

        threading.Thread(target=watchdog, daemon=True).start()
        if len(warm) == 2:
            threading.Thread(
                target=daemon.handle,
                args=({"v": PROTOCOL, "op": "warm", "memory_dir": warm[0], "cache_dir": warm[1]},),
                daemon=True,
            ).start()
        with server:
            server.serve_forever(poll_interval=0.2)
        with contextlib.suppress(OSError):
            if sock_path.stat().st_ino == inode:
                sock_path.unlink()
        # a request it took (a session-end draining extraction) finishes before the exit
        deadline = time.monotonic() + FINISH_SECONDS
        while daemon.in_flight and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        lock.release()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memdir.adapters.recall_daemon")
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE_SECONDS)
    parser.add_argument("--warm", nargs=2, metavar=("MEMORY_DIR", "CACHE_DIR"), default=())
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="memdir recall daemon: %(message)s")
    return serve(args.socket, idle_seconds=args.idle, warm=args.warm)


if __name__ == "__main__":
    sys.exit(main())
