"""The ``memory_20250818`` command set (view/create/str_replace/insert/delete/rename) over a store.

This is the SDK-independent half of the Anthropic memory-tool backend: plain functions of plain
arguments that return the result text, or raise a :class:`~memdir.errors.MemdirError` whose
message is the text the model should see.

Invariants:
- Result and error texts are the ones the Anthropic SDK's own ``BetaLocalFilesystemMemoryTool``
  produces (tests run both side by side), so a model prompted for that tool behaves the same here.
- ``/memories`` maps onto the store's root. Every name goes through the store's path checks, so
  nothing outside the root is read or written; this is deliberately stricter than the SDK, which
  accepts URL-encoded or backslash names as literal file names.
- Every write goes through :class:`~memdir.store.MemoryStore`: atomic, under the store lock,
  guarded (e.g. the team secret scanner), and MEMORY.md kept in step. Read-modify-write commands
  hold the store lock across the read and the write, so no concurrent update is lost.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Sequence
from pathlib import Path

from memdir.atomic import ensure_dir, fsync_dir
from memdir.controlfiles import check_writable
from memdir.errors import (
    EditError,
    MemoryExistsError,
    MemoryNotFoundError,
    UnreadableFileError,
    UnsafePathError,
)
from memdir.pathsafe import check_relative, is_within
from memdir.store import MemoryStore

ROOT = "/memories"
MAX_LINES = 999_999
_NUM_WIDTH = len(str(MAX_LINES))


def format_size(n: int) -> str:
    """Sizes as the SDK prints them in listings: ``0B``, ``512B``, ``4K``, ``1.5M``."""
    if n == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((n.bit_length() - 1) // 10, len(units) - 1)
    size = n / (1024**i)
    return f"{int(size)}{units[i]}" if size == int(size) else f"{size:.1f}{units[i]}"


def _numbered(lines: Sequence[str], first: int) -> str:
    return "\n".join(f"{str(i + first).rjust(_NUM_WIDTH)}\t{ln}" for i, ln in enumerate(lines))


def _split_keep_cr(content: str) -> list[str]:
    """Split on LF only (a CR stays with its line), without the empty tail of a final newline."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class MemoryCommands:
    """The six memory-tool commands on one :class:`MemoryStore` (``/memories`` = its root)."""

    def __init__(self, store: MemoryStore):
        self.store = store
        ensure_dir(store.root)

    # -- paths ----------------------------------------------------------------------------
    def rel(self, path: str) -> str:
        """The store-relative name for a ``/memories/...`` path; ``""`` means the root itself."""
        if path != ROOT and not path.startswith(ROOT + "/"):
            raise UnsafePathError(f"Path must start with /memories, got: {path}")
        tail = path[len(ROOT) :].lstrip("/")
        # The SDK resolves "a/../b" to "b"; lexical normalisation keeps that while the store's
        # checks below still refuse anything that leaves the root, physically or lexically.
        norm = posixpath.normpath(tail) if tail else "."
        if norm == ".":
            return ""
        escape = UnsafePathError(f"Path {path} would escape /memories directory")
        if norm == ".." or norm.startswith("../"):
            raise escape
        try:
            rel = check_relative(norm)
            self.store.path_of(rel)
        except UnsafePathError:
            raise escape from None
        return rel

    def _full(self, rel: str) -> Path:
        return self.store.root if rel == "" else self.store.path_of(rel)

    def _require_file(self, path: str) -> str:
        rel = self.rel(path)
        full = self._full(rel)
        if not full.exists():
            raise MemoryNotFoundError(
                f"The path {path} does not exist. Please provide a valid path."
            )
        if not full.is_file():
            raise UnreadableFileError(f"The path {path} is not a file.")
        return rel

    # -- commands ------------------------------------------------------------------------
    def view(self, path: str, view_range: Sequence[int] | None = None) -> str:
        rel = self.rel(path)
        if rel:
            check_writable(rel)  # hidden paths are not memories: not even a listing of .git
        full = self._full(rel)
        try:
            leaf = os.stat(full)  # the path is already checked to resolve inside the root
        except (FileNotFoundError, NotADirectoryError):
            raise MemoryNotFoundError(
                f"The path {path} does not exist. Please provide a valid path."
            ) from None
        if stat.S_ISDIR(leaf.st_mode):
            rows = [f"{format_size(leaf.st_size)}\t{path}"]
            rows += [f"{size}\t{path}/{name}" for size, name in self._listing(full, "", 1)]
            return (
                f"Here're the files and directories up to 2 levels deep in {path}, "
                "excluding hidden items:\n" + "\n".join(rows)
            )
        if not stat.S_ISREG(leaf.st_mode):
            raise UnreadableFileError(f"Unsupported file type for {path}")
        lines = self.store.read_text(rel).split("\n")
        if len(lines) > MAX_LINES:
            raise UnreadableFileError(f"File {path} exceeds maximum line limit of 999,999 lines.")
        shown, first = lines, 1
        if view_range and len(view_range) == 2:
            start = max(1, view_range[0]) - 1
            end = len(lines) if view_range[1] == -1 else view_range[1]
            shown, first = lines[start:end], start + 1
        return f"Here's the content of {path} with line numbers:\n" + _numbered(shown, first)

    def _listing(self, directory: Path, prefix: str, depth: int) -> list[tuple[str, str]]:
        """(size, relative name) rows two levels deep; hidden and escaping entries skipped."""
        if depth > 2:
            return []
        try:
            entries = sorted(directory.iterdir(), key=lambda p: p.name)
        except OSError:
            return []
        real_root = Path(os.path.realpath(self.store.root))
        rows: list[tuple[str, str]] = []
        for item in entries:
            if item.name.startswith("."):
                continue
            name = f"{prefix}/{item.name}" if prefix else item.name
            try:
                if not is_within(real_root, Path(os.path.realpath(item, strict=True))):
                    continue
                size = item.stat().st_size
            except (OSError, RuntimeError):
                continue
            if item.is_dir():
                rows.append((format_size(size), name + "/"))
                if depth < 2:
                    rows += self._listing(item, name, depth + 1)
            elif item.is_file():
                rows.append((format_size(size), name))
        return rows

    def create(self, path: str, file_text: str) -> str:
        rel = self.rel(path)
        if rel == "":
            raise MemoryExistsError(f"File {path} already exists")
        try:
            self.store.write_text(rel, file_text, create_only=True)
        except MemoryExistsError:
            raise MemoryExistsError(f"File {path} already exists") from None
        return f"File created successfully at: {path}"

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        with self.store.lock():
            rel = self._require_file(path)
            content = self.store.read_text(rel)
            count = content.count(old_str)
            if count == 0:
                raise EditError(
                    f"No replacement was performed, old_str `{old_str}` did not appear "
                    f"verbatim in {path}."
                )
            if count > 1:
                raise EditError(
                    f"No replacement was performed. Multiple occurrences of old_str `{old_str}` "
                    f"in lines: {', '.join(map(str, _match_lines(content, old_str)))}. "
                    "Please ensure it is unique"
                )
            changed = content[: content.find(old_str)].count("\n")
            updated = content.replace(old_str, new_str)
            self.store.write_text(rel, updated)
        lines = updated.split("\n")
        lo, hi = max(0, changed - 2), min(len(lines), changed + 3)
        return (
            "The memory file has been edited. Here is the snippet showing the change "
            "(with line numbers):\n" + _numbered(lines[lo:hi], lo + 1)
        )

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        with self.store.lock():
            rel = self._require_file(path)
            lines = _split_keep_cr(self.store.read_text(rel))
            if insert_line < 0 or insert_line > len(lines):
                raise EditError(
                    f"Invalid `insert_line` parameter: {insert_line}. "
                    f"It should be within the range [0, {len(lines)}]."
                )
            lines.insert(insert_line, insert_text.rstrip("\n"))
            updated = "\n".join(lines)
            self.store.write_text(rel, updated if updated.endswith("\n") else updated + "\n")
        return f"The file {path} has been edited."

    def delete(self, path: str) -> str:
        rel = self.rel(path)
        if rel == "":
            raise UnsafePathError("Cannot delete the /memories directory itself")
        check_writable(rel)
        with self.store.lock():
            full = self._full(rel)
            if full.is_file():
                self.store.delete(rel)
            elif full.is_dir():
                _refuse_hidden_inside(rel, full)
                self._delete_tree(rel, full)
            else:
                raise MemoryNotFoundError(f"The path {path} does not exist")
        return f"Successfully deleted {path}"

    def _delete_tree(self, rel: str, full: Path) -> None:
        # Files go through the store one by one so each leaves MEMORY.md; symlinks are unlinked
        # as links (never followed), then the emptied directories are removed bottom-up.
        for dirpath, dirnames, filenames in os.walk(full, topdown=False):
            base = Path(dirpath)
            for name in filenames:
                item = base / name
                if item.is_symlink():
                    item.unlink()
                else:
                    self.store.delete(f"{rel}/{item.relative_to(full).as_posix()}")
            for name in dirnames:
                sub = base / name
                sub.unlink() if sub.is_symlink() else sub.rmdir()
        full.rmdir()
        fsync_dir(full.parent)

    def rename(self, old_path: str, new_path: str) -> str:
        old_rel, new_rel = self.rel(old_path), self.rel(new_path)
        if old_rel == "":
            raise UnsafePathError("Cannot rename the /memories directory itself")
        check_writable(old_rel)
        if new_rel:
            check_writable(new_rel)
        with self.store.lock():
            old_full, new_full = self._full(old_rel), self._full(new_rel)
            if new_rel == "" or os.path.lexists(new_full):
                raise MemoryExistsError(f"The destination {new_path} already exists")
            if old_full.is_dir() and not old_full.is_symlink():
                if (new_rel + "/").startswith(old_rel + "/"):
                    raise UnsafePathError(f"Cannot move {old_path} into itself")
                _refuse_hidden_inside(old_rel, old_full)
                self._rename_tree(old_rel, new_rel, old_full)
            elif old_full.is_file():
                self.store.rename(old_rel, new_rel)
            else:
                raise MemoryNotFoundError(f"The path {old_path} does not exist")
        return f"Successfully renamed {old_path} to {new_path}"

    def _rename_tree(self, old_rel: str, new_rel: str, old_full: Path) -> None:
        files: list[str] = []
        links: list[str] = []
        dirs: list[str] = []
        for dirpath, dirnames, filenames in os.walk(old_full):
            base = Path(dirpath).relative_to(old_full)
            for name in [*filenames, *dirnames]:
                sub = (base / name).as_posix()
                if (Path(dirpath) / name).is_symlink():
                    links.append(sub)
                elif name in filenames:
                    files.append(sub)
                else:
                    dirs.append(sub)
        # Guards see every file under its new name before anything moves, so a refused file
        # (e.g. a secret bound for team/) leaves the whole tree where it was.
        for sub in files:
            text = self.store.read_text(f"{old_rel}/{sub}")
            for guard in self.store.guards:
                guard(f"{new_rel}/{sub}", text)
        new_full = self._full(new_rel)
        for sub in ["", *dirs]:
            ensure_dir(new_full / sub)
        for sub in files:
            self.store.rename(f"{old_rel}/{sub}", f"{new_rel}/{sub}")
        for sub in links:  # moved as links, never followed (walk does not descend into them)
            os.rename(old_full / sub, new_full / sub)
        for dirpath, _dirnames, _filenames in os.walk(old_full, topdown=False):
            Path(dirpath).rmdir()
        fsync_dir(old_full.parent)


def _refuse_hidden_inside(rel: str, full: Path) -> None:
    """A directory holding hidden files (a .git, temp files, a lock) is not moved or deleted
    as a tree: those are not memories, and half a tree must not be left behind."""
    for _dirpath, dirnames, filenames in os.walk(full):
        for name in [*dirnames, *filenames]:
            if name.startswith("."):
                check_writable(f"{rel}/{name}")


def _match_lines(content: str, needle: str) -> list[int]:
    """1-based line numbers of every (overlapping) occurrence, as the SDK reports them."""
    found: list[int] = []
    start = 0
    while (pos := content.find(needle, start)) != -1:
        found.append(content[:pos].count("\n") + 1)
        start = pos + 1
    return found
