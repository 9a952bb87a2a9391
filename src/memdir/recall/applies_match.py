"""Which of a memory's ``applies_when`` situations a request touches, word by word.

The evidence is lexical on purpose: a situation such as "adding, installing or upgrading a
dependency, package or library" is matched when the request uses one of its words
("dependency") after the same stemming and stopwords as the BM25 index, so the match can be shown
in ``--explain`` and costs a set intersection over the few ranked candidates.

Words any request may use ("write", "add", "make", "run" …) do not count on their own: "write a
haiku" must not match "writing shell scripts". They still count next to a specific word.

A question's form is not a situation word: "what is …" / "how does …" once counted as "explain",
which matched the user-profile memory to nearly every concept question and to "what's a good
name for …" alike (docs/benchmarks.md, "Recall for tasks"); only the words the request uses count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memdir.recall.intents import IntentHit, situation_names
from memdir.recall.lexical import ENGLISH_STOPWORDS, QUESTION_WORDS, AnalyzerConfig, TermAnalyzer

# Verbs and nouns of any request, as raw words (analysed with the index's analyzer).
GENERIC_WORDS = (
    "write writing add adding make making run running use using build building change changing "
    "create creating get set put show keep take code new file files work thing something help "
    "need want look check fix update updating let try give bring start"
)


# A class of task is evidence only when one of a memory's first situations names it: lists put
# what a memory is about first (the rules sort by cue count), and a memory that merely mentions
# tests in passing does not govern every request to write one.
INTENT_SITUATIONS = 2


@dataclass(frozen=True, slots=True)
class AppliesMatch:
    """The request's words found in a memory's situations, and those situations."""

    words: tuple[str, ...] = ()
    situations: tuple[str, ...] = ()
    best: int = 0  # most request words found in any one situation (two in one: a real match)
    intent: str = ""  # the request's class of task a situation names (memdir.recall.intents)
    intent_situation: str = ""  # the first situation that names it

    @property
    def specific(self) -> bool:
        return bool(self.words)


# Request words the BM25 analyzer drops as question words but a situation is made of: "explain
# what a closure is" asks for an explanation.
REQUEST_WORDS = frozenset({"explain", "explains", "describe", "teach", "walk"})
MATCH_ANALYZER = AnalyzerConfig(
    stopwords=tuple(sorted((ENGLISH_STOPWORDS | QUESTION_WORDS) - REQUEST_WORDS))
)


class AppliesMatcher:
    """Matches request terms against situations; situation terms are cached per text."""

    def __init__(self, analyzer: TermAnalyzer | None = None) -> None:
        self.analyzer = analyzer or TermAnalyzer(MATCH_ANALYZER)
        self.generic = frozenset(self.analyzer.terms(GENERIC_WORDS))
        self._cache: dict[str, frozenset[str]] = {}

    def _terms(self, situation: str) -> frozenset[str]:
        found = self._cache.get(situation)
        if found is None:
            if len(self._cache) > 20_000:  # bounded: situations repeat across memories
                self._cache.clear()
            found = frozenset(self.analyzer.terms(situation))
            self._cache[situation] = found
        return found

    def query_terms(self, query: str) -> frozenset[str]:
        return frozenset(self.analyzer.terms(query))

    def match(
        self,
        query_terms: frozenset[str],
        situations: Sequence[str],
        intents: tuple[IntentHit, ...] = (),
    ) -> AppliesMatch:
        words: set[str] = set()
        hit: list[tuple[int, str]] = []
        intent: IntentHit | None = None
        intent_situation = ""
        for position, situation in enumerate(situations):
            if intents and intent is None and position < INTENT_SITUATIONS:
                intent = situation_names(situation, intents)
                intent_situation = situation if intent is not None else ""
            shared = query_terms & self._terms(situation)
            specific = shared - self.generic
            if specific:
                words |= specific
                hit.append((len(specific), situation))
        # The situation with the most request words first: it is the one --explain shows.
        hit.sort(key=lambda h: -h[0])
        best = hit[0][0] if hit else 0
        return AppliesMatch(
            tuple(sorted(words)),
            tuple(s for _, s in hit),
            best,
            intent.describe() if intent is not None else "",
            intent_situation,
        )


__all__ = ["GENERIC_WORDS", "AppliesMatch", "AppliesMatcher"]
