"""Score fusion for hybrid recall: put BM25 and cosine scores on one scale and combine them.

Invariant: every function here is pure and shape-preserving (one fused score per input document),
never reorders, and maps a constant or empty signal to zeros rather than dividing by zero, so a
query with no lexical match simply lets the semantic signal decide.

Two families, chosen by :class:`FusionConfig.method`:
- ``"weighted"``: each signal is normalised over the candidate set (min-max or z-score) and the
  fused score is their weighted sum. Keeps score magnitudes, so a clear winner stays clear.
- ``"rrf"``: reciprocal rank fusion, ``sum(w / (k + rank))``. Scale-free, ignores magnitudes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float32]


def minmax(scores: Array) -> Array:
    """Scale to [0, 1] over the given scores; a constant vector maps to zeros."""
    if scores.size == 0:
        return scores.astype(np.float32)
    low, high = float(scores.min()), float(scores.max())
    if high - low <= 1e-12:
        return np.zeros_like(scores, dtype=np.float32)
    return ((scores - low) / (high - low)).astype(np.float32)


def zscore(scores: Array) -> Array:
    """Standard scores (mean 0, sd 1); a constant vector maps to zeros."""
    if scores.size == 0:
        return scores.astype(np.float32)
    sd = float(scores.std())
    if sd <= 1e-12:
        return np.zeros_like(scores, dtype=np.float32)
    return ((scores - float(scores.mean())) / sd).astype(np.float32)


def ranks(scores: Array) -> Array:
    """1-based ranks (ties broken by position), highest score = rank 1."""
    order = np.argsort(-scores, kind="stable")
    out = np.empty(scores.size, dtype=np.float32)
    out[order] = np.arange(1, scores.size + 1, dtype=np.float32)
    return out


def rrf(signals: Sequence[Array], weights: Sequence[float], k: float = 60.0) -> Array:
    """Weighted reciprocal rank fusion of score vectors of equal length."""
    if not signals:
        return np.zeros(0, dtype=np.float32)
    fused = np.zeros(signals[0].size, dtype=np.float32)
    for scores, weight in zip(signals, weights, strict=True):
        if scores.size and float(scores.max()) > float(scores.min()):
            fused += weight / (k + ranks(scores))
    return fused


def weighted(
    signals: Sequence[Array],
    weights: Sequence[float],
    normalise: Literal["minmax", "zscore"] = "minmax",
) -> Array:
    """Weighted sum of normalised score vectors of equal length."""
    if not signals:
        return np.zeros(0, dtype=np.float32)
    norm = minmax if normalise == "minmax" else zscore
    fused = np.zeros(signals[0].size, dtype=np.float32)
    for scores, weight in zip(signals, weights, strict=True):
        fused += np.float32(weight) * norm(scores)
    return fused


@dataclass(frozen=True, slots=True)
class FusionConfig:
    """How lexical and semantic scores combine (see the module docstring for the families)."""

    method: Literal["weighted", "rrf"] = "weighted"
    semantic_weight: float = 0.5
    lexical_weight: float = 0.5
    normalise: Literal["minmax", "zscore"] = "zscore"
    rrf_k: float = 60.0

    def fuse(self, lexical: Array, semantic: Array) -> Array:
        weights = (self.lexical_weight, self.semantic_weight)
        if self.method == "rrf":
            return rrf((lexical, semantic), weights, self.rrf_k)
        return weighted((lexical, semantic), weights, self.normalise)


__all__ = ["FusionConfig", "minmax", "ranks", "rrf", "weighted", "zscore"]
