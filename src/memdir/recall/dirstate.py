"""Which memory files changed since the last look, without stat-ing every file every turn.

Adding, removing or renaming a file changes its directory's mtime, and every write through the
store is an atomic rename, so a poll stats each *directory* and lists only the ones whose mtime
moved. Within a listed directory only new names and names whose inode changed (an
atomic rename puts a new inode under the old name) are stat-ed, so a flat directory of 100,000
memories costs one ``scandir`` per change. An in-place edit (an editor or a tool that truncates
and rewrites a file) moves neither the directory's mtime nor the inode, so files are also
stat-ed in full: on every poll while the dir holds at most
:data:`FULL_STAT_LIMIT` files (cheap), and at most every ``sweep_interval`` seconds above that.

Invariants:
- The listing rules are :func:`memdir.scan.iter_memory_files`' (``*.md`` except ``MEMORY.md``
  and the daily logs,
  no hidden entries, symlinked directories not entered, symlinked files followed).
- A directory whose mtime is within :data:`RACY_SECONDS` of the moment it was listed is listed
  again next time: a file created in the same clock tick as the listing would otherwise be missed
  (file systems stamp mtimes at a coarser grain than the clock; git calls this "racy clean").
- Nothing here reads file contents or raises for a vanished or unreadable entry.
"""

from __future__ import annotations

import os
import stat as stat_mod
import time
from dataclasses import dataclass, field
from pathlib import Path

from memdir.index import ENTRYPOINT_NAME, UNINDEXED_PREFIXES
from memdir.scan import link_inside

FULL_STAT_LIMIT = 500
SWEEP_INTERVAL = 30.0
RACY_SECONDS = 2.0

FileStat = tuple[int, int, float, int]  # (mtime_ns, size, mtime as float seconds, inode)


@dataclass
class Delta:
    """Files added or modified (rel → path) and removed since the previous poll."""

    changed: dict[str, Path] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)
    full: bool = False  # True when every file was stat-ed (first poll, small dir or sweep)

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed)


