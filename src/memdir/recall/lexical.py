"""Lexical recall: BM25 (bm25s, Lucene variant) over Snowball-stemmed, stopworded words.

Invariant: documents and queries go through the *same* :class:`TermAnalyzer`, whose settings are
saved inside the index file; an index whose saved analyzer differs from the running one is stale and
gets rebuilt, never queried with mismatched terms. The analyzer is question-aware: besides the
usual English stopwords it drops the words questions are made of ("what", "when", "did", "does",
"would", "likely" …), which otherwise match every conversational memory and drown the content
words that carry the query.

Chinese and Japanese are written without spaces, so a "word" there is a whole clause and would
never match a query. Runs of Han, kana and Hangul characters are indexed as overlapping character
bigrams instead (a lone character as itself), the dictionary-free scheme Lucene's CJK analyzer
uses: ``数据库测试`` → ``数据 据库 库测 测试``. Queries go through the same analysis, so a Chinese
question matches a Chinese memory on the bigrams they share.
"""

from __future__ import annotations

import io
import json
import logging
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.atomic import atomic_write
from memdir.errors import MissingExtraError
from memdir.script import CJK as _CJK
from memdir.script import CJK_SPLIT as _CJK_SPLIT
from memdir.script import contains_cjk

Scores = npt.NDArray[np.float32]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Lucene's English list plus common pronouns/auxiliaries (bm25s' "en" list is the same family).
ENGLISH_STOPWORDS: frozenset[str] = _words(
    """a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with i me my myself we our ours ourselves you your yours
    yourself he him his himself she her hers herself its itself them theirs themselves am were
    been being have has had having do does did doing would should could ought im youre hes shes
    weve theyre ive youve id youd hed shed wed theyd ill youll hell shell well theyll isnt arent
    wasnt werent hasnt havent hadnt doesnt dont didnt wont wouldnt shant shouldnt cant cannot
    couldnt mustnt so than too very s t can just don now also from up down out off over under
    again further once here all any both each few more most other some own same nor only about
    above after again against below between through during before while because until"""
)
# Words that shape a question or a request ("explain …", "the difference between …") but say
# nothing about its topic.
QUESTION_WORDS: frozenset[str] = _words(
    """what when where who whom whose which why how whats whens wheres whos hows kind kinds sort
    type types likely might may probably would please tell know remember recall anything something
    thing things get got go going explain explains describe difference differences versus vs"""
)

_SPLIT = r"(?u)\b\w+\b"
# Anserini's defaults for short passages: memories are short, so weaker length normalisation
# (b) and earlier term-frequency saturation (k1) than Lucene's 1.2/0.75 (LoCoMo ablation in
# docs/benchmarks.md).
K1 = 0.9
B = 0.4


@dataclass(frozen=True, slots=True)
class AnalyzerConfig:
    """Everything that decides which terms a text yields (saved with the index)."""

    stem_language: str | None = "english"
    stopwords: tuple[str, ...] = field(
        default_factory=lambda: tuple(sorted(ENGLISH_STOPWORDS | QUESTION_WORDS))
    )
    split_pattern: str = _SPLIT
    min_length: int = 1
    cjk_bigrams: bool = True
    version: int = 2


class TermAnalyzer:
    """Lowercase, split on word characters, drop stopwords, Snowball-stem (cached per word)."""

    def __init__(self, config: AnalyzerConfig | None = None) -> None:
        self.config = config or AnalyzerConfig()
        self._split = re.compile(self.config.split_pattern).findall
        self._stop = frozenset(self.config.stopwords)
        self._stem = _stemmer(self.config.stem_language)

    def terms(self, text: str) -> list[str]:
        words = [
            w.replace("_", "")
            for w in self._split(text.lower().replace("'", "").replace("’", ""))
            if len(w) >= self.config.min_length
        ]
        out: list[str] = []
        for word in words:
            if self.config.cjk_bigrams and _CJK.search(word):
                for piece in _CJK_SPLIT.findall(word):
                    if _CJK.match(piece):
                        out.extend(_bigrams(piece))
                    else:
                        out.extend(self._word(piece))
            else:
                out.extend(self._word(word))
        return out

    def _word(self, word: str) -> list[str]:
        if not word or word in self._stop:
            return []
        return [self._stem(word)] if self._stem else [word]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self.config)
        data["stopwords"] = list(self.config.stopwords)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TermAnalyzer:
        data = dict(data)
        data["stopwords"] = tuple(data.get("stopwords", ()))
        return cls(AnalyzerConfig(**data))


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _stemmer(language: str | None) -> Any:
    if language is None:
        return None
    try:
        import Stemmer
    except ImportError as exc:
        raise MissingExtraError("PyStemmer", "recall") from exc
    stemmer = Stemmer.Stemmer(language)
    return lru_cache(maxsize=200_000)(stemmer.stemWord)


