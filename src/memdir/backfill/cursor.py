"""Which past transcripts a backfill has already learnt from: one small JSON state file.

Invariants:

* A transcript is done for its exact ``(size, mtime_ns)``: a session that grew since (resumed,
  continued) is read again, and only the messages after the last one learnt from
  (``last_uuid``) count as new, so nothing is learnt twice.
* The file is rewritten atomically (:func:`memdir.atomic.atomic_write`) after every transcript,
  so a backfill killed at any moment leaves the state of the last finished transcript — never a
  torn file — and the next run resumes there.
* It is derived bookkeeping beside the caches, never in the memory dir: deleting it only makes
  the next backfill read every session again (the extraction write path merges what it already
  holds, so even then no lesson is written twice).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memdir.atomic import atomic_write

VERSION = 1


@dataclass(frozen=True, slots=True)
class Done:
    """One transcript as it was when a backfill finished with it."""

    host: str
    size: int
    mtime_ns: int
    last_uuid: str | None
    status: str  # "learnt", or why it was skipped ("unreadable: ...")
    written: int = 0


class BackfillCursor:
    """The state file: transcript path -> :class:`Done`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.done: dict[str, Done] = _load(path)

    def get(self, transcript: Path) -> Done | None:
        return self.done.get(str(transcript))

    def is_done(self, transcript: Path, size: int, mtime_ns: int) -> bool:
        seen = self.get(transcript)
        return seen is not None and seen.size == size and seen.mtime_ns == mtime_ns

    def mark(self, transcript: Path, done: Done) -> None:
        """Record ``done`` and write the whole state atomically before returning."""
        self.done[str(transcript)] = done
        payload = {"version": VERSION, "done": {k: asdict(v) for k, v in self.done.items()}}
        atomic_write(self.path, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")


def _load(path: Path) -> dict[str, Done]:
    """The recorded state; an absent, unreadable or foreign file is an empty one (derived)."""
    try:
        raw: Any = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    entries = raw.get("done") if isinstance(raw, dict) and raw.get("version") == VERSION else None
    out: dict[str, Done] = {}
    for key, value in (entries or {}).items():
        if isinstance(value, dict):
            try:
                out[key] = Done(**value)
            except TypeError:
                continue
    return out


def file_stamp(path: Path) -> tuple[int, int]:
    """``(size, mtime_ns)`` of ``path`` (following a link: the file that would be read)."""
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


__all__ = ["BackfillCursor", "Done", "file_stamp"]
