"""What ``memdir doctor`` finds in a memory dir: the one diagnosis every surface shows.

The CLI (``memdir doctor``) and the browser (``memdir ui``'s Health page) both call
:func:`diagnose`, so they list exactly the same problems. Nothing here writes; repairs are
:func:`memdir.repair.fix`. Expired, superseded and retired memories are not problems: they are
listed apart (``inactive``) so nothing hides.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from memdir import repair
from memdir.index import load_for_prompt, read_entrypoint
from memdir.model import MEMORY_TYPES, MemoryHeader
from memdir.recall.memory_text import RECALL_READ_BYTES
from memdir.store import MemoryStore
from memdir.team.credential_report import credential_problems
from memdir.validity import header_validity

# Kinds ``doctor --fix`` can repair, for the surfaces that offer a one-click fix.
FIXABLE_KINDS = frozenset({"frontmatter-quoted", "stale-temp", "interrupted-write"})


@dataclass
class Diagnosis:
    memory_dir: str
    memories: int
    index_lines: int
    problems: list[dict[str, str]] = field(default_factory=list)
    inactive: list[dict[str, str]] = field(default_factory=list)
    partly_indexed: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "memory_dir": self.memory_dir,
            "memories": self.memories,
            "index_lines": self.index_lines,
            "problems": self.problems,
            "inactive": self.inactive,
            "partly_indexed": self.partly_indexed,
        }


def index_reports(store: MemoryStore) -> list[dict[str, Any]]:
    """Each MEMORY.md's drift from the files in its scope, as plain dicts."""
    return [
        {
            "index": r.index,
            "ok": r.ok,
            "dead_links": r.dead_links,
            "unindexed": r.unindexed,
            "duplicates": r.duplicates,
            "long_lines": r.long_lines,
            "over_limit": r.over_limit,
        }
        for r in store.check_index()
    ]


def inactive(
    headers: list[MemoryHeader], today: dt.date | None = None
) -> dict[str, tuple[str, str]]:
    """Expired, superseded and retired memories: ``{path: (status, reason)}``."""
    day = today or dt.date.today()
    out: dict[str, tuple[str, str]] = {}
    for h in headers:
        if h.validity:
            v = header_validity(h)
            if not v.is_current(day):
                out[h.filename] = (v.status(day), v.reason(day))
    return out


def diagnose(store: MemoryStore) -> Diagnosis:
    """Every problem doctor reports (crash leftovers, headers, index drift, credentials)."""
    problems: list[dict[str, str]] = [
        {"kind": p.kind, "path": p.path, "detail": p.detail} for p in repair.crash_leftovers(store)
    ]
    result = store.scan(limit=None)
    for issue in [*result.errors, *result.notes]:
        problems.append({"kind": issue.kind, "path": str(issue.path), "detail": issue.reason})
    for h in result.headers:
        if h.filename.startswith("logs/"):  # daily logs have no frontmatter
            continue
        if not h.description:
            problems.append({"kind": "no-description", "path": h.filename, "detail": ""})
        if h.type is None:
            problems.append({"kind": "no-type", "path": h.filename, "detail": ""})
        elif h.type not in MEMORY_TYPES:
            problems.append({"kind": "unknown-type", "path": h.filename, "detail": h.type})
    retired = inactive(result.headers)
    for r in index_reports(store):
        for key in ("dead_links", "unindexed", "duplicates"):
            for item in r[key]:
                problems.append({"kind": f"index-{key}", "path": r["index"], "detail": str(item)})
        if r["over_limit"]:
            problems.append(
                {"kind": "index-over-limit", "path": r["index"], "detail": r["over_limit"]}
            )
    problems += credential_problems((h.filename, h.path) for h in result.headers)
    index_text = read_entrypoint(store.root)
    return Diagnosis(
        memory_dir=str(store.root),
        memories=result.total,
        index_lines=load_for_prompt(index_text).line_count if index_text else 0,
        problems=problems,
        inactive=[{"path": k, "status": v[0], "reason": v[1]} for k, v in retired.items()],
        partly_indexed=partly_indexed(result.headers),
    )


def partly_indexed(headers: list[MemoryHeader]) -> list[dict[str, Any]]:
    """Memories longer than recall reads (a note, not a problem: the file is kept whole)."""
    out: list[dict[str, Any]] = []
    for h in headers:
        try:
            size = h.path.stat().st_size
        except OSError:
            continue
        if size > RECALL_READ_BYTES:
            out.append({"path": h.filename, "bytes": size, "indexed_bytes": RECALL_READ_BYTES})
    return out
