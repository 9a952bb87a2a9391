"""The fast first stage of the index: static token vectors distilled from the packaged MiniLM.

One MiniLM pass costs tens of milliseconds per memory on two cores, so an index that embeds every
memory with it builds at about 35 memories/s. A static embedding costs a tokenisation and a mean:
each WordPiece token has one 384-dimension vector, the MiniLM output for ``[CLS] token [SEP]``
mean-pooled (model2vec's distillation, without its PCA), and a text's vector is the mean of its
tokens' vectors. On LoCoMo's turns it ranks within about a point of MiniLM (docs/benchmarks.md,
"An index that keeps up"), but its cosines live on another scale, so recall uses it to order and
MiniLM (:mod:`memdir.recall.model_vectors`) where it decides what surfaces.

Invariants:
- Nothing is downloaded: the table is computed from the model that ships in the wheel, once per
  memdir home (about 30 s on two cores), and cached as a derived file (delete it at will).
- The query path never waits for the distillation: :meth:`StaticEmbedder.ready` is false until
  the table is on disk or in memory; :meth:`start` computes it in a background thread.
- ``embed`` returns L2-normalised float32 rows like every :class:`~memdir.recall.embed.Embedder`.
"""

from __future__ import annotations

import contextlib
import io
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir import native
from memdir.atomic import atomic_write, ensure_dir
from memdir.errors import ShutdownError
from memdir.recall.embed import Embedder, MiniLMEmbedder, Vectors, l2_normalise

log = logging.getLogger(__name__)

DISTIL_BATCH = 1024  # token sequences of length 3 per ONNX call
TABLE_VERSION = 1
_SPECIAL = (0, 100, 101, 102, 103)  # [PAD] [UNK] [CLS] [SEP] [MASK]
_DISTILLED: dict[str, npt.NDArray[np.float32]] = {}  # per model name: one table per process


class StaticEmbedder:
    """Texts embedded as the mean of per-token MiniLM vectors (see the module docstring)."""

    def __init__(self, model: MiniLMEmbedder, table_dir: Path) -> None:
        self.model = model
        self.path = table_dir / f"static-{model.name}-v{TABLE_VERSION}.npy"
        self._table: npt.NDArray[np.float32] | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def name(self) -> str:
        return f"static-{self.model.name}"

    @property
    def dim(self) -> int:
        return self.model.dim

    def ready(self) -> bool:
        """True when the table is loaded or loadable from disk now (no distillation needed)."""
        if self._table is not None:
            return True
        with self._lock:
            self._table = _DISTILLED.get(self.model.name)  # another index of this process
            if self._table is None and self.path.exists():
                with contextlib.suppress(OSError, ValueError):
                    self._table = _checked(_mapped(self.path), self.dim)
        return self._table is not None

    def start(self) -> None:
        """Distil the table in a background thread if it is not there yet (idempotent)."""
        if self.ready() or (self._thread is not None and self._thread.is_alive()):
            return
        self._thread = threading.Thread(
            target=self._build_quietly, daemon=True, name="memdir-distil"
        )
        self._thread.start()

    def _build_quietly(self) -> None:
        try:
            self.build()
        except ShutdownError:  # the process is exiting: the next one distils again
            pass
        except Exception:  # advisory: recall ranks by words and the model meanwhile
            log.exception("distilling the static embedding table failed")

    def build(self) -> None:
        """Compute and save the table now (blocking); a no-op when it exists."""
        if self.ready():
            return
        table = distil(self.model)
        buffer = io.BytesIO()
        np.save(buffer, table, allow_pickle=False)
        try:
            ensure_dir(self.path.parent)
            atomic_write(self.path, buffer.getvalue())
        except OSError as exc:  # the table still serves this process
            log.warning("static embedding table not saved (%s)", exc)
        with self._lock:
            self._table = _DISTILLED[self.model.name] = table

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if not self.ready():
            self.build()
        table = self._table
        assert table is not None
        return embed_ids(table, self.model.tokenize_batch(list(texts)))


def embed_ids(table: npt.NDArray[np.float32], batches: Sequence[Sequence[int]]) -> Vectors:
    """Mean token vector of each id list (special tokens skipped), L2-normalised."""
    out = np.zeros((len(batches), table.shape[1]), dtype=np.float32)
    special = np.zeros(table.shape[0], dtype=bool)  # a lookup, not np.isin per text: half the time
    special[list(_SPECIAL)] = True
    for row, ids in enumerate(batches):
        keep = np.fromiter(ids, dtype=np.int64, count=len(ids))
        keep = keep[~special[keep]]
        if keep.size:
            out[row] = table[keep].mean(axis=0)
    return l2_normalise(out)


def distil(model: MiniLMEmbedder) -> npt.NDArray[np.float32]:
    """One MiniLM pass per vocabulary token: the mean-pooled output of ``[CLS] t [SEP]``."""
    model.upgrade()  # 30,522 short passes: the optimised graph
    session, tokenizer = model.load()
    size = int(tokenizer.get_vocab_size())
    table = np.zeros((size, model.dim), dtype=np.float32)
    with native.region():
        for start in range(0, size, DISTIL_BATCH):
            native.check()
            ids = np.arange(start, min(size, start + DISTIL_BATCH), dtype=np.int64)
            feeds = _feeds(ids)
            table[ids] = session.run(["last_hidden_state"], feeds)[0].mean(axis=1)
    return table


def _feeds(ids: npt.NDArray[np.int64]) -> dict[str, Any]:
    seqs = np.stack([np.full(ids.size, 101), ids, np.full(ids.size, 102)], axis=1)
    seqs = seqs.astype(np.int64)
    ones = np.ones_like(seqs)
    return {"input_ids": seqs, "attention_mask": ones, "token_type_ids": np.zeros_like(seqs)}


def _mapped(path: Path) -> Any:
    """The saved table mapped, not read: a query touches a few dozen of its 30,522 rows, and
    reading all 47 MB cost a cold hook a quarter of a second."""
    return np.load(path, mmap_mode="r", allow_pickle=False)


def _checked(table: Any, dim: int) -> npt.NDArray[np.float32]:
    if not isinstance(table, np.ndarray) or table.ndim != 2 or table.shape[1] != dim:
        raise ValueError("static table has the wrong shape")
    if table.dtype != np.float32:
        raise ValueError("static table is not float32")
    return table


def fast_stage_for(model: object, table_dir: Path) -> StaticEmbedder | None:
    """The fast stage for ``model``: the static table for MiniLM, none for other embedders."""
    return StaticEmbedder(model, table_dir) if isinstance(model, MiniLMEmbedder) else None


class InstantFast:
    """A fast stage that needs no preparation, wrapping any embedder (the fake for tests)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    @property
    def name(self) -> str:
        return f"instant-{self.embedder.name}"

    @property
    def dim(self) -> int:
        return self.embedder.dim

    def ready(self) -> bool:
        return True

    def start(self) -> None:
        return None

    def build(self) -> None:
        return None

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.embedder.embed(texts)


__all__ = ["InstantFast", "StaticEmbedder", "distil", "embed_ids", "fast_stage_for"]
