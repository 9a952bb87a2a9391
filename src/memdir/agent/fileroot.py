"""A :class:`~memdir.agent.tools.WritableRoot` for files that are not memories.

Session-memory notes (one summary file per session) must be written safely but must not get a
MEMORY.md index line, so they cannot go through :class:`memdir.store.MemoryStore`. Invariant: the
same guarantees as the store minus the index — every path is checked with
:func:`memdir.pathsafe.resolve_inside`, every write is one :func:`memdir.atomic.atomic_write`
under a lock file beside the root, and an edit is an exact, unique string match.
"""

from __future__ import annotations

import os
from pathlib import Path

from memdir.atomic import FileLock, atomic_write, content_hash, ensure_dir
from memdir.errors import ConflictError, EditError, MemoryNotFoundError
from memdir.pathsafe import read_regular, resolve_inside

LOCK_NAME = ".memdir.lock"


class FileRoot:
    """Plain atomic text files under ``root``."""

    def __init__(self, root: Path, *, lock_timeout: float = 30.0) -> None:
        self.root = Path(os.path.abspath(root))
        self.lock_timeout = lock_timeout

    def _lock(self) -> FileLock:
        ensure_dir(self.root)
        return FileLock(self.root / LOCK_NAME, timeout=self.lock_timeout)

    def _check(self, path: Path, expected_hash: str | None) -> None:
        if expected_hash is None:
            return
        current = content_hash(path.read_bytes()) if path.is_file() else None
        if current != expected_hash:
            raise ConflictError(f"{path} changed since it was read")

    def write_text(self, rel: str, text: str, /, *, expected_hash: str | None = None) -> str:
        path = resolve_inside(self.root, rel)
        with self._lock():
            self._check(path, expected_hash)
            atomic_write(path, text)
        return rel

    def edit(
        self,
        rel: str,
        old: str,
        new: str,
        /,
        *,
        replace_all: bool = False,
        expected_hash: str | None = None,
    ) -> str:
        if not old:
            raise EditError("old text must not be empty")
        path = resolve_inside(self.root, rel)
        with self._lock():
            self._check(path, expected_hash)
            try:
                text = read_regular(path).decode("utf-8")
            except FileNotFoundError:
                raise MemoryNotFoundError(f"no such file: {rel}") from None
            count = text.count(old)
            if count == 0:
                raise EditError(f"the text to replace was not found in {rel}")
            if count > 1 and not replace_all:
                raise EditError(f"the text to replace occurs {count} times in {rel}")
            atomic_write(path, text.replace(old, new) if replace_all else text.replace(old, new, 1))
        return rel
