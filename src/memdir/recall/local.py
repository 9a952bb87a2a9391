"""The offline selector: hybrid BM25 + MiniLM ranking over the memory dir's search index.

Invariants:
- Works with no model service and no network: the embedder is the packaged MiniLM (or any
  :class:`~memdir.recall.embed.Embedder`), the index is derived and lives in ``cache_dir``.
- ``select`` only ever returns filenames among the headers it was given, at most ``limit``, and
  is *selective*: a memory the relevance rule (:mod:`memdir.recall.relevance`; by default
  :class:`~memdir.recall.relevance.EvidenceRule`) rejects is dropped even when that leaves
  nothing (``min_similarity=None`` turns the gate off, for ranking evaluation; a number restores
  the old cosine floor). Like every selector it never raises into the agent's turn: failures
  return ``[]`` and are logged.
- ``rank`` orders *all* indexed memories (the LLM selector fills its manifest from it), and
  ``explain`` shows, per memory, the lexical, semantic and fused scores and why it was dropped.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from memdir.model import MemoryHeader
from memdir.prompt_context import RecallContext
from memdir.recall.applies_match import AppliesMatcher
from memdir.recall.base import MAX_SELECTED, Selection
from memdir.recall.embed import Embedder, MiniLMEmbedder
from memdir.recall.fill import BackgroundFill, IndexStatus
from memdir.recall.fold import Entry, Folding, SameMemory, fold
from memdir.recall.fusion import FusionConfig
from memdir.recall.lexical import TermAnalyzer
from memdir.recall.local_scores import score, scored_docs
from memdir.recall.relevance import (
    CosineFloor,
    KeepAll,
    RelevanceRule,
    ScoredDoc,
    keep_reason,
    rule_for,
)
from memdir.recall.search_index import FastStage, RefreshReport, SearchIndex
from memdir.recall.static_embed import fast_stage_for
from memdir.script import contains_cjk

log = logging.getLogger(__name__)

# The first rule's cosine floor, still accepted as ``min_similarity=0.3`` (see recall.relevance).
DEFAULT_MIN_SIMILARITY = 0.3
# Seconds between index refreshes when ranking without headers. A refresh stats directories,
# not files (see recall.dirstate), so every query may afford one.
REFRESH_INTERVAL = 0.0
# While the model has not read every memory, a query has it read its best first-stage candidates
# first, within this many seconds (then ranks the rest by the fast stage; see search_index).
QUERY_FILL_SECONDS = 0.3
# ... and never past this many seconds from the start of the call (refresh included), so the
# first recall of a surface answers from what is ready while the rest is read in the background.
ANSWER_SECONDS = 0.8
READ_SECONDS = 0.4  # of which reading changed files (the rest is read in the background)
_WARNING_WORDS = ("warning", "gotcha", "bug", "careful", "never", "don't", "avoid", "pitfall")


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a memory was or was not selected."""

    filename: str
    lexical: float
    semantic: float
    fused: float
    rank: int
    selected: bool
    reason: str
    semantic_by: str = "model"  # "fast stage" while the model has not read this memory yet


