"""Forget as a first-class operation: retire a memory with a reason instead of deleting it.

Invariant: retiring changes only the memory's frontmatter (``retired``, ``retired_reason`` and
optionally ``superseded_by``); the body stays byte for byte, the file stays where it is, the
store drops its MEMORY.md entry, recall stops surfacing it, and ``memdir doctor`` lists it with
the reason. Deleting for real stays possible (``memdir rm``); retiring is what dream does.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memdir import frontmatter
from memdir.atomic import content_hash
from memdir.errors import DreamError
from memdir.store import MemoryStore
from memdir.validity import retire_meta


def retire(
    store: MemoryStore,
    name: str | Path,
    *,
    reason: str,
    today: dt.date | None = None,
    superseded_by: str | None = None,
) -> str:
    """Retire one memory; returns its relative path."""
    if not reason.strip():
        raise DreamError("retiring a memory needs a reason (it is kept in the file)")
    rel = store.rel(name)
    if superseded_by is not None:
        superseded_by = store.rel(superseded_by)
        if not store.exists(superseded_by):
            raise DreamError(f"{superseded_by} does not exist")
    with store.lock():
        text = store.read_text(rel)
        parsed = frontmatter.parse(text, source=store.path_of(rel))
        meta = retire_meta(
            parsed.meta,
            reason=reason,
            today=today or dt.date.today(),
            superseded_by=superseded_by,
        )
        store.write_text(rel, frontmatter.dump(meta, parsed.body), expected_hash=content_hash(text))
    return rel