class DirState:
    """The memory files under ``root`` with their stats, kept current by :meth:`poll`."""

    def __init__(
        self,
        root: Path,
        *,
        sweep_interval: float = SWEEP_INTERVAL,
        full_stat_limit: int = FULL_STAT_LIMIT,
    ) -> None:
        self.root = root
        self._real_root = Path(os.path.realpath(root))
        self.sweep_interval = sweep_interval
        self.full_stat_limit = full_stat_limit
        self.files: dict[str, FileStat] = {}
        self._dirs: dict[str, int] = {}  # dir prefix ("" or "a/b/") → mtime_ns when listed
        self._racy: set[str] = set()
        self._by_dir: dict[str, set[str]] = {}
        self._last_sweep = float("-inf")
        self._polled = False

    def poll(self) -> Delta:
        """Bring :attr:`files` up to date and say what changed."""
        now = time.monotonic()
        small = len(self.files) <= self.full_stat_limit
        due = now - self._last_sweep >= self.sweep_interval
        delta = self._full() if not self._polled or small or due else self._dirs_only()
        self._polled = True
        if delta.full:
            self._last_sweep = now
        return delta

    # -- the two kinds of poll ---------------------------------------------------------------
    def _full(self) -> Delta:
        """List every directory and stat every file."""
        delta = Delta(full=True)
        seen_dirs: dict[str, int] = {}
        seen_files: dict[str, FileStat] = {}
        by_dir: dict[str, set[str]] = {}
        racy: set[str] = set()
        stack = [""]
        while stack:
            prefix = stack.pop()
            names = by_dir.setdefault(prefix, set())
            listed = self._list(prefix, stack, seen_files, names, trust_inodes=False)
            if listed is None:
                by_dir.pop(prefix, None)
                continue
            seen_dirs[prefix] = listed
            if self._is_racy(listed):
                racy.add(prefix)
        for rel, st in seen_files.items():
            if self.files.get(rel) != st:
                delta.changed[rel] = self.root / rel
        delta.removed = set(self.files) - set(seen_files)
        self.files, self._dirs, self._by_dir, self._racy = seen_files, seen_dirs, by_dir, racy
        return delta

    def _dirs_only(self) -> Delta:
        """Stat every known directory; list again only those that changed (or were racy)."""
        delta = Delta()
        stack = [p for p in self._dirs if self._moved(p)]
        while stack:
            prefix = stack.pop()
            old = self._by_dir.get(prefix, set())
            found: dict[str, FileStat] = {}
            names: set[str] = set()
            subdirs: list[str] = []
            listed = self._list(prefix, subdirs, found, names, trust_inodes=True)
            if listed is None:
                self._forget_dir(prefix, delta)
                continue
            self._dirs[prefix] = listed
            (self._racy.add if self._is_racy(listed) else self._racy.discard)(prefix)
            for rel, st in found.items():
                if self.files.get(rel) != st:
                    delta.changed[rel] = self.root / rel
                    self.files[rel] = st
            for rel in old - names:
                self.files.pop(rel, None)
                delta.removed.add(rel)
            self._by_dir[prefix] = names
            stack.extend(sub for sub in subdirs if sub not in self._dirs)
            gone = {p for p in self._dirs if _parent(p) == prefix} - set(subdirs)
            for sub in gone:
                self._forget_dir(sub, delta)
        return delta

    # -- helpers -------------------------------------------------------------------------------
    def _moved(self, prefix: str) -> bool:
        if prefix in self._racy:
            return True
        try:
            return os.stat(self.root / prefix).st_mtime_ns != self._dirs[prefix]
        except OSError:
            return True

    def _is_racy(self, mtime_ns: int) -> bool:
        return time.time() - mtime_ns / 1e9 < RACY_SECONDS

    def _list(
        self,
        prefix: str,
        subdirs: list[str],
        files: dict[str, FileStat],
        names: set[str],
        *,
        trust_inodes: bool,
    ) -> int | None:
        """List one directory: its mtime_ns, or None when it is gone or unreadable.

        With ``trust_inodes`` a known regular file whose inode is unchanged keeps its recorded
        stat (no system call): the listing is then as cheap as ``scandir`` itself.
        """
        directory = self.root / prefix if prefix else self.root
        try:
            mtime_ns = os.stat(directory).st_mtime_ns
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            return None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not (rel + "/").startswith(UNINDEXED_PREFIXES):
                        subdirs.append(rel + "/")
                elif entry.name.endswith(".md") and entry.name != ENTRYPOINT_NAME:
                    known = self.files.get(rel) if trust_inodes else None
                    if known is not None and not entry.is_symlink() and known[3] == entry.inode():
                        files[rel] = known
                        names.add(rel)
                        continue
                    if entry.is_symlink() and not link_inside(self._real_root, entry, None):
                        continue  # a link out of the memory dir is never content (scan's rule)
                    st = entry.stat(follow_symlinks=True)
                    if stat_mod.S_ISREG(st.st_mode):
                        files[rel] = (st.st_mtime_ns, st.st_size, st.st_mtime, entry.inode())
                        names.add(rel)
            except OSError:
                continue
        return mtime_ns

    def _forget_dir(self, prefix: str, delta: Delta) -> None:
        """A directory vanished: drop it, its subdirectories and every file below it."""
        for sub in [p for p in self._dirs if p.startswith(prefix)]:
            self._dirs.pop(sub, None)
            self._racy.discard(sub)
            for rel in self._by_dir.pop(sub, set()):
                if self.files.pop(rel, None) is not None:
                    delta.removed.add(rel)
                delta.changed.pop(rel, None)


def _parent(prefix: str) -> str | None:
    """The parent prefix of a directory prefix ("a/b/" → "a/", "a/" → ""); None for the root."""
    if not prefix:
        return None
    head = prefix[:-1].rpartition("/")[0]
    return head + "/" if head else ""


__all__ = ["FULL_STAT_LIMIT", "RACY_SECONDS", "SWEEP_INTERVAL", "Delta", "DirState"]
