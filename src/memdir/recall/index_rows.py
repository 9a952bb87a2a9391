"""The records of the search index: one :class:`IndexedDoc` per memory row, and refresh reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.recall.dirstate import FileStat

MTIME_TOLERANCE = 1e-6  # seconds; header mtimes are floats and round-trip through JSON


@dataclass(slots=True)
class IndexedDoc:
    """One memory as the index knows it (no body kept: texts live in the files)."""

    rel: str
    mtime: float
    size: int
    sha256: str
    name: str
    description: str
    passages: int = 1  # embedding rows this memory owns (long bodies are sliced)
    type: str = ""
    applies_when: tuple[str, ...] = ()

    def to_json(self) -> list[Any]:
        return [
            self.rel,
            self.mtime,
            self.size,
            self.sha256,
            self.name,
            self.description,
            self.passages,
            self.type,
            list(self.applies_when),
        ]

    @classmethod
    def from_json(cls, row: list[Any]) -> IndexedDoc:
        rel, mtime, size, sha, name, description, passages, mtype, situations = row
        return cls(
            str(rel),
            float(mtime),
            int(size),
            str(sha),
            str(name),
            str(description),
            int(passages),
            str(mtype),
            tuple(str(s) for s in situations),
        )


@dataclass
class RefreshReport:
    """What a refresh did: files (re)indexed, dropped, and any cache problem it recovered from.

    ``embedded`` counts the memories indexed; ``pending`` the passages still waiting for the
    model (ranked by the fast stage until then, see :mod:`memdir.recall.static_embed`).
    """

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    embedded: int = 0
    rebuilt: bool = False
    compacted: bool = False
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    pending: int = 0
    backlog: int = 0  # changed files left unread at the refresh's deadline (read next time)

    @property
    def modified(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.rebuilt)


@dataclass
class NewRow:
    doc: IndexedDoc
    terms: str
    passages: list[str]
    replaces: int | None
    hashes: list[bytes] = field(default_factory=list)


def starts_of(docs: list[IndexedDoc]) -> npt.NDArray[np.int64]:
    counts = np.fromiter((d.passages for d in docs), dtype=np.int64, count=len(docs))
    return np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if len(docs) else counts


def same_stat(doc: IndexedDoc, st: FileStat) -> bool:
    return abs(doc.mtime - st[2]) <= MTIME_TOLERANCE and doc.size == st[1]


def safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


__all__ = ["IndexedDoc", "NewRow", "RefreshReport", "safe_name", "same_stat", "starts_of"]
