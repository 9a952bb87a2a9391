"""find_relevant_memories: scan → drop what the session saw → select → at most 5 memories.

The reference caps the manifest at the 200 *newest* files, so an older memory can never be
recalled. memdir keeps a 200-entry cap only where it buys something — the token budget of an LLM
side query — and fills it with the local ranker's best 200 instead of the newest 200. The local
selector itself ranks every memory.

Recall is advisory and runs beside the user's turn: any failure yields no memories, never an
exception into the turn.

A :class:`MemoryRecall` is meant to live as long as its process (a CLI call, an agent loop, a hook
daemon): headers come from a :class:`~memdir.recall.headers.HeaderTracker` and a selector that
keeps its own index (:class:`~memdir.recall.base.IndexedSelector`, the local one) is asked
directly, so a turn re-reads only the files that changed since the previous turn.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from memdir.model import MemoryHeader
from memdir.prompt_context import RecallContext
from memdir.recall.base import MAX_SELECTED, IndexedSelector, Selection, Selector, takes_keyword
from memdir.recall.fold import Entry, SameMemory, fold
from memdir.recall.headers import HeaderTracker
from memdir.recall.session import RecallSession
from memdir.recall.surface import Attachment, RelevantMemory, surface
from memdir.script import contains_cjk
from memdir.validity import current_only

log = logging.getLogger(__name__)


class _Ranked(Protocol):
    @property
    def filename(self) -> str: ...


class Ranker(Protocol):
    """Orders memories by relevance (the local selector is one)."""

    def rank(
        self, query: str, k: int = ..., *, headers: Sequence[MemoryHeader] | None = ...
    ) -> Sequence[_Ranked]: ...


_CJK_MIN_CHARS = 4  # 继续 (continue), 好的 (ok), はい: short CJK replies are single words too


def should_recall(query: str) -> bool:
    """Single-word prompts ("yes", "continue", "好的") carry too little to recall on.

    Chinese and Japanese have no spaces between words, so there a prompt counts as more than a
    word once it has a few CJK characters.
    """
    stripped = query.strip()
    if not stripped:
        return False
    if any(ch.isspace() for ch in stripped):
        return True
    return sum(1 for ch in stripped if contains_cjk(ch)) >= _CJK_MIN_CHARS


class MemoryRecall:
    """Recall over one memory dir with one selector."""

    def __init__(
        self,
        memory_dir: Path,
        selector: Selector,
        *,
        ranker: Ranker | None = None,
        manifest_cap: int | None = None,
        header_cache: Path | None = None,
    ) -> None:
        self.memory_dir = memory_dir
        self.selector = selector
        self.ranker = ranker
        self.manifest_cap = manifest_cap
        self.header_cache = header_cache
        self.tracker = HeaderTracker(memory_dir, cache_path=header_cache)

    def candidates(self, query: str, session: RecallSession | None) -> list[MemoryHeader]:
        """Every memory not yet seen this session, capped for selectors that need a cap."""
        # expired, superseded, retired: never surfaced
        headers = current_only(self.tracker.headers())
        if session is not None and session.surfaced:
            headers = [h for h in headers if not session.seen(h.path)]
        cap = self.manifest_cap
        if cap is None or len(headers) <= cap:
            return headers
        if self.ranker is None:
            return headers[:cap]  # newest first, as the reference does
        try:
            ranked = self.ranker.rank(query, cap, headers=headers)
        except Exception:  # ranking is an optimisation; fall back to recency
            log.exception("ranking the manifest failed; using the newest memories")
            return headers[:cap]
        by_name = {h.filename: h for h in headers}
        return [by_name[r.filename] for r in ranked if r.filename in by_name]

    async def find(
        self,
        query: str,
        session: RecallSession | None = None,
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
        context: RecallContext | None = None,
    ) -> list[RelevantMemory]:
        """At most ``limit`` (≤ 5) memories relevant to ``query``; [] on any failure.

        ``context``: what happened just before the prompt (memdir.prompt_context), for the
        selectors that take it; the prompt still decides (see there).
        """
        limit = min(limit, MAX_SELECTED)
        if not should_recall(query) or (session is not None and session.exhausted):
            return []
        if isinstance(self.selector, IndexedSelector):
            return await self._find_indexed(
                self.selector, query, session, recent_tools, limit, context
            )
        try:
            headers = self.candidates(query, session)
            if not headers:
                return []
            chosen = await self.selector.select(
                query,
                headers,
                recent_tools=recent_tools,
                limit=limit,
                **_context_for(self.selector.select, context),
            )
        except Exception:
            log.exception("recall failed")
            return []
        by_name = {h.filename: h for h in headers}
        picked = [by_name[s.filename] for s in chosen[:limit] if s.filename in by_name]
        reasons = {s.filename: s for s in chosen}
        # a selector that reads headers only may pick two copies of one memory: keep the newest
        entries = [Entry(h.filename, h.mtime, h.name or "", h.description or "") for h in picked]
        folding = fold(entries, SameMemory(self.memory_dir).same_as, limit=limit)
        out = []
        for entry in folding.kept:
            h, why = by_name[entry.rel], reasons[entry.rel]
            out.append(RelevantMemory(h.path, h.filename, h.mtime, why.score, why.reason))
        return out

    async def _find_indexed(
        self,
        selector: IndexedSelector,
        query: str,
        session: RecallSession | None,
        recent_tools: Sequence[str],
        limit: int,
        context: RecallContext | None,
    ) -> list[RelevantMemory]:
        """Ask a self-indexing selector directly: no header list is built at all."""
        exclude = self._seen_rels(session)
        try:
            chosen: list[Selection] = await asyncio.to_thread(
                selector.select_unseen,
                query,
                exclude,
                recent_tools=recent_tools,
                limit=limit,
                **_context_for(selector.select_unseen, context),
            )
        except Exception:
            log.exception("recall failed")
            return []
        out: list[RelevantMemory] = []
        for selection in chosen[:limit]:
            path = self.memory_dir / selection.filename
            try:
                mtime = os.stat(path).st_mtime
            except OSError:  # deleted since it was indexed
                continue
            out.append(
                RelevantMemory(path, selection.filename, mtime, selection.score, selection.reason)
            )
        return out

    def _seen_rels(self, session: RecallSession | None) -> set[str]:
        """The session's surfaced files, as paths relative to the memory dir."""
        if session is None or not session.surfaced:
            return set()
        root = os.path.realpath(self.memory_dir) + os.sep
        return {key[len(root) :] for key in session.surfaced if key.startswith(root)}

    async def recall(
        self,
        query: str,
        session: RecallSession,
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
        now: float | None = None,
        context: RecallContext | None = None,
    ) -> list[Attachment]:
        """find + surface + record in the session: the attachments to inject this turn."""
        found = await self.find(
            query, session, recent_tools=recent_tools, limit=limit, context=context
        )
        return session.accept(a for m in found if (a := surface(m, now=now)) is not None)


def _context_for(method: Any, context: RecallContext | None) -> dict[str, Any]:
    """``context=`` for a selector method that takes it (a non-empty context only)."""
    if context is None or context.empty or not takes_keyword(method, "context"):
        return {}
    return {"context": context}
