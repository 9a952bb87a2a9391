"""Memory headers kept current across turns: only files that changed are read again.

:class:`HeaderTracker` is what a long-lived recall uses instead of scanning every file every
turn: a :class:`~memdir.recall.dirstate.DirState` poll says which files changed, only those
headers are parsed (or taken from the on-disk header cache on a cold start), and the sorted list
is rebuilt only when something changed. Corrupt files are skipped exactly as
:func:`memdir.scan.scan_headers` skips them, and retried when they change.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from memdir.errors import FrontmatterError, UnsafePathError
from memdir.model import MemoryHeader
from memdir.recall.dirstate import DirState
from memdir.scan import HeaderCache, header_from_meta, header_meta, read_head

log = logging.getLogger(__name__)


class HeaderTracker:
    """Every memory header under ``memory_dir``, newest first, refreshed incrementally."""

    def __init__(
        self,
        memory_dir: Path,
        *,
        cache_path: Path | None = None,
        dir_state: DirState | None = None,
    ) -> None:
        self.memory_dir = memory_dir
        self.dir_state = dir_state or DirState(memory_dir)
        self._cache_path = cache_path
        self._headers: dict[str, MemoryHeader] = {}
        self._sorted: list[MemoryHeader] = []
        self._lock = threading.Lock()

    def headers(self) -> list[MemoryHeader]:
        """The current headers, newest first (the same list object while nothing changed)."""
        with self._lock:
            delta = self.dir_state.poll()
            if not delta:
                return self._sorted
            cache = HeaderCache(self._cache_path) if self._cache_path is not None else None
            for rel in delta.removed:
                self._headers.pop(rel, None)
            for rel in delta.changed:
                header = self._read(rel, cache)
                if header is None:
                    self._headers.pop(rel, None)
                else:
                    self._headers[rel] = header
            if cache is not None:
                self._save(cache)
            self._sorted = sorted(self._headers.values(), key=lambda h: (-h.mtime, h.filename))
            return self._sorted

    def _read(self, rel: str, cache: HeaderCache | None) -> MemoryHeader | None:
        """One header, from the cache when it is fresh; a miss is read and cached exactly as
        the scan does (fields, validity and repair notes), since both share the cache."""
        mtime_ns, size, mtime, _inode = self.dir_state.files[rel]
        if cache is not None:
            meta = cache.get(rel, mtime_ns, size)
            if meta is not None:
                return header_from_meta(self.memory_dir, rel, mtime, meta)
        path = self.memory_dir / rel
        try:
            lines = read_head(path, root=Path(os.path.realpath(self.memory_dir)))
            meta, notes = header_meta(lines, path)
        except (OSError, UnicodeDecodeError, FrontmatterError, UnsafePathError) as exc:
            log.debug("skipping %s: %s", rel, exc)
            return None
        if cache is not None:
            cache.put(rel, mtime_ns, size, meta, notes)
        return header_from_meta(self.memory_dir, rel, mtime, meta)

    def _save(self, cache: HeaderCache) -> None:
        cache.retain(set(self._headers))
        try:
            cache.save()
        except OSError as exc:  # a derived cache must never fail recall
            log.warning("cannot write header cache %s: %s", cache.path, exc.strerror)


__all__ = ["HeaderTracker"]
