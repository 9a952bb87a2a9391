"""BM25 over a base index plus recently changed memories, without rebuilding the base per change.

The base is a :class:`~memdir.recall.lexical.LexicalIndex` (bm25s: every document-term weight
precomputed, so a query is a few array slices). A memory added or edited after the base was built
is appended as an *overlay* row scored here with the same Lucene BM25 formula, using the base's
document frequencies (plus the overlay's own) and the base's average length; the base row it
replaces is masked. The two agree to within the drift of those statistics, which the owner bounds
by folding the overlay into a new base once it grows past a fraction of the base
(:func:`should_compact`).

Invariant: ``scores`` returns one score per row (base rows first, then overlay rows, in append
order), 0 for every masked row.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from memdir.recall.lexical import LexicalIndex, Scores

COMPACT_MIN_ROWS = 64
COMPACT_FRACTION = 0.05


def should_compact(base_rows: int, overlay_rows: int) -> bool:
    """True when the overlay is large enough that a fresh base is worth its build time."""
    return overlay_rows > COMPACT_MIN_ROWS + COMPACT_FRACTION * base_rows


class LiveLexical:
    """Scores for base rows (bm25s) and overlay rows (scored here), with dead rows masked."""

    def __init__(self, base: LexicalIndex, base_lengths: Sequence[int]) -> None:
        self.base = base
        self.analyzer = base.analyzer
        self.base_rows = base.size
        lengths = np.asarray(base_lengths, dtype=np.float64)
        self._avgdl = float(lengths.mean()) if lengths.size else 1.0
        self._dead = np.zeros(self.base_rows, dtype=bool)
        self._overlay: list[tuple[Counter[str], int] | None] = []
        self._overlay_df: Counter[str] = Counter()

    @property
    def size(self) -> int:
        """Rows (live or not) the score vector covers."""
        return self.base_rows + len(self._overlay)

    @property
    def overlay_rows(self) -> int:
        return len(self._overlay)

    def append(self, terms: Sequence[str]) -> int:
        """Add an overlay row; returns its row number."""
        counts = Counter(t for t in terms if t)
        self._overlay.append((counts, max(len(terms), 1)))
        self._overlay_df.update(counts.keys())
        return self.size - 1

    def kill(self, row: int) -> None:
        """Mask a row (its memory was removed or replaced by a newer row)."""
        if row < self.base_rows:
            self._dead[row] = True
            return
        entry = self._overlay[row - self.base_rows]
        if entry is not None:
            self._overlay_df.subtract(entry[0].keys())
            self._overlay[row - self.base_rows] = None

    def dead_base_rows(self) -> list[int]:
        return [int(i) for i in np.flatnonzero(self._dead)]

    def scores(self, query: str) -> Scores:
        return self.scores_for_terms(self.analyzer.terms(query))

    def scores_for_terms(self, terms: Sequence[str]) -> Scores:
        out = np.zeros(self.size, dtype=np.float32)
        if self.base_rows:
            out[: self.base_rows] = self.base.scores_for_terms(terms)
            out[: self.base_rows][self._dead] = 0.0
        if self._overlay:
            out[self.base_rows :] = self._overlay_scores([t for t in terms if t])
        return out

    def query_weight(self, terms: Sequence[str]) -> float:
        """The most a document could score for ``terms``: every term matched, saturated.

        A BM25 score divided by this is the share of the query's information a memory matches
        (0 to 1, comparable across queries). A term no memory contains counts as if one memory
        had it (add-one smoothing): a question full of words the memory dir never uses is
        probably not about it, but in a dir of three memories an unused everyday word must not
        weigh more than the one that matched.
        """
        live = self._live_count()
        return sum(self._idf(t, live, smooth=True) for t in terms if t)

    def _live_count(self) -> int:
        return self.base_rows - int(self._dead.sum()) + sum(e is not None for e in self._overlay)

    def _idf(self, term: str, live: int, *, smooth: bool = False) -> float:
        df = min(self.base.doc_freq(term) + self._overlay_df[term], live)
        if smooth:
            df = max(df, 1)
        return math.log(1 + (live - df + 0.5) / (df + 0.5))

    def _overlay_scores(self, terms: list[str]) -> Scores:
        k1, b = self.base.k1, self.base.b
        live = self._live_count()
        idf = {t: self._idf(t, live) for t in set(terms)}
        out = np.zeros(len(self._overlay), dtype=np.float32)
        for i, entry in enumerate(self._overlay):
            if entry is None:
                continue
            counts, length = entry
            norm = k1 * ((1 - b) + b * length / self._avgdl)
            total = 0.0
            for term in terms:
                tf = counts.get(term, 0)
                if tf:
                    total += idf[term] * tf / (norm + tf)
            out[i] = total
        return out


__all__ = ["COMPACT_FRACTION", "COMPACT_MIN_ROWS", "LiveLexical", "should_compact"]