class LexicalIndex:
    """A BM25 index over a fixed list of documents; ``scores(query)`` covers every document."""

    def __init__(
        self, analyzer: TermAnalyzer | None = None, *, k1: float = K1, b: float = B
    ) -> None:
        self.analyzer = analyzer or TermAnalyzer()
        self.k1 = k1
        self.b = b
        self._bm25: Any = None
        self.size = 0

    def build(self, texts: Iterable[str]) -> LexicalIndex:
        return self.build_from_terms([self.analyzer.terms(t) for t in texts])

    def build_from_terms(self, corpus_terms: Sequence[list[str]]) -> LexicalIndex:
        bm25s = _bm25s()
        self.size = len(corpus_terms)
        if self.size == 0:
            self._bm25 = None
            return self
        model = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        # bm25s refuses a corpus with no terms at all; an empty-string term is harmless.
        docs = [terms or [""] for terms in corpus_terms]
        model.index(docs, show_progress=False)
        self._bm25 = model
        return self

    def scores(self, query: str) -> Scores:
        return self.scores_for_terms(self.analyzer.terms(query))

    def scores_for_terms(self, terms: Sequence[str]) -> Scores:
        if self._bm25 is None:
            return np.zeros(self.size, dtype=np.float32)
        ids = self._bm25.get_tokens_ids([t for t in terms if t])
        if not ids:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float32)

    def doc_freq(self, term: str) -> int:
        """How many base documents contain ``term`` (its column's non-zero count)."""
        if self._bm25 is None:
            return 0
        token = self._bm25.vocab_dict.get(term)
        if token is None:
            return 0
        indptr = self._bm25.scores["indptr"]
        return int(indptr[token + 1] - indptr[token])

    def to_bytes(self) -> bytes:
        """The BM25 matrices, vocabulary and settings as one ``.npz`` payload."""
        meta = {"analyzer": self.analyzer.to_json(), "k1": self.k1, "b": self.b, "size": self.size}
        arrays: dict[str, Any] = {"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8)}
        if self._bm25 is not None:
            scores = self._bm25.scores
            vocab = json.dumps(self._bm25.vocab_dict).encode("utf-8")
            arrays |= {
                "data": scores["data"],
                "indices": scores["indices"],
                "indptr": scores["indptr"],
                "vocab": np.frombuffer(vocab, np.uint8),
            }
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    def save(self, path: Path) -> None:
        atomic_write(path, self.to_bytes())

    @classmethod
    def load(cls, path: Path, expected: TermAnalyzer) -> LexicalIndex | None:
        """The saved index, or None when missing, unreadable or built with other settings."""
        try:
            with np.load(path, allow_pickle=False) as npz:
                meta = json.loads(npz["meta"].tobytes().decode("utf-8"))
                if not isinstance(meta, dict) or meta.get("analyzer") != expected.to_json():
                    return None
                index = cls(expected, k1=float(meta["k1"]), b=float(meta["b"]))
                index.size = int(meta["size"])
                if index.size:
                    index._bm25 = _SavedScores(
                        {
                            "data": npz["data"],
                            "indices": npz["indices"],
                            "indptr": npz["indptr"],
                            "num_docs": index.size,
                        },
                        json.loads(npz["vocab"].tobytes().decode("utf-8")),
                    )
                return index
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
            return None


class _SavedScores:
    """A saved index's scoring, as bm25s scores it (Lucene BM25 precomputed per term and
    document, summed per query term in order), without importing bm25s: its import (tqdm and
    friends, ~80 ms) would be most of a cold process's index load. Building still uses bm25s."""

    def __init__(self, scores: dict[str, Any], vocab: dict[str, int]) -> None:
        self.scores = scores
        self.vocab_dict = vocab

    def get_tokens_ids(self, tokens: Sequence[str]) -> list[int]:
        return [self.vocab_dict[t] for t in tokens if t in self.vocab_dict]

    def get_scores_from_ids(self, ids: Sequence[int]) -> Scores:
        data, indices, indptr = self.scores["data"], self.scores["indices"], self.scores["indptr"]
        out = np.zeros(int(self.scores["num_docs"]), dtype=np.float32)
        for token in ids:
            start, end = int(indptr[token]), int(indptr[token + 1])
            np.add.at(out, indices[start:end], data[start:end])
        return out


def _bm25s() -> Any:
    try:
        import bm25s
    except ImportError as exc:
        raise MissingExtraError("bm25s", "recall") from exc
    # bm25s sets its own logger to DEBUG, so any root handler (an MCP host's, say) would print
    # "Building index from tokens" on every rebuild.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


__all__ = [
    "ENGLISH_STOPWORDS",
    "QUESTION_WORDS",
    "AnalyzerConfig",
    "LexicalIndex",
    "TermAnalyzer",
    "contains_cjk",
]
