"""The one atomic-write primitive and the one lock file, used by every writer in memdir.

Invariant: a reader never sees a torn file. Data goes to a unique temp file in the target's own
directory (same filesystem, so ``os.replace`` is atomic), is fsynced, renamed over the target, and
the directory is fsynced so the rename itself survives a crash. A crash before the rename leaves
the old file intact plus a stray ``.<name>.<random>.tmp`` that no scan picks up (not ``*.md``).

Concurrent writers in threads and processes coordinate with :class:`FileLock` (``fcntl.flock`` on
a lock file): read-modify-write sequences (store writes + MEMORY.md upkeep) run under it, so no
update is lost.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import ClassVar

from memdir.errors import LockHeldError

FILE_MODE = 0o600
DIR_MODE = 0o700


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 if missing; return it."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    return path


def fsync_dir(path: Path) -> None:
    """Flush a directory entry so a rename inside it is durable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


def atomic_write(
    path: Path, data: str | bytes, *, mode: int = FILE_MODE, mtime: float | None = None
) -> None:
    """Write ``data`` to ``path`` atomically (unique temp, fsync, rename, fsync dir).

    ``mtime`` sets the file's modification time before the rename, so content and time change
    together (the consolidation lock keeps its last-run time in its mtime).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    parent = path.parent
    ensure_dir(parent)
    tmp = parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if mtime is not None:
            os.utime(tmp, (mtime, mtime))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(parent)


def content_hash(data: str | bytes) -> str:
    """SHA-256 hex digest of text (UTF-8) or bytes: the identity used by expected-hash writes."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(payload).hexdigest()


class FileLock:
    """An exclusive advisory lock on ``path`` across threads and processes.

    ``flock`` locks belong to an open file description, so the process keeps one descriptor per
    held path; a per-path re-entrant thread lock serialises threads first. Re-entrant within one
    thread (across instances too), so a store method may call another that also locks.
    """

    _thread_locks: ClassVar[dict[str, threading.RLock]] = {}
    _held: ClassVar[
        dict[str, tuple[int, int]]
    ] = {}  # path -> (fd, depth); touched only by the owner
    _registry_guard = threading.Lock()

    def __init__(self, path: Path, *, timeout: float = 30.0):
        self.path = path
        self.timeout = timeout
        self._key = str(path)
        with FileLock._registry_guard:
            self._rlock = FileLock._thread_locks.setdefault(self._key, threading.RLock())

    def acquire(self) -> None:
        deadline = time.monotonic() + self.timeout
        if not self._rlock.acquire(timeout=self.timeout):
            raise LockHeldError(f"lock {self.path} is held by another thread")
        held = FileLock._held.get(self._key)
        if held is not None:
            FileLock._held[self._key] = (held[0], held[1] + 1)
            return
        try:
            fd = self._take(deadline)
        except BaseException:
            self._rlock.release()
            raise
        FileLock._held[self._key] = (fd, 1)

    def _take(self, deadline: float) -> int:
        ensure_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() >= deadline:
                    os.close(fd)
                    if exc.errno in (errno.EAGAIN, errno.EACCES):
                        raise LockHeldError(
                            f"lock {self.path} is held by another process"
                        ) from None
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.05)

    def release(self) -> None:
        held = FileLock._held.get(self._key)
        if held is None:
            raise RuntimeError("release of an unheld FileLock")
        fd, depth = held
        if depth > 1:
            FileLock._held[self._key] = (fd, depth - 1)
        else:
            del FileLock._held[self._key]
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        self._rlock.release()

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


@contextlib.contextmanager
def locked(path: Path, *, timeout: float = 30.0) -> Iterator[None]:
    """Hold the lock file at ``path`` for the duration of the block."""
    with FileLock(path, timeout=timeout):
        yield
