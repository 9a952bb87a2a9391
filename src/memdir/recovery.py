"""Crash recovery for a memory dir: stale temp files and index drift left by a killed writer.

The Markdown files are the truth; MEMORY.md and temp files are what a crash can leave wrong.

- **Write intent.** Before a store write touches a file it records the paths it is about to
  change in ``.memdir.dirty`` (under the store lock) and removes the marker once the file *and*
  its index line are done. A writer killed in between leaves the marker behind.
- **Repair on the next locked write.** :class:`StoreLock` (what ``MemoryStore.lock()`` returns)
  checks for the marker each time it takes the lock from outside: if one is there, the writer
  that left it is gone (we hold the lock it held), so each path it named gets its index line
  re-derived from the file (added or updated if the file exists, removed if not). Stale temp
  files are swept each time, marker or not. A crash therefore needs no manual step.
- **Stale temp files** are ``.<name>.<pid>-<random>.tmp`` names from :mod:`memdir.atomic`. One is
  removed only when its writer cannot still be running: its pid is not a live process on this
  machine (POSIX), or it is older than :data:`STALE_AFTER` seconds (any platform, and for temp
  names without a pid). A symlink is never followed or removed as a temp file.

The marker is written without fsync: it guards against killed processes, which keep the page
cache; after a power loss ``memdir index rebuild`` (and ``doctor``) cover the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType

from memdir.atomic import FILE_MODE, FileLock, temp_writer_pid
from memdir.pathsafe import read_regular

DIRTY_NAME = ".memdir.dirty"
STALE_AFTER = 3600.0  # seconds: far longer than any single atomic write takes


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix" or pid <= 0:
        return True  # unknown: fall back on age (os.kill(pid, 0) would kill on Windows)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists but is not ours (EPERM)
    return True


def stale_temp_files(
    root: Path, *, now: float | None = None, max_age: float = STALE_AFTER
) -> list[Path]:
    """Leftover atomic-write temp files under ``root`` whose writer cannot still be running."""
    now = time.time() if now is None else now
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]  # .git and friends
        for name in filenames:
            if not name.endswith(".tmp"):  # cheap first: this runs on every locked write
                continue
            pid = temp_writer_pid(name)
            if pid is None:
                continue
            path = Path(dirpath) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if now - st.st_mtime > max_age or (pid > 0 and not _alive(pid)):
                found.append(path)
    return sorted(found)


def remove_stale_temp_files(root: Path, **kwargs: float) -> list[Path]:
    """Delete :func:`stale_temp_files`; return what was removed."""
    removed = []
    for path in stale_temp_files(root, **kwargs):
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed


class WriteIntent:
    """The ``.memdir.dirty`` marker: which paths an in-flight store write is changing."""

    def __init__(self, root: Path):
        self.path = root / DIRTY_NAME

    def pending(self) -> list[str] | None:
        """Paths a crashed writer left (``[]`` if the marker is unreadable); None: no marker."""
        try:
            raw = read_regular(self.path, limit=1_000_000, follow_symlinks=False)
            data = json.loads(raw.decode("utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return []
        paths = data.get("paths") if isinstance(data, dict) else None
        if not isinstance(paths, list):
            return []
        return [p for p in paths if isinstance(p, str)]

    @contextlib.contextmanager
    def covering(self, rels: Sequence[str], repair: Callable[[list[str]], None]) -> Iterator[None]:
        """Mark ``rels`` as in flight for the block.

        If the block raises, ``repair`` re-derives their index lines right away; the marker
        stays only if that fails too (or the process dies), for the next locked write.
        """
        payload = json.dumps({"pid": os.getpid(), "paths": list(rels)}).encode()
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.path, flags, FILE_MODE)
        try:
            os.write(fd, payload)
        finally:
            os.close(fd)
        try:
            yield
        except Exception:
            with contextlib.suppress(Exception):
                repair(list(rels))
                self.clear()
            raise
        self.clear()

    def clear(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class StoreLock:
    """The store's :class:`FileLock` plus crash repair each time it is taken from outside."""

    def __init__(self, lock: FileLock, root: Path, repair: Callable[[list[str]], None]):
        self._lock = lock
        self._root = root
        self._repair = repair

    def __enter__(self) -> StoreLock:
        self._lock.acquire()
        if self._lock.depth == 1:
            try:
                self.recover()
            except BaseException:
                self._lock.release()
                raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._lock.release()

    def recover(self) -> list[str]:
        """Repair what a killed writer left (caller holds the lock); return the paths repaired."""
        intent = WriteIntent(self._root)
        pending = intent.pending()
        if pending is not None:
            self._repair(pending)
        # Not only after a marked crash: a killed writer that marked nothing (an index rewrite,
        # another tool) leaves temps too, and doctor promises the next locked write removes them.
        remove_stale_temp_files(self._root)
        if pending is None:
            return []
        intent.clear()
        return pending
