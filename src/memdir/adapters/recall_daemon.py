"""The per-user recall daemon: keeps the embedder and search indexes warm for hook processes.

``python -m memdir.adapters.recall_daemon --socket PATH [--idle SECONDS] [--warm MEM CACHE]``
(started on demand by :func:`memdir.adapters.recall_client.spawn`).

Invariants:
- One daemon per socket: it holds ``<socket>.lock`` for its whole life; a second one that loses
  the race exits at once. The socket is 0600 in a 0700 directory, and a peer with another uid is
  refused (``SO_PEERCRED``) — memory contents never cross users.
- It answers with the same code the hook would run in-process (:func:`recall_attachments`, on
  ``memdir.recall``'s public API), so daemon and fallback surface identical text.
- Memory stays bounded: at most :data:`MAX_ENGINES` memory dirs are kept (least recently used
  evicted), and after ``idle`` seconds without a request the daemon exits and removes its socket.
- A request never kills the daemon: any error becomes ``{"ok": false, "error": ...}``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import logging
import os
import socket
import socketserver
import struct
import sys
import threading
import time
from collections import OrderedDict
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
from memdir.errors import LockHeldError, MissingExtraError
from memdir.prompt_context import RecallContext
from memdir.recall.base import MAX_SELECTED
from memdir.recall.engine import MemoryRecall, should_recall
from memdir.recall.session import RecallSession
from memdir.recall.surface import Attachment, RelevantMemory, surface

log = logging.getLogger(__name__)

MAX_ENGINES = 4


def build_engine(memory_dir: Path, cache_dir: Path) -> MemoryRecall:
    """Local (offline) recall, or the keyword selector when the ``recall`` extra is missing."""
    from memdir.recall.factory import build_recall

    try:
        return build_recall(memory_dir, cache_dir, kind="local")
    except MissingExtraError:
        from memdir.recall.keyword import KeywordSelector

        return MemoryRecall(memory_dir, KeywordSelector(), header_cache=cache_dir / "headers.json")


def recall_attachments(
    engine: MemoryRecall,
    query: str,
    exclude: Sequence[str],
    limit: int,
    *,
    context: RecallContext | None = None,
) -> list[dict[str, Any]]:
    """What recall surfaces for ``query``, skipping ``exclude`` paths, as JSON-ready dicts."""
    if hasattr(engine.selector, "select_sync") and engine.manifest_cap is None:
        found = _local_recall(engine, query, exclude, limit, context)
    else:
        session = RecallSession(surfaced={str(Path(p).resolve()) for p in exclude})
        found = asyncio.run(engine.recall(query, session, limit=limit))
    return [
        {
            "path": str(Path(a.path).resolve()),
            "filename": a.filename,
            "header": a.header,
            "content": a.content,
            "truncated": a.truncated,
        }
        for a in found
    ]


def _local_recall(
    engine: MemoryRecall,
    query: str,
    exclude: Sequence[str],
    limit: int,
    context: RecallContext | None = None,
) -> list[Attachment]:
    """The offline selector over its own index, asked for enough extra picks to skip ``exclude``.

    ``MemoryRecall.find`` rescans every header and resolves every path to drop the surfaced ones
    (O(N) filesystem calls per prompt); the selector's index already knows every memory, so only
    the few picks are resolved here. Same selection: the best ``limit`` not yet surfaced.
    """
    if not should_recall(query):
        return []
    excluded = {str(Path(p).resolve()) for p in exclude}
    selector = engine.selector
    kwargs = {"context": context} if context is not None and _takes_context(selector) else {}
    picks = selector.select_sync(query, None, limit=limit + len(excluded), **kwargs)  # type: ignore[attr-defined]
    out: list[Attachment] = []
    for pick in picks:
        path = engine.memory_dir / pick.filename
        try:
            if str(path.resolve()) in excluded:
                continue
            mtime = path.stat().st_mtime
        except OSError:
            continue  # deleted since the index saw it
        attachment = surface(RelevantMemory(path, pick.filename, mtime, pick.score, pick.reason))
        if attachment is not None:
            out.append(attachment)
        if len(out) >= min(limit, MAX_SELECTED):
            break
    return out


def _takes_context(selector: Any) -> bool:
    """The local selector takes a context; the keyword fallback does not."""
    return "context" in inspect.signature(selector.select_sync).parameters


def rss_kib() -> int:
    """Resident memory of this process in KiB (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return 0


class Freshness:
    """Keeps a warm selector's index current without walking the memory dir on the prompt path.

    Before a recall: compare the mtimes of the memory dir's directories with the last walk (a
    few ``stat`` calls) and refresh now if any changed — that catches every new, deleted or
    renamed memory, and every memdir write (an atomic rename). After answering: refresh in the
    background, which catches memories edited in place by other tools by the next prompt.
    """

    def __init__(self, engine: MemoryRecall) -> None:
        self.engine = engine
        selector: Any = engine.selector  # the offline selector has refresh(); others need none
        self.selector: Any = selector if hasattr(selector, "refresh") else None
        if self.selector is not None:
            self.selector.refresh_interval = float("inf")  # refreshes are decided here
        self.signature: dict[str, int] = {}
        self.background: threading.Thread | None = None

    def _walk_signature(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for dirpath, dirnames, _ in os.walk(self.engine.memory_dir):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            with contextlib.suppress(OSError):
                found[dirpath] = os.stat(dirpath).st_mtime_ns
        return found

    def _changed(self) -> bool:
        for path, mtime in self.signature.items():
            try:
                if os.stat(path).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        return not self.signature

    def refresh(self) -> None:
        if self.selector is not None:
            signature = self._walk_signature()  # before the walk: a change during it is seen
            self.selector.refresh()
            self.signature = signature

    def before_recall(self) -> None:
        if self.selector is not None and self._changed():
            self.refresh()

    def after_recall(self, lock: threading.Lock) -> None:
        if self.selector is None or (self.background and self.background.is_alive()):
            return

        def run() -> None:
            with lock:
                self.refresh()

        self.background = threading.Thread(target=run, daemon=True, name="memdir-refresh")
        self.background.start()


class RecallDaemon:
    """The request handler's state: warm engines, counters, the idle clock."""

    def __init__(self, *, max_engines: int = MAX_ENGINES) -> None:
        self.max_engines = max_engines
        self.engines: OrderedDict[tuple[str, str], MemoryRecall] = OrderedDict()
        self.locks: dict[tuple[str, str], threading.Lock] = {}
        self.freshness: dict[tuple[str, str], Freshness] = {}
        self.guard = threading.Lock()
        self.started = time.time()
        self.last_request = time.monotonic()
        self.requests = 0
        self.fingerprint = fingerprint()

    def engine(self, memory_dir: str, cache_dir: str) -> tuple[MemoryRecall, threading.Lock]:
        key = (memory_dir, cache_dir)
        with self.guard:
            if key in self.engines:
                self.engines.move_to_end(key)
                return self.engines[key], self.locks[key]
            engine = build_engine(Path(memory_dir), Path(cache_dir))
            self.engines[key] = engine
            self.locks[key] = threading.Lock()
            self.freshness[key] = Freshness(engine)
            while len(self.engines) > self.max_engines:
                old, _ = self.engines.popitem(last=False)
                self.locks.pop(old, None)
                self.freshness.pop(old, None)
            return engine, self.locks[key]

    def recall(
        self,
        memory_dir: str,
        cache_dir: str,
        query: str,
        exclude: Sequence[str],
        limit: int,
        context: RecallContext | None = None,
    ) -> list[dict[str, Any]]:
        """Recall with a warm engine: index checked before, refreshed in the background after."""
        engine, lock = self.engine(memory_dir, cache_dir)
        fresh = self.freshness[(memory_dir, cache_dir)]
        with lock:
            fresh.before_recall()
            found = recall_attachments(engine, query, exclude, limit, context=context)
        fresh.after_recall(lock)
        return found

    def handle(self, body: Any) -> dict[str, Any]:
        self.last_request = time.monotonic()
        self.requests += 1
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
            context = RecallContext.from_json(body.get("context"))
            found = self.recall(
                memory_dir, cache_dir, query, [str(p) for p in exclude], int(limit), context
            )
            elapsed = round((time.perf_counter() - started) * 1000, 2)
            return {**base, "attachments": found if op == "recall" else [], "ms": elapsed}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def hook(self, body: dict[str, Any]) -> dict[str, Any]:
        """Run a forwarded ``user-prompt-submit`` exactly as the hook process would."""
        from memdir.adapters.claude_code.handlers import HookContext, recall_in_process
        from memdir.adapters.claude_code.runner import HookFlags, make_context, run_event
        from memdir.adapters.claude_code.state import Injected

        env, cwd, raw = body.get("env"), body.get("cwd"), body.get("stdin")
        flags = body.get("flags") or {}
        if not (isinstance(env, dict) and isinstance(cwd, str) and isinstance(raw, str)):
            return {"ok": False, "error": "a hook request needs env, cwd and stdin"}
        if body.get("event") != "user-prompt-submit" or not isinstance(flags, dict):
            return {"ok": False, "error": "only user-prompt-submit is served here"}
        hook_flags = HookFlags(
            memory_dir=Path(flags["dir"]) if flags.get("dir") else None,
            settings=Path(flags["settings"]) if flags.get("settings") else None,
            claude=bool(flags.get("claude")),
        )

        def recaller(
            hc: HookContext, query: str, exclude: list[str], context: RecallContext
        ) -> tuple[list[Any], str]:
            if hc.settings.recall_selector == "llm" and hc.settings.model:
                return recall_in_process(hc, query, exclude), "daemon (llm selector)"
            memory_dir, cache_dir = str(hc.paths.memory_dir), str(hc.cache_dir)
            found = self.recall(memory_dir, cache_dir, query, exclude, 5, context)
            return [Injected.from_json(d) for d in found], "daemon"

        home = Path(cwd)
        stdout, stderr = run_event(
            "user-prompt-submit",
            raw.encode("utf-8"),
            lambda c: make_context(env, c or home, hook_flags, recaller=recaller),
            lambda: make_context(env, home, hook_flags).cache_dir,
        )
        return {"stdout": stdout, "stderr": stderr}

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "rss_kib": rss_kib(),
            "cpu_s": round(time.process_time(), 3),
            "uptime_s": round(time.time() - self.started, 1),
            "requests": self.requests,
            "memory_dirs": [m for m, _ in self.engines],
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
                if time.monotonic() - daemon.last_request > idle_seconds:
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
