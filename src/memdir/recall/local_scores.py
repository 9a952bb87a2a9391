"""The scores behind the offline selector's order: lexical, semantic and fused, per memory.

Invariants:
- ``lexical`` is the prompt's alone (coverage is a share of the prompt); words the prompt does
  not say but its context (recent turns, files, tools) and its class of task
  (:mod:`memdir.recall.intents`) do add to the fused order at ``CONTEXT_WEIGHT``
  (:mod:`memdir.prompt_context`) — they order, they never count as coverage.
- While the model has not read every memory, a query has it read its best first-stage
  candidates first (within a deadline), then they rank by it; a memory it has not read still
  counts as meaning only up to the weak bar (``UNREAD_COSINE``): its words must carry it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memdir.prompt_context import CONTEXT_WEIGHT, RecallContext
from memdir.recall.applies_match import AppliesMatcher
from memdir.recall.fusion import FusionConfig
from memdir.recall.intents import request_intents
from memdir.recall.relevance import ScoredDoc
from memdir.recall.search_index import UNREAD_COSINE, SearchIndex

QUERY_FILL_CANDIDATES = 20  # the best candidates a query has the model read first


@dataclass(frozen=True, slots=True)
class Scores:
    """Per candidate row: the prompt's lexical score, semantic, fused; the prompt's weight."""

    rows: npt.NDArray[np.int64]
    lexical: npt.NDArray[np.float32]
    semantic: npt.NDArray[np.float32]
    fused: npt.NDArray[np.float32]
    weight: float


def score(
    index: SearchIndex,
    fusion: FusionConfig,
    query: str,
    rows: npt.NDArray[np.int64] | None,
    context: RecallContext | None = None,
    *,
    fill_seconds: float = 0.0,
    answer_by: float | None = None,
    save_fill: bool = True,
) -> Scores:
    """The scores of ``rows`` (every live row when None) for ``query``.

    ``fill_seconds``: how long the model may read the best unread candidates, never past
    ``answer_by`` (a ``time.monotonic()`` value); ``save_fill``: keep what it read (when no
    background fill saves it).
    """
    if rows is None:
        rows = index.live_rows()
    if rows.size == 0:
        empty = np.zeros(0, dtype=np.float32)
        return Scores(rows, empty, empty, empty, 0.0)
    terms = index.analyzer.terms(query)
    lexical = index.lexical.scores_for_terms(terms)[rows]
    query_vector, fast_vector = index.query_vectors(query)
    semantic = index.semantic_scores(query_vector, fast_vector)[rows]
    ranked = lexical
    around = " ".join(hit.intent.words for hit in request_intents(query))
    if context is not None and not context.empty:
        around = f"{around} {context.text()}"
    extra = sorted(set(index.analyzer.terms(around)) - set(terms))
    if extra:
        ranked = lexical + CONTEXT_WEIGHT * index.lexical.scores_for_terms(extra)[rows]
    fused = fusion.fuse(ranked, semantic)
    if fill_seconds > 0 and index.pending():
        best = rows[top_k(fused, QUERY_FILL_CANDIDATES)]
        unread = best[~index.by_model(best)]
        if unread.size:
            deadline = time.monotonic() + fill_seconds
            if answer_by is not None:
                deadline = min(deadline, answer_by)
            index.fill(unread.tolist(), deadline=deadline)
            if save_fill:
                index.save_model_vectors()
            semantic = index.semantic_scores(query_vector, fast_vector)[rows]
            fused = fusion.fuse(ranked, semantic)
    return Scores(rows, lexical, semantic, fused, index.lexical.query_weight(terms))


def scored_docs(
    index: SearchIndex,
    applies: AppliesMatcher,
    query: str,
    context: RecallContext | None,
    scores: Scores,
    k: int,
) -> list[ScoredDoc]:
    """The top ``k`` of ``scores`` as :class:`ScoredDoc`, with their applies_when matches."""
    order = top_k(scores.fused, k)
    docs = index.docs
    query_terms = applies.query_terms(query)
    if context is not None and context.activity():
        query_terms |= applies.query_terms(context.activity())
    intents = request_intents(query)
    rows, lexical, semantic, fused, weight = (
        scores.rows, scores.lexical, scores.semantic, scores.fused, scores.weight,
    )  # fmt: skip
    by_model = index.by_model(rows[order])
    out = []
    for position, i in enumerate(order):
        doc = docs[rows[i]]
        match = applies.match(query_terms, doc.applies_when, intents)
        read = bool(by_model[position])
        out.append(
            ScoredDoc(
                filename=doc.rel,
                score=float(fused[i]),
                lexical=float(lexical[i]),
                semantic=float(semantic[i]) if read else min(float(semantic[i]), UNREAD_COSINE),
                name=doc.name,
                description=doc.description,
                coverage=float(lexical[i]) / weight if weight > 0 else 0.0,
                type=doc.type,
                applies_words=match.words,
                applies_situations=match.situations,
                applies_best=match.best,
                applies_intent=match.intent,
                intent_situation=match.intent_situation,
                by_model=read,
            )
        )
    return out


def top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the k highest scores, best first (partial sort: N can be 100,000)."""
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    if k < scores.size:
        candidates = np.argpartition(-scores, k - 1)[:k]
        return candidates[np.argsort(-scores[candidates], kind="stable")]
    return np.argsort(-scores, kind="stable")


__all__ = ["QUERY_FILL_CANDIDATES", "Scores", "score", "scored_docs", "top_k"]
