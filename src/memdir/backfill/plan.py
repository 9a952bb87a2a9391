"""What a backfill will read: this project's past transcripts of each host, oldest first.

The service never knows a host's format or where it keeps its files. An entry point hands it one
:class:`TranscriptSource` per host (built from that host's dialect), which lists the project's
transcripts and reads one into memdir's entries; the plan only orders, filters and counts.

Oldest first by modification time, so a lesson seen in many sessions is first written from the
earliest and then gains evidence (and, for a restated rule, the newest wording) from the later
ones — the order the sessions happened in.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from memdir.backfill.cursor import BackfillCursor
from memdir.transcripts import Entry


class TranscriptSource(Protocol):
    """One host's past sessions for this project."""

    @property
    def host(self) -> str: ...  # the CLI word: "claude-code", "codex", "gemini"

    def transcripts(self) -> Sequence[Path]:
        """This project's transcript files (any order; unreadable ones included, to report)."""
        ...

    def read(self, path: Path) -> list[Entry]:
        """The transcript as memdir's entries; a :class:`~memdir.errors.MemdirError` or
        ``OSError`` saying in one line why it cannot be read."""
        ...


@dataclass(frozen=True, slots=True)
class Item:
    """One transcript in the plan."""

    host: str
    path: Path
    size: int
    mtime_ns: int
    state: str  # "new" or "grown" (read before, changed since)

    @property
    def modified(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.mtime_ns / 1e9).astimezone()


@dataclass(frozen=True, slots=True)
class Plan:
    items: list[Item]
    done: int  # transcripts already learnt from, as they are now
    total: int  # every transcript found (before --since and --limit)
    skipped: list[tuple[str, Path, str]]  # (host, path, why) listed but not statable

    @property
    def bytes(self) -> int:
        return sum(i.size for i in self.items)


def make_plan(
    sources: Sequence[TranscriptSource],
    cursor: BackfillCursor,
    *,
    since: dt.date | None = None,
    limit: int | None = None,
) -> Plan:
    """The transcripts still to learn from, oldest first, at most ``limit`` of them."""
    found: list[Item] = []
    skipped: list[tuple[str, Path, str]] = []
    done = total = 0
    seen: set[Path] = set()
    floor = _start_of(since)
    for source in sources:
        for path in source.transcripts():
            if path in seen:
                continue
            seen.add(path)
            try:
                st = os.stat(path)
            except OSError as exc:
                skipped.append((source.host, path, exc.strerror or str(exc)))
                continue
            total += 1
            if floor is not None and st.st_mtime_ns < floor:
                continue
            if cursor.is_done(path, st.st_size, st.st_mtime_ns):
                done += 1
                continue
            state = "grown" if cursor.get(path) is not None else "new"
            found.append(Item(source.host, path, st.st_size, st.st_mtime_ns, state))
    found.sort(key=lambda i: (i.mtime_ns, str(i.path)))
    if limit is not None:
        found = found[: max(limit, 0)]
    return Plan(found, done, total, skipped)


def _start_of(day: dt.date | None) -> int | None:
    if day is None:
        return None
    start = dt.datetime.combine(day, dt.time()).astimezone()  # local midnight
    return int(start.timestamp() * 1e9)


__all__ = ["Item", "Plan", "TranscriptSource", "make_plan"]