class LocalSelector:
    """Hybrid lexical + semantic :class:`~memdir.recall.base.Selector` over a memory dir."""

    def __init__(
        self,
        memory_dir: Path,
        cache_dir: Path,
        *,
        embedder: Embedder | None = None,
        analyzer: TermAnalyzer | None = None,
        fusion: FusionConfig | None = None,
        min_similarity: float | Literal["default"] | None = "default",
        relevance: RelevanceRule | None = None,
        refresh_interval: float = REFRESH_INTERVAL,
        applies_when: bool = True,
        fast: FastStage | Literal["auto"] | None = None,
        background: bool = False,
        query_fill_seconds: float = QUERY_FILL_SECONDS,
        answer_seconds: float = ANSWER_SECONDS,
    ) -> None:
        model = embedder or MiniLMEmbedder()
        self.index = SearchIndex(
            memory_dir,
            cache_dir,
            model,
            analyzer,
            applies_when=applies_when,
            fast=fast_stage_for(model, cache_dir.parent / "models") if fast == "auto" else fast,
        )
        # background: the model reads the rest after each refresh, in a thread (long-lived hosts)
        self.filler = BackgroundFill(self.index, self._lock_for_fill) if background else None
        self.index.prepare_fast = background
        self.query_fill_seconds = query_fill_seconds
        self.answer_seconds = answer_seconds
        if background and isinstance(model, MiniLMEmbedder):
            model.warm()  # a long-lived host: the network loads while the first refresh reads
        self.memory_dir = memory_dir
        self.fusion = fusion or FusionConfig()
        # The default rule adapts to each query's script; a rule the caller chose is used as is.
        self._adaptive = relevance is None and min_similarity == "default"
        if relevance is None:
            if min_similarity == "default":
                relevance = rule_for(self.index.embedder.name)
            elif min_similarity is None:
                relevance = KeepAll()
            else:
                relevance = CosineFloor(float(min_similarity))
        self.relevance: RelevanceRule = relevance
        self.refresh_interval = refresh_interval
        self._lock = threading.RLock()
        self._refreshed = False
        self._unindexable: set[tuple[str, float]] = set()
        self._applies = AppliesMatcher()
        self._same = SameMemory(memory_dir)  # copies fold into one slot (memdir.recall.fold)

    # -- index upkeep --------------------------------------------------------------------------
    def refresh(self, deadline: float | None = None) -> RefreshReport:
        """Sync the index with the memory dir now; cache problems are in the report.

        With a ``deadline`` and a background fill, what is left unread at the deadline is read
        in the background (a query answers from the rows read so far meanwhile).
        """
        with self._lock:
            report = self.index.refresh(deadline if self.filler is not None else None)
            self._refreshed = True
        for problem in report.problems:
            log.warning("recall index: %s", problem)
        if self.filler is not None and (report.pending or report.backlog):
            self.filler.start()
        return report

    def _lock_for_fill(self) -> threading.RLock:
        return self._lock

    def complete(self) -> int:
        """Have the model read every memory it has not yet (``memdir reindex``); passages."""
        with self._lock:
            done = self.index.fill()
            problems = self.index.save_model_vectors()
        for problem in problems:
            log.warning("recall index: %s", problem)
        return done

    def status(self) -> IndexStatus:
        """How much of the index the model has read (for ``--explain`` and ``memdir status``)."""
        with self._lock:
            rows = self.index.live_rows()
            by_model = int(self.index.by_model(rows).sum())
            fast = self.index.fast
            return IndexStatus(
                memories=int(rows.size),
                by_model=by_model,
                pending_passages=self.index.pending(),
                fast_stage=None if fast is None else fast.name,
                fast_ready=fast is None or fast.ready(),
                background=self.filler is not None and self.filler.running(),
                unread=len(self.index.backlog),
            )

    def _maybe_refresh(self, deadline: float | None) -> None:
        age = time.monotonic() - self.index.last_refresh
        if not self._refreshed or age >= self.refresh_interval or self.index.backlog:
            self.refresh(deadline)

    def _candidates(
        self, headers: Sequence[MemoryHeader] | None, deadline: float | None = None
    ) -> npt.NDArray[np.int64] | None:
        """Refresh the index when it lags the headers; the rows they name (None: all memories)."""
        with self._lock:
            if headers is None:
                self._maybe_refresh(deadline)
                return None
            stale, rows = self.index.resolve(headers)
            # Headers the index cannot hold (unreadable, outside the dir) must not force a
            # directory walk on every query: remember them until their mtime changes.
            if not self._refreshed or any(
                (h.filename, h.mtime) not in self._unindexable for h in stale
            ):
                self.refresh(deadline)
                stale, rows = self.index.resolve(headers)
                self._unindexable = {(h.filename, h.mtime) for h in stale}
            live = self.index.live_rows()
            if rows.size == live.size and np.array_equal(np.sort(rows), live):
                return None  # the headers name every memory: skip the gather
            return np.unique(rows)

    # -- scoring (:mod:`memdir.recall.local_scores`) ---------------------------------------
    def rank(
        self,
        query: str,
        k: int = 200,
        *,
        headers: Sequence[MemoryHeader] | None = None,
        exclude: AbstractSet[str] = frozenset(),
        context: RecallContext | None = None,
    ) -> list[ScoredDoc]:
        """The top ``k`` memories for ``query`` by fused score (no relevance gate).

        Over ``headers`` when given, else over every indexed memory but those in ``exclude``.
        """
        started = time.monotonic()
        if self.filler is not None:
            self.filler.hold()  # the background fill yields the cores to this query
        try:
            return self._rank(query, k, headers, exclude, context, started)
        finally:
            if self.filler is not None:
                self.filler.release()

    def _rank(
        self,
        query: str,
        k: int,
        headers: Sequence[MemoryHeader] | None,
        exclude: AbstractSet[str],
        context: RecallContext | None,
        started: float,
    ) -> list[ScoredDoc]:
        # While a background fill reads the rest, a query reads nothing itself (it answers from
        # what is indexed); otherwise it reads changed files for up to READ_SECONDS.
        reading = self.filler is not None and self.filler.running()
        with self._lock:
            rows = self._candidates(headers, started if reading else started + READ_SECONDS)
            if exclude and headers is None:
                gone = [r for rel in exclude if (r := self.index.row_of(rel)) is not None]
                if gone:
                    rows = np.setdiff1d(self.index.live_rows(), np.array(gone, dtype=np.int64))
            scores = score(
                self.index, self.fusion, query, rows, context,
                fill_seconds=self.query_fill_seconds, answer_by=started + self.answer_seconds,
                save_fill=self.filler is None,
            )  # fmt: skip
            return scored_docs(self.index, self._applies, query, context, scores, k)

    # -- selection -----------------------------------------------------------------------------
    def explain(
        self,
        query: str,
        headers: Sequence[MemoryHeader] | None = None,
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
        top: int | None = 20,
    ) -> list[Explanation]:
        """Every candidate (or the ``top`` few) in fused order, with the selection verdict."""
        ranked = self.rank(query, k=2**31 if top is None else top, headers=headers)
        out: list[Explanation] = []
        rule = self.rule_for_query(query)
        dropped = {d.filename: self.drop_reason(d, recent_tools, rule) for d in ranked}
        folding = self.fold([d for d in ranked if dropped[d.filename] is None], limit)
        kept = {e.rel for e in folding.kept}
        for position, doc in enumerate(ranked, start=1):
            reason = dropped[doc.filename] or folding.reason(doc.filename)
            if reason is None and doc.filename not in kept:
                reason = f"beyond the limit of {limit}"
            selected = reason is None
            out.append(
                Explanation(
                    filename=doc.filename,
                    lexical=doc.lexical,
                    semantic=doc.semantic,
                    fused=doc.score,
                    rank=position,
                    selected=selected,
                    reason=reason or keep_reason(rule, doc),
                    semantic_by="model" if doc.by_model else "fast stage",
                )
            )
        return out

    def rule_for_query(self, query: str) -> RelevanceRule:
        """The relevance rule for ``query`` (see :func:`memdir.recall.relevance.rule_for`)."""
        if self._adaptive and contains_cjk(query):
            return rule_for(self.index.embedder.name, cjk_query=True)
        return self.relevance

    def drop_reason(
        self, doc: ScoredDoc, recent_tools: Sequence[str], rule: RelevanceRule | None = None
    ) -> str | None:
        reason = (rule or self.relevance).drop_reason(doc)
        if reason is not None:
            return reason
        tool = _tool_usage_doc(doc, recent_tools)
        if tool is not None:
            return f"usage notes for {tool}, a tool already in use"
        return None

    def select_unseen(
        self,
        query: str,
        exclude: AbstractSet[str],
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
        context: RecallContext | None = None,
    ) -> list[Selection]:
        """The selection over every indexed memory not in ``exclude`` (no headers needed)."""
        return self.select_sync(
            query, None, recent_tools=recent_tools, limit=limit, exclude=exclude, context=context
        )

    def select_sync(
        self,
        query: str,
        headers: Sequence[MemoryHeader] | None,
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
        exclude: AbstractSet[str] = frozenset(),
        context: RecallContext | None = None,
    ) -> list[Selection]:
        """The selection, computed in the calling thread (``context``: memdir.prompt_context)."""
        if limit <= 0 or not query.strip():
            return []
        # Look a little past the limit so gated, demoted or folded entries can be replaced.
        ranked = self.rank(query, k=limit * 4, headers=headers, exclude=exclude, context=context)
        rule = self.rule_for_query(query)
        passed = {d.filename: d for d in ranked if self.drop_reason(d, recent_tools, rule) is None}
        folding = self.fold(list(passed.values()), limit)
        return [
            Selection(e.rel, score=passed[e.rel].score, reason=keep_reason(rule, passed[e.rel]))
            for e in folding.kept
        ]

    def fold(self, docs: Sequence[ScoredDoc], limit: int) -> Folding:
        """The first ``limit`` distinct memories of ``docs``, copies folded into the newest
        (:mod:`memdir.recall.fold`)."""
        entries = []
        for doc in docs:
            row = self.index.row_of(doc.filename)
            mtime = self.index.docs[row].mtime if row is not None else 0.0
            entries.append(Entry(doc.filename, mtime, doc.name, doc.description, doc.type))
        return fold(entries, self._same.same_as, limit=limit)

    async def select(
        self,
        query: str,
        headers: Sequence[MemoryHeader],
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
        context: RecallContext | None = None,
    ) -> list[Selection]:
        try:
            return await asyncio.to_thread(
                self.select_sync,
                query,
                headers,
                recent_tools=recent_tools,
                limit=limit,
                context=context,
            )
        except Exception:  # a selector is advisory: recall must never break the agent's turn
            log.exception("local recall failed")
            return []


def _tool_usage_doc(doc: ScoredDoc, recent_tools: Sequence[str]) -> str | None:
    """The recent tool this memory merely documents, if any (warnings are always kept)."""
    if not recent_tools:
        return None
    text = f"{doc.name} {doc.description}".lower()
    if any(word in text for word in _WARNING_WORDS):
        return None
    for tool in recent_tools:
        if tool and tool.lower() in text:
            return tool
    return None


__all__ = ["DEFAULT_MIN_SIMILARITY", "Explanation", "IndexStatus", "LocalSelector", "ScoredDoc"]
