"""The one atomic-write primitive and the one lock file, used by every writer in memdir.

Invariant: a reader never sees a torn file. Data goes to a unique temp file in the target's own
directory (same filesystem, so ``os.replace`` is atomic), is fsynced, renamed over the target, and
the directory is fsynced so the rename itself survives a crash. A crash before the rename leaves
the old file intact plus a stray ``.<name>.<pid>-<random>.tmp`` that no scan picks up (hidden, not
``*.md``); :mod:`memdir.recovery` removes such leftovers once their writer is gone. The temp name
is shortened when needed, so any name the filesystem accepts can be written.

Bulk writers (an import of 10,000 memories) may wrap their writes in :func:`deferred_sync`:
each write still renames atomically, but the two fsyncs per file wait for one ``os.sync`` at the
end of the block.

Directories are created 0700, every missing level of them; a write that fails removes the
directories it created, so nothing empty is left behind.

Concurrent writers in threads and processes coordinate with :class:`FileLock`: read-modify-write
sequences (store writes + MEMORY.md upkeep) run under it, so no update is lost. The OS lock is
taken through ``filelock``'s descriptor API (``flock`` on POSIX, ``LockFileEx`` on Windows), so
this module imports and works on every platform with the same cross-process guarantee.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from types import TracebackType
from typing import ClassVar

import filelock

from memdir.errors import LockHeldError

FILE_MODE = 0o600
DIR_MODE = 0o700
NAME_MAX = 255  # bytes per path component on every filesystem memdir targets
TEMP_SUFFIX = ".tmp"
_deferred: ContextVar[set[Path] | None] = ContextVar("memdir_deferred_sync", default=None)
_TEMP_NAME = re.compile(r"^\..*\.(?:(?P<pid>\d+)-[0-9a-f]{8}|[0-9a-f]{12})\.tmp$", re.DOTALL)


def make_dirs(path: Path) -> list[Path]:
    """Create ``path`` and every missing parent with mode 0700; return those created, outermost
    first (``mkdir(parents=True)`` would give the parents the umask's mode instead)."""
    missing: list[Path] = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    created: list[Path] = []
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:
            if not directory.is_dir():
                remove_empty_dirs(created)
                raise
            continue
        except OSError:
            remove_empty_dirs(created)
            raise
        created.append(directory)
    return created


def remove_empty_dirs(created: list[Path]) -> None:
    """Remove directories from :func:`make_dirs`, innermost first, while they are empty."""
    for directory in reversed(created):
        try:
            directory.rmdir()
        except OSError:
            return


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700 if missing; return it."""
    make_dirs(path)
    return path


@contextlib.contextmanager
def deferred_sync() -> Iterator[None]:
    """Inside the block, :func:`atomic_write` and :func:`fsync_dir` skip their fsyncs; at its end
    one ``os.sync`` makes every write durable at once (then each directory touched is fsynced).

    Readers still never see a torn file and a killed process still leaves each file old or new:
    only durability waits. A power loss inside the block can lose files written in it, so use it
    for writes that are undone as one (an import, behind its snapshot), never for a lone save.
    """
    dirs: set[Path] = set()
    token = _deferred.set(dirs)
    try:
        yield
    finally:
        _deferred.reset(token)
        if hasattr(os, "sync"):
            os.sync()
        for directory in dirs:
            fsync_dir(directory)


def fsync_dir(path: Path) -> None:
    """Flush a directory entry so a rename inside it is durable (a no-op where unsupported)."""
    pending = _deferred.get()
    if pending is not None:
        pending.add(path)
        return
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems (and Windows) refuse fsync on directories; rename is still atomic
    finally:
        os.close(fd)


def temp_name(name: str) -> str:
    """A unique hidden temp name for ``name`` that fits in :data:`NAME_MAX` bytes.

    It carries the writer's pid, so a leftover can be told from a live writer's file.
    """
    tail = f".{os.getpid()}-{secrets.token_hex(4)}{TEMP_SUFFIX}"
    room = NAME_MAX - 1 - len(tail.encode())
    stem = name.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")
    return f".{stem}{tail}"


def temp_writer_pid(name: str) -> int | None:
    """The writer pid in a temp file name; 0 for a temp name without one; None if not a temp."""
    match = _TEMP_NAME.match(name)
    if match is None:
        return None
    return int(match["pid"]) if match["pid"] else 0


def atomic_write(
    path: Path,
    data: str | bytes,
    *,
    mode: int = FILE_MODE,
    mtime: float | None = None,
    durable: bool = True,
) -> None:
    """Write ``data`` to ``path`` atomically (unique temp, fsync, rename, fsync dir).

    ``mtime`` sets the file's modification time before the rename, so content and time change
    together (the consolidation lock keeps its last-run time in its mtime). ``durable=False``
    leaves out both fsyncs: readers still see the old bytes or the new, never a mix, but a
    power cut may bring back the old ones — for bookkeeping rewritten on every hook, never for
    a memory.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    parent = path.parent
    created = make_dirs(parent)
    tmp = parent / temp_name(path.name)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    except BaseException:
        remove_empty_dirs(created)
        raise
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            if durable and _deferred.get() is None:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if mtime is not None:
            os.utime(tmp, (mtime, mtime))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        remove_empty_dirs(created)
        raise
    if durable:
        fsync_dir(parent)


def content_hash(data: str | bytes) -> str:
    """SHA-256 hex digest of text (UTF-8) or bytes: the identity used by expected-hash writes."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(payload).hexdigest()


class FileLock:
    """An exclusive lock on ``path`` across threads and processes.

    The OS lock belongs to an open descriptor (``flock`` / ``LockFileEx`` through
    ``filelock.lock_descriptor``), so the process keeps one descriptor per held path; a per-path
    re-entrant thread lock serialises threads first. Re-entrant within one thread (across
    instances too), so a store method may call another that also locks. The lock file is never
    deleted or replaced, so every waiter contends on the same inode.
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

    @property
    def depth(self) -> int:
        """How many times the calling thread holds this path (0: not held by this process)."""
        held = FileLock._held.get(self._key)
        return held[1] if held is not None else 0

    def _take(self, deadline: float) -> int:
        ensure_dir(self.path.parent)
        # O_NOFOLLOW: a lock file swapped for a symlink must not make us create files elsewhere.
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(self.path, flags, FILE_MODE)
        delay = 0.001
        try:
            while not filelock.lock_descriptor(fd, blocking=False):
                if time.monotonic() >= deadline:
                    raise LockHeldError(f"lock {self.path} is held by another process")
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        except BaseException:
            os.close(fd)
            raise
        return fd

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
                filelock.unlock_descriptor(fd)
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
