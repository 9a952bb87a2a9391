"""The embedding rows of the search index: one per passage, in two vector spaces.

``fast`` holds the first stage's vectors (the static embedding, or the model's own when the
embedder has no fast stage); ``model`` holds the model's vectors where ``have`` is set; ``hashes``
names each passage's text (:func:`memdir.recall.model_vectors.passage_hash`). Arrays grow
geometrically, so appends stay amortised O(new rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.recall.embed import Vectors
from memdir.recall.model_vectors import HASH_DTYPE


class PassageRows:
    """Growable per-passage arrays; ``n`` rows are in use."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.n = 0
        self._fast = np.zeros((0, dim), dtype=np.float32)
        self._model = np.zeros((0, dim), dtype=np.float32)
        self._have = np.zeros(0, dtype=bool)
        self._hashes = np.zeros(0, dtype=HASH_DTYPE)

    @property
    def fast(self) -> Vectors:
        return self._fast[: self.n]

    @property
    def model(self) -> Vectors:
        return self._model[: self.n]

    @property
    def have(self) -> npt.NDArray[np.bool_]:
        return self._have[: self.n]

    @property
    def hashes(self) -> npt.NDArray[np.bytes_]:
        return self._hashes[: self.n]

    def append(
        self,
        fast: Vectors,
        hashes: npt.NDArray[np.bytes_],
        model: Vectors | None = None,
        have: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        need = self.n + len(fast)
        if need > len(self._fast):
            size = max(need, 2 * len(self._fast), 16)
            self._fast = _grow(self._fast, size, self.n)
            self._model = _grow(self._model, size, self.n)
            self._have = _grow(self._have, size, self.n)
            self._hashes = _grow(self._hashes, size, self.n)
        rows = slice(self.n, need)
        self._fast[rows] = fast
        self._hashes[rows] = hashes
        self._model[rows] = 0.0 if model is None else model
        self._have[rows] = False if have is None else have
        self.n = need

    def set_model(self, positions: npt.NDArray[np.int64], vectors: Vectors) -> None:
        self._model[positions] = vectors
        self._have[positions] = True

    def take(self, positions: npt.NDArray[np.int64]) -> PassageRows:
        out = PassageRows(self.dim)
        out.append(self.fast[positions], self.hashes[positions], self.model[positions],
                   self.have[positions])  # fmt: skip
        return out


def _grow(array: Any, size: int, used: int) -> Any:
    grown = np.zeros((size, *array.shape[1:]), dtype=array.dtype)
    grown[:used] = array[:used]
    return grown


__all__ = ["PassageRows"]
