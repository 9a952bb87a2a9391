"""MemoryStore: every read and write of memory files, and the MEMORY.md upkeep that goes with it.

Invariants:
- Nothing outside ``root`` is ever written: every name goes through :mod:`memdir.pathsafe`.
- Every write is atomic (:func:`memdir.atomic.atomic_write`) and runs under the store's lock
  file, together with the index update, so concurrent writers (threads or processes) never lose
  an update and MEMORY.md never disagrees with what was just written through the store.
- Guards (e.g. the team secret scanner) see ``(relative path, new text)`` before anything is
  written; a guard that raises stops the write with nothing changed.
- ``expected_hash`` lets a caller say "only if the file is still what I read": a mismatch raises
  :class:`~memdir.errors.ConflictError` and writes nothing.
- Files are canonical. The store never rewrites a file it did not mean to change; a corrupt
  file is reported (with its path) by reads and scans, never "repaired" behind the user's back.
- Hidden and control paths, and MEMORY.md as a memory, are refused (:mod:`memdir.controlfiles`).
- A writer killed mid-write is repaired on the next locked write (:mod:`memdir.recovery`): the
  index lines of the files it was changing are re-derived from the files, stale temps swept.
"""

from __future__ import annotations

import builtins
import datetime as dt
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from memdir import frontmatter, index, index_sections
from memdir.atomic import (
    FileLock,
    atomic_write,
    content_hash,
    ensure_dir,
    fsync_dir,
    make_dirs,
    remove_empty_dirs,
)
from memdir.controlfiles import check_memory_target, check_writable
from memdir.errors import (
    ConflictError,
    EditError,
    FrontmatterError,
    InvalidTextError,
    MemoryExistsError,
    MemoryNotFoundError,
    UnreadableFileError,
    UnsafePathError,
)
from memdir.model import Memory, MemoryHeader, MemoryType
from memdir.pathsafe import check_relative, read_regular, relative_to_root, resolve_inside
from memdir.recovery import StoreLock, WriteIntent, remove_stale_temp_files
from memdir.scan import HeaderCache, ScanResult, scan_headers
from memdir.slug import slugify as slugify  # re-exported: callers import it from here
from memdir.validity import current_only

WriteGuard = Callable[[str, str], None]
LOCK_NAME = ".memdir.lock"
MAX_READ_BYTES = 10 * 1024 * 1024


def today(clock: Callable[[], dt.datetime] | None = None) -> str:
    now = clock() if clock is not None else dt.datetime.now().astimezone()
    return now.date().isoformat()


