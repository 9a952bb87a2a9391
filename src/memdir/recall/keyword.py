"""A dependency-free keyword selector: the recall fallback when the ``recall`` extra is missing.

It implements :class:`~memdir.recall.base.Selector` over headers only (name, description and
filename stem), like every selector. Scoring is deliberately small: each query word found in a
header scores its inverse document frequency over the given headers, so rare words count more
than common ones; a memory that matches no query word is never returned (selective, not "the
five newest"). Ties go to the newer memory.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

from memdir.model import MemoryHeader
from memdir.recall.base import MAX_SELECTED, Selection
from memdir.recall.fold import Entry, SameMemory, fold

_WORD = re.compile(r"[a-z0-9]+")
_STOP_WORDS = (
    "a an and are as at be by did do does for from has have how i in is it its me my of on or "
    "our should that the their this to was we were what when where which who why will with you "
    "your"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


def words(text: str) -> set[str]:
    """Lower-case word set without stopwords; a trailing plural 's' is folded away."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in _STOP:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _header_words(h: MemoryHeader) -> set[str]:
    stem = h.filename.rsplit("/", 1)[-1].removesuffix(".md").replace("_", " ").replace("-", " ")
    return words(" ".join(filter(None, (h.name, h.description, stem))))


def _entry(h: MemoryHeader) -> Entry:
    return Entry(h.filename, h.mtime, h.name or "", h.description or "", h.type or "")


def _root(h: MemoryHeader) -> Path:
    """The memory dir a header's file lives in (its path minus its relative name)."""
    full = str(h.path)
    return Path(full[: len(full) - len(h.filename)] or ".")


class KeywordSelector:
    """Selects headers sharing words with the query, rarest matches first."""

    name = "keyword"

    def select_sync(
        self, query: str, headers: Sequence[MemoryHeader], *, limit: int = MAX_SELECTED
    ) -> list[Selection]:
        wanted = words(query)
        if not wanted or limit <= 0:
            return []
        bags = [(h, _header_words(h)) for h in headers]
        df = {w: sum(1 for _, bag in bags if w in bag) for w in wanted}
        scored: list[tuple[float, float, str]] = []
        for h, bag in bags:
            hits = wanted & bag
            if hits:
                score = sum(math.log(1 + len(bags) / df[w]) for w in hits)
                scored.append((score, h.mtime, h.filename))
        scored.sort(key=lambda t: (-t[0], -t[1], t[2]))
        if not scored:
            return []
        by_name = {h.filename: h for h in headers}
        entries = [_entry(by_name[name]) for _score, _mtime, name in scored[: limit * 4]]
        score_of = {name: score for score, _mtime, name in scored}
        same = SameMemory(_root(by_name[scored[0][2]])).same_as
        return [
            Selection(e.rel, score=round(score_of[e.rel], 4), reason="keyword match")
            for e in fold(entries, same, limit=limit).kept
        ]

    async def select(
        self,
        query: str,
        headers: Sequence[MemoryHeader],
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
    ) -> list[Selection]:
        return self.select_sync(query, headers, limit=limit)
