"""Model vectors of passages, keyed by the hash of the passage text: each distinct text once.

The rules' situations and copied notes repeat across memories, and an edit that leaves a passage
unchanged keeps its text: keying by the text's hash means an identical passage is embedded once,
whichever memory or index generation it belongs to.

Invariant: derived and rebuildable like every index file. ``model-vectors.npz`` holds the vectors
of the live passages only (rewritten whole with :func:`atomic_write`); a missing or damaged file
costs re-embedding, never an error.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memdir.atomic import atomic_write
from memdir.recall.embed import Embedder, Vectors

HASH_BYTES = 16
HASH_DTYPE = f"S{HASH_BYTES}"
FILE_NAME = "model-vectors.npz"


def passage_hash(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=HASH_BYTES).digest()


class ModelVectors:
    """hash → vector for one embedder; ``embed`` computes only the hashes it lacks."""

    def __init__(self, embedder: Embedder, path: Path) -> None:
        self.embedder = embedder
        self.path = path
        self._rows: dict[bytes, int] = {}
        self._vec = np.zeros((0, embedder.dim), dtype=np.float32)
        self.dirty = False
        self.embedded = 0  # distinct texts this process sent to the model

    def __len__(self) -> int:
        return len(self._rows)

    def lookup(self, hashes: npt.NDArray[np.bytes_]) -> tuple[npt.NDArray[np.bool_], Vectors]:
        """(found mask, vectors: zero rows where not found) for each hash."""
        rows = np.array([self._rows.get(bytes(h), -1) for h in hashes], dtype=np.int64)
        found = rows >= 0
        out = np.zeros((len(hashes), self.embedder.dim), dtype=np.float32)
        if found.any():
            out[found] = self._vec[rows[found]]
        return found, out

    def embed(self, hashes: Sequence[bytes], texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts`` (``hashes`` name them); each missing text is embedded once."""
        todo: dict[bytes, str] = {}
        for h, text in zip(hashes, texts, strict=True):
            if h not in self._rows:
                todo.setdefault(h, text)
        if todo:
            self.add(list(todo), self.embedder.embed(list(todo.values())))
            self.embedded += len(todo)
        return self._vec[[self._rows[h] for h in hashes]] if hashes else self._vec[:0]

    def add(self, hashes: Sequence[bytes], vectors: Vectors) -> None:
        start = len(self._vec)
        fresh = [h for h in hashes if h not in self._rows]
        if not fresh:
            return
        keep = [i for i, h in enumerate(hashes) if h in set(fresh)]
        self._vec = np.vstack([self._vec, np.asarray(vectors, dtype=np.float32)[keep]])
        for offset, i in enumerate(keep):
            self._rows[hashes[i]] = start + offset
        self.dirty = True

    def load(self) -> str | None:
        """Read the saved vectors; a problem (to report) when the file is damaged."""
        if not self.path.exists():
            return None
        try:
            with np.load(self.path, allow_pickle=False) as npz:
                keys = np.asarray(npz["keys"])
                vectors = np.asarray(npz["vectors"], dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape != (len(keys), self.embedder.dim):
                raise ValueError("model vectors have the wrong shape")
        except Exception as exc:  # derived: a damaged file only costs re-embedding
            return f"model vectors unreadable ({exc}); re-embedding"
        self._vec = np.ascontiguousarray(vectors)
        self._rows = {bytes(k): i for i, k in enumerate(keys)}
        self.dirty = False
        return None

    def save(self, live: npt.NDArray[np.bytes_]) -> None:
        """Write the vectors of the ``live`` hashes (the others are dropped)."""
        found, vectors = self.lookup(np.unique(live))
        keys = np.unique(live)[found]
        buffer = io.BytesIO()
        np.savez(buffer, keys=keys.astype(HASH_DTYPE), vectors=vectors[found])
        atomic_write(self.path, buffer.getvalue())
        self.dirty = False


__all__ = ["FILE_NAME", "HASH_DTYPE", "ModelVectors", "passage_hash"]