class MemoryStore:
    """Read and write the memory files under ``root`` (the memory dir)."""

    def __init__(
        self,
        root: Path,
        *,
        guards: Sequence[WriteGuard] = (),
        lock_timeout: float = 30.0,
        clock: Callable[[], dt.datetime] | None = None,
        header_cache: Path | None = None,
    ):
        self.root = Path(os.path.abspath(root))
        self.guards = list(guards)
        self.lock_timeout = lock_timeout
        self._clock = clock
        self._header_cache_path = header_cache

    # -- paths ---------------------------------------------------------------------------
    def rel(self, name: str | Path) -> str:
        """Normalise a relative name or an absolute path inside the root; raise if unsafe."""
        if isinstance(name, Path) or str(name).startswith("/"):
            return relative_to_root(self.root, name)
        return check_relative(str(name))

    def path_of(self, name: str | Path) -> Path:
        return resolve_inside(self.root, self.rel(name))

    def exists(self, name: str | Path) -> bool:
        return self.path_of(name).is_file()

    def lock(self) -> StoreLock:
        """The store lock; taking it from outside first repairs what a killed writer left."""
        ensure_dir(self.root)
        lock = FileLock(self.root / LOCK_NAME, timeout=self.lock_timeout)
        return StoreLock(lock, self.root, self._resync)

    def _resync(self, rels: builtins.list[str]) -> None:
        index.resync_file_entries(self.root, rels)

    def _intent(self, *rels: str) -> AbstractContextManager[None]:
        return WriteIntent(self.root).covering(rels, self._resync)

    # -- reads ---------------------------------------------------------------------------
    def read_bytes(self, name: str | Path) -> bytes:
        check_writable(self.rel(name))  # hidden and control files are not memories to read
        path = self.path_of(name)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            raise MemoryNotFoundError(f"no such memory: {self.rel(name)}") from None
        if not path.is_file():
            raise MemoryNotFoundError(f"not a file: {self.rel(name)}")
        if size > MAX_READ_BYTES:
            raise UnreadableFileError(
                f"{path}: {size} bytes is larger than the {MAX_READ_BYTES}-byte read limit"
            )
        return read_regular(path, limit=MAX_READ_BYTES)  # swapped for a FIFO since: refused

    def read_text(self, name: str | Path) -> str:
        data = self.read_bytes(name)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise UnreadableFileError(f"{self.path_of(name)}: not UTF-8 text") from None

    def read(self, name: str | Path) -> Memory:
        rel = self.rel(name)
        return frontmatter.parse_memory(self.read_text(rel), rel, source=self.path_of(rel))

    def file_hash(self, name: str | Path) -> str:
        return content_hash(self.read_bytes(name))

    def scan(self, *, limit: int | None = None) -> ScanResult:
        cache = HeaderCache(self._header_cache_path) if self._header_cache_path else None
        return scan_headers(self.root, limit=limit, cache=cache)

    def list(self, *, limit: int | None = None) -> list[MemoryHeader]:
        return self.scan(limit=limit).headers

    # -- writes --------------------------------------------------------------------------
    def _check_expected(self, rel: str, expected_hash: str | None) -> None:
        if expected_hash is None:
            return
        path = self.path_of(rel)
        current = content_hash(path.read_bytes()) if path.is_file() else None
        if current != expected_hash:
            raise ConflictError(
                f"{rel} changed since it was read (expected {expected_hash[:12]}, "
                f"found {current[:12] if current else 'no file'})"
            )

    def _guard(self, rel: str, text: str) -> None:
        for guard in self.guards:
            guard(rel, text)

    def _write(self, rel: str, text: str) -> None:
        """Guard, write and index one file. Caller holds the lock."""
        check_writable(rel)
        try:
            payload = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidTextError(
                f"cannot write {rel}: the text is not valid Unicode "
                f"(a lone surrogate at character {exc.start})"
            ) from None
        self._guard(rel, text)
        path = self.path_of(rel)
        if path.is_dir():
            raise MemoryExistsError(f"cannot write {rel}: a directory of that name exists")
        with self._intent(rel):
            try:
                atomic_write(path, payload)
            except (NotADirectoryError, FileExistsError):
                raise MemoryExistsError(
                    f"cannot write {rel}: a file stands where a directory of its path should be"
                ) from None
            self._index_upsert(rel, text)

    def write_text(
        self,
        name: str | Path,
        text: str,
        *,
        expected_hash: str | None = None,
        create_only: bool = False,
    ) -> str:
        """Write raw text (e.g. from a model's Write tool). Returns the relative path."""
        rel = self.rel(name)
        check_writable(rel)
        with self.lock():
            if create_only and self.path_of(rel).exists():
                raise MemoryExistsError(f"{rel} already exists")
            self._check_expected(rel, expected_hash)
            self._write(rel, text)
        return rel

    def create(
        self,
        name: str,
        description: str,
        type: MemoryType | str | None,
        body: str,
        *,
        rel: str | None = None,
        overwrite: bool = False,
        extra: Mapping[str, Any] | None = None,
    ) -> Memory:
        """Create a new memory file (``<slug of name>.md`` unless ``rel`` is given); ``extra``:
        more frontmatter keys (``applies_when``), written in the same single write."""
        if not name.strip():
            raise FrontmatterError("a memory needs a non-empty name")
        target = self.rel(rel) if rel else slugify(name) + ".md"
        if not target.endswith(".md"):
            raise UnsafePathError(f"memory files end in .md: {target!r}")
        check_memory_target(target)
        stamp = today(self._clock)
        memory = Memory(
            path=target,
            name=name.strip(),
            description=" ".join(description.split()),
            type=str(type) if type is not None else None,
            body=body if body.endswith("\n") or not body else body + "\n",
            created=stamp,
            updated=stamp,
            extra=dict(extra or {}),
        )
        with self.lock():
            if not overwrite and self.path_of(target).exists():
                raise MemoryExistsError(f"{target} already exists")
            self._write(target, frontmatter.dump_memory(memory))
        return memory

    def save(self, memory: Memory, *, expected_hash: str | None = None) -> Memory:
        """Write a whole memory (create or replace), stamping ``updated``."""
        rel = self.rel(memory.path)
        check_memory_target(rel)
        memory.path = rel
        memory.updated = today(self._clock)
        memory.created = memory.created or memory.updated
        with self.lock():
            self._check_expected(rel, expected_hash)
            self._write(rel, frontmatter.dump_memory(memory))
        return memory

    def update(self, name: str | Path, change: Callable[[Memory], Memory | None]) -> Memory:
        """Read-modify-write one memory under the lock (no update can be lost in between)."""
        rel = self.rel(name)
        check_memory_target(rel)
        with self.lock():
            current = self.read(rel)
            result = change(current) or current
            result.path = rel
            return self.save(result)

    def edit(
        self,
        name: str | Path,
        old: str,
        new: str,
        *,
        replace_all: bool = False,
        expected_hash: str | None = None,
    ) -> str:
        """Replace an exact string in a file; it must occur once unless ``replace_all``."""
        rel = self.rel(name)
        check_writable(rel)
        if old == "":
            raise EditError("old text must not be empty")
        if old == new:
            raise EditError("old and new text are identical; nothing to change")
        with self.lock():
            self._check_expected(rel, expected_hash)
            text = self.read_text(rel)
            count = text.count(old)
            if count == 0:
                raise EditError(f"the text to replace was not found in {rel}")
            if count > 1 and not replace_all:
                raise EditError(
                    f"the text to replace occurs {count} times in {rel}; give more context "
                    "so it is unique, or replace all"
                )
            updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
            self._write(rel, updated)
        return rel

    def delete(self, name: str | Path, *, expected_hash: str | None = None) -> str:
        rel = self.rel(name)
        check_writable(rel)
        with self.lock():
            path = self.path_of(rel)
            if not path.is_file():
                raise MemoryNotFoundError(f"no such memory: {rel}")
            self._check_expected(rel, expected_hash)
            with self._intent(rel):
                path.unlink()
                fsync_dir(path.parent)
                self._index_remove(rel)
        return rel

    def rename(self, old: str | Path, new: str | Path) -> str:
        src_rel, dst_rel = self.rel(old), self.rel(new)
        check_memory_target(src_rel)
        check_memory_target(dst_rel)
        with self.lock():
            src, dst = self.path_of(src_rel), self.path_of(dst_rel)
            if not src.is_file():
                raise MemoryNotFoundError(f"no such memory: {src_rel}")
            if dst.exists():
                raise MemoryExistsError(f"{dst_rel} already exists")
            text = self.read_text(src_rel)
            self._guard(dst_rel, text)
            with self._intent(src_rel, dst_rel):
                _link_into_place(src, dst, dst_rel)
                src.unlink()
                fsync_dir(dst.parent)
                fsync_dir(src.parent)
                self._index_remove(src_rel)
                self._index_upsert(dst_rel, text)
        return dst_rel

    # -- MEMORY.md upkeep ----------------------------------------------------------------
    def _index_upsert(self, rel: str, text: str) -> None:
        index.upsert_file_entry(self.root, rel, text)
        index_sections.settle_for(self.root, rel, text)

    def _index_remove(self, rel: str) -> None:
        index.remove_file_entry(self.root, rel)
        index_sections.settle_for(self.root, rel, None)

    def check_index(self) -> builtins.list[index.IndexReport]:
        """Drift between each MEMORY.md (with its sections) and the current files in its scope
        (nothing is changed); retired, superseded and expired memories are left out on purpose."""
        current = [h.filename for h in current_only(self.scan().headers)]
        return index_sections.check_dir(self.root, current)

    def rebuild_index(self) -> builtins.list[str]:
        """Regenerate entry lines from frontmatter; keep hand-written non-entry lines."""
        headers = sorted(current_only(self.scan().headers), key=lambda h: h.filename)
        entries = [(h.filename, h.name or Path(h.filename).stem, h.description) for h in headers]
        with self.lock():
            remove_stale_temp_files(self.root)
            written = index.rebuild_entries(self.root, entries)
            for index_rel in index_sections.scopes(self.root):
                written += index_sections.settle(self.root, index_rel, whole=True)
            return sorted(set(written))


def _link_into_place(src: Path, dst: Path, dst_rel: str) -> None:
    """Hard-link ``src`` at ``dst`` (never replaces a file that appeared there meanwhile);
    directories created for it are removed again if the link fails."""
    created = make_dirs(dst.parent)
    try:
        os.link(src, dst)
    except FileExistsError:
        remove_empty_dirs(created)
        raise MemoryExistsError(f"{dst_rel} already exists") from None
    except BaseException:
        remove_empty_dirs(created)
        raise
