"""Did anyone but extraction write memory since a moment? Decided from the memory dir itself.

Extraction must not record what the agent already saved this turn (the reference's skip rule).
Looking for write-tool names in the transcript misses every writer it does not know — memdir's
own MCP ``memory_save``, a shell ``cat >``, another host's tool — and the extraction then
rewrites the agent's file in its own template. So the rule here is about the files: a memory
file whose mtime is at or after the turn started was written by someone this turn.

Invariants:
- Extraction's own writes do not count: every run records the ``(path, mtime_ns)`` it left
  behind in :class:`OwnWrites` (one small file in the cache dir, shared by every session of the
  memory dir, so a parallel session's extraction is not mistaken for this agent; the hook
  workers take turns from the check to the record, ``adapters.hooks.extraction``); a file whose
  mtime still equals the recorded one is skipped, a later edit of it counts again.
- ``MEMORY.md`` (any scope) does not count: the store rewrites it with every save, and a pointer
  line alone is not a memory. Hidden paths (locks, temps, ``.git``) and the daily logs (a
  journal; the extractor itself notes sightings there) do not count: the files walked are
  :func:`memdir.scan.iter_memory_files`', the one listing rule.
- Bounded and never raising: a walk stops at the first change found and at :data:`MAX_FILES`
  files; unreadable entries are skipped. A false "wrote" only skips one extraction (the cursor
  moves on, nothing is lost); a false "did not write" is what loses data, so ties count as writes.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from memdir.atomic import atomic_write, locked
from memdir.scan import iter_memory_files

MAX_FILES = 100_000
MAX_OWN_WRITES = 500  # recent extraction writes remembered per memory dir
# Coarse file-system clocks (1-2 s on some) can stamp a write slightly before the turn began.
CLOCK_SLACK_NS = 1_000_000_000


def changed_since(
    memory_dir: Path, since_ns: int, *, own: dict[str, int] | None = None
) -> Path | None:
    """The first memory file modified at or after ``since_ns`` (minus the clock slack) that
    extraction did not write itself; None when there is none."""
    own = own or {}
    threshold = since_ns - CLOCK_SLACK_NS
    for seen, (_rel, entry) in enumerate(iter_memory_files(memory_dir), start=1):
        if seen > MAX_FILES:
            return None
        with contextlib.suppress(OSError):
            mtime = entry.stat(follow_symlinks=False).st_mtime_ns
            if mtime >= threshold and own.get(os.path.abspath(entry.path)) != mtime:
                return Path(entry.path)
    return None


class OwnWrites:
    """``<cache dir>/hooks/extracted.json``: the files extraction wrote, with their mtimes."""

    def __init__(self, cache_dir: Path) -> None:
        self.path = cache_dir / "hooks" / "extracted.json"

    def load(self) -> dict[str, int]:
        try:
            raw = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return {}  # derived: a lost record costs one skipped extraction at most
        if not isinstance(raw, dict):
            return {}
        return {str(k): v for k, v in raw.items() if isinstance(v, int)}

    def add(self, paths: Iterable[Path]) -> None:
        """Remember the current mtime of each of ``paths`` (missing ones are dropped)."""
        fresh: dict[str, int] = {}
        for path in paths:
            with contextlib.suppress(OSError):
                fresh[os.path.abspath(path)] = os.stat(path, follow_symlinks=False).st_mtime_ns
        if not fresh:
            return
        with locked(self.path.with_name("extracted.lock"), timeout=5.0):
            merged = {k: v for k, v in self.load().items() if k not in fresh}
            merged.update(fresh)
            kept = dict(list(merged.items())[-MAX_OWN_WRITES:])
            atomic_write(self.path, json.dumps(kept, ensure_ascii=False))
