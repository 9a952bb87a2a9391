"""Compaction of a search index: its live rows folded into a new base, BM25 rebuilt once.

Rows are append-only between compactions (a changed memory gets a new row, its old one masked
dead); when the appended rows pass a fraction of the base
(:func:`~memdir.recall.live_lexical.should_compact`), or after a rebuild, the live rows become
the new base, sorted by path, and the dead ones are dropped.
"""

from __future__ import annotations

import numpy as np

from memdir.recall import index_files
from memdir.recall.index_rows import RefreshReport
from memdir.recall.lexical import LexicalIndex
from memdir.recall.model_stage import StagedIndex


def compact(index: StagedIndex, report: RefreshReport) -> None:
    """Fold every live row of ``index`` into a new base (sorted by path)."""
    terms = all_terms(index, report)
    keep = sorted(index.live_rows().tolist(), key=lambda r: index.docs[r].rel)
    docs = [index.docs[r] for r in keep]
    rows = index.passages.take(index.positions(keep))
    kept_terms = [terms[r] for r in keep]
    base = LexicalIndex(index.analyzer).build_from_terms(
        [t.split(" ") if t else [] for t in kept_terms]
    )
    lengths = [len(t.split(" ")) if t else 1 for t in kept_terms]
    index.install_base(docs, rows, None, base, list(kept_terms), lengths)
    report.compacted = True


def all_terms(index: StagedIndex, report: RefreshReport) -> list[str]:
    """Terms of every row; base rows come from the saved terms file or are re-analysed."""
    if any(t is None for t in index.terms):
        saved = index_files.saved_terms(index, report)
        for row, value in enumerate(saved or []):
            if index.terms[row] is None:
                index.terms[row] = value
        for row in np.flatnonzero(index.live).tolist():
            if index.terms[row] is None:  # no saved terms: analyse the file again
                text = index.read_text(index.docs[row].rel, None)[0]
                terms = index.analyzer.terms(text.for_lexical()) if text is not None else []
                index.terms[row] = " ".join(terms)
    return [t or "" for t in index.terms]


__all__ = ["all_terms", "compact"]
