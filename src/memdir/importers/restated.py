"""What a digest adds: the sentences of a summary that no record of the same source already says.

A claude-mem session summary restates the session's decisions in other words ("Decided that the
payments service uses Postgres 16, since ...") next to what was new. Imported whole, the
decision is there twice (issue #39.11). Each sentence of the digest is compared with the
source's own statements: a sentence whose weighted words are mostly in one statement
(:data:`COVERED`, IDF over the statements and sentences, as :mod:`memdir.sameness` weighs), with
no value of its own ("Postgres 17" against "Postgres 16") and the same negation, is said
already; the rest is what the digest adds.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from memdir.sameness import Comparer, Doc, make_doc

COVERED = 0.7  # share of a sentence's weighted words found in one statement
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(A-Z0-9])")
_MAX_CANDIDATES = 64  # a word in more statements than this proposes none


@dataclass(frozen=True)
class Restated:
    kept: list[str]  # the digest's sentences no statement says, in order
    covered_by: list[int]  # indexes of the statements that say the others


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


class Statements:
    """The source's statements, indexed by word, for :meth:`restated` over many digests."""

    def __init__(self, statements: Sequence[str]) -> None:
        self.docs = [make_doc(f"s{i}", "", None, text) for i, text in enumerate(statements)]
        self.postings: dict[str, list[int]] = defaultdict(list)
        for i, doc in enumerate(self.docs):
            for word in doc.words:
                self.postings[word].append(i)
        self.comparer = Comparer(self.docs)

    def _covering(self, sentence: Doc) -> int | None:
        found: set[int] = set()
        for word in sentence.words:
            posting = self.postings.get(word, ())
            if len(posting) <= _MAX_CANDIDATES:
                found.update(posting)
        total = self.comparer.weight(sentence.words)
        best: tuple[float, int] | None = None
        for i in found:
            other = self.docs[i]
            if not sentence.values <= other.values or sentence.negated != other.negated:
                continue  # a value or a "not" of its own: the sentence says something else
            share = self.comparer.weight(sentence.words & other.words) / total if total else 0.0
            if share >= COVERED and (best is None or share > best[0]):
                best = (share, i)
        return best[1] if best else None

    def restated(self, digest: str) -> Restated:
        kept: list[str] = []
        covered_by: list[int] = []
        for sentence in sentences(digest):
            i = self._covering(make_doc("", "", None, sentence))
            if i is None:
                kept.append(sentence)
            elif i not in covered_by:
                covered_by.append(i)
        return Restated(kept, covered_by)
