"""Which ranked memories are worth surfacing: a rule over every signal the ranker computes.

The ranker orders memories by a fused score; whether the best of them is *relevant* is a separate
question. A single cosine floor answers it badly both ways: short task-style requests ("is it OK
to merge this refactor today?") often sit just under it for the memory that ranks first, while
the best 150-word passage of a long memory clears it for nearly any question. The default
:class:`EvidenceRule` asks for one of two kinds of evidence:

- **meaning**: a cosine similarity of at least ``strong`` (0.40) on its own, or
- **meaning and words together**: a cosine of at least ``weak`` (0.18) *and* a lexical coverage of
  at least ``coverage`` (0.15) — the memory's BM25 score divided by the most any memory could
  score for the query, so a question whose rare words (names, tickets, tools) the memory dir never
  uses cannot pass on a chance word.
- **when it applies** (issue #20): the request uses a word of one of the memory's ``applies_when``
  situations (:mod:`memdir.recall.applies_match`) and the cosine reaches the *prior* of the
  memory's type: ``user`` and ``feedback`` memories apply across the tasks of their domain
  (``typed_prior``, 0.20); ``project`` and ``reference`` memories need more topical evidence
  (``narrow_prior``, 0.30). Two or more words of *one* situation are evidence at any positive
  cosine (``pair_prior``, 0.0); two words from different situations are not ("handle … script"
  touching "handling secrets" and "writing scripts" is chance). This is what lets "bring a
  date-picker dependency into the admin UI" surface "the admin UI uses yarn" although the two
  share no content word.

The operating point was chosen on memdir's evaluation set (a coding assistant's memory dir with
task-style and unanswerable requests) together with LoCoMo's other-conversation probe; the
trade-off of several rules is in docs/benchmarks.md and docs/recall.md. :class:`CosineFloor` is
the previous rule, kept for comparison and for callers who want it. The applies_when clauses
first made the rule loose on the #9 set (false surfacing 0.127 → 0.254); the same-situation pair,
the project/reference prior of 0.30 and the ``weak`` bar of 0.18 brought it back (0.143).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class ScoredDoc:
    """One memory with its scores: ``score`` is the fused one that orders results."""

    filename: str
    score: float
    lexical: float
    semantic: float
    name: str
    description: str
    coverage: float = 0.0  # lexical / the query's maximum BM25: share of the query matched
    type: str = ""  # the memory's type (user, feedback, project, reference) or ""
    applies_words: tuple[str, ...] = ()  # request terms found in its applies_when situations
    applies_situations: tuple[str, ...] = ()  # those situations, the best-matched first
    applies_best: int = 0  # most request terms found in any one situation
    applies_intent: str = ""  # the request's class of task one of its situations names
    intent_situation: str = ""  # that situation
    by_model: bool = (
        True  # semantic is the model's cosine (False: the fast stage's, see search_index)
    )


class RelevanceRule(Protocol):
    """Says why a ranked memory should not be surfaced, or None to keep it."""

    @property
    def label(self) -> str: ...

    def drop_reason(self, doc: ScoredDoc) -> str | None: ...


@dataclass(frozen=True, slots=True)
class CosineFloor:
    """Keep a memory when its cosine similarity reaches ``floor`` (memdir's first rule)."""

    floor: float = 0.30

    @property
    def label(self) -> str:
        return f"cosine ≥ {self.floor:.2f}"

    def drop_reason(self, doc: ScoredDoc) -> str | None:
        if doc.semantic >= self.floor:
            return None
        return f"similarity {doc.semantic:.2f} under the floor {self.floor:.2f}"


# Types whose memories apply across the tasks of their domain (the prior of issue #20).
BROAD_TYPES = frozenset({"user", "feedback"})


@dataclass(frozen=True, slots=True)
class EvidenceRule:
    """Keep on strong meaning, on weaker meaning backed by the query's words, or when the memory's
    ``applies_when`` matches and its type's prior is met (see module)."""

    strong: float = 0.40
    weak: float = 0.18
    coverage: float = 0.15
    typed_prior: float | None = 0.20  # None: applies_when is not evidence (the rule before #20)
    narrow_prior: float = 0.30
    pair_prior: float = 0.0
    intent_prior: float | None = 0.05  # None: intents are not evidence (the rule before recall3)

    @property
    def label(self) -> str:
        base = (
            f"cosine ≥ {self.strong:.2f}, or cosine ≥ {self.weak:.2f} "
            f"with lexical coverage ≥ {self.coverage:.2f}"
        )
        if self.typed_prior is None:
            return base
        return (
            f"{base}, or an applies_when word with cosine ≥ {self.typed_prior:.2f} "
            f"(user, feedback) / {self.narrow_prior:.2f} (project, reference), "
            f"or two words of one applies_when situation with cosine ≥ {self.pair_prior:.2f}"
        )

    def prior(self, doc: ScoredDoc) -> float:
        """The cosine an applies_when match needs for this memory's type and match."""
        if doc.applies_best >= 2:
            return self.pair_prior
        if self.typed_prior is not None and doc.type in BROAD_TYPES:
            return self.typed_prior
        return self.narrow_prior

    def _intent_applies(self, doc: ScoredDoc) -> bool:
        return (
            self.intent_prior is not None
            and self.typed_prior is not None
            and bool(doc.applies_intent)
        )

    def drop_reason(self, doc: ScoredDoc) -> str | None:
        if self.keep_reason(doc) is not None:
            return None
        if self._intent_applies(doc) and not doc.applies_words:
            return (
                f"the request asks for {doc.applies_intent}, which applies_when names, but "
                f"similarity {doc.semantic:.2f} is under {self.intent_prior:.2f}"
            )
        if doc.semantic < self.weak and not (doc.applies_words and self.typed_prior is not None):
            return f"similarity {doc.semantic:.2f} under {self.weak:.2f}"
        if doc.applies_words and self.typed_prior is not None:
            intent = (
                f"; the request asks for {doc.applies_intent} (prior {self.intent_prior:.2f})"
                if self._intent_applies(doc)
                else ""
            )
            return (
                f"applies_when matched ({', '.join(doc.applies_words)}) but similarity "
                f"{doc.semantic:.2f} is under the {doc.type or 'untyped'} prior "
                f"{self.prior(doc):.2f}{intent}"
            )
        return (
            f"similarity {doc.semantic:.2f} under {self.strong:.2f} and lexical coverage "
            f"{doc.coverage:.2f} under {self.coverage:.2f}"
            + ("" if self.typed_prior is None else "; no applies_when situation matched")
        )

    def keep_reason(self, doc: ScoredDoc) -> str | None:
        """Which evidence keeps ``doc`` (None when none does)."""
        if doc.semantic >= self.strong:
            return f"similarity {doc.semantic:.2f} ≥ {self.strong:.2f}"
        if doc.semantic >= self.weak and doc.coverage >= self.coverage:
            return f"similarity {doc.semantic:.2f} with lexical coverage {doc.coverage:.2f}"
        if self.typed_prior is not None and doc.applies_words and doc.semantic >= self.prior(doc):
            if doc.applies_best >= 2:
                prior = "two words of one situation"
            elif doc.type in BROAD_TYPES:
                prior = f"{doc.type} memories apply across tasks"
            else:
                prior = f"{doc.type or 'untyped'} memories need topical evidence"
            return (
                f"applies when {doc.applies_situations[0]!r} (words: "
                f"{', '.join(doc.applies_words)}); {prior}: similarity {doc.semantic:.2f} ≥ "
                f"{self.prior(doc):.2f}"
            )
        if (
            self._intent_applies(doc)
            and self.intent_prior is not None
            and doc.semantic >= self.intent_prior
        ):
            return (
                f"applies when {doc.intent_situation!r}: the request asks for "
                f"{doc.applies_intent}; similarity {doc.semantic:.2f} ≥ {self.intent_prior:.2f}"
            )
        return None


@dataclass(frozen=True, slots=True)
class WordsRequired:
    """For questions an English-only model cannot read (CJK): only meaning *with* words counts.

    MiniLM splits Han characters into single pieces it was barely trained on, so unrelated Chinese
    sentences reach cosines of 0.4–0.6; there its similarity is not evidence on its own. The
    coverage bar is half the English one: a CJK question is analysed as character bigrams, and
    the bigrams that straddle two words (about half of them) can never match a memory.
    """

    base: EvidenceRule

    @property
    def coverage(self) -> float:
        return self.base.coverage / 2

    @property
    def label(self) -> str:
        return f"lexical coverage ≥ {self.coverage:.3f} (cosine ≥ {self.base.weak:.2f})"

    def drop_reason(self, doc: ScoredDoc) -> str | None:
        if doc.coverage >= self.coverage and doc.semantic >= self.base.weak:
            return None
        return (
            f"lexical coverage {doc.coverage:.2f} under {self.coverage:.3f} (the English "
            "model's similarity is not evidence for CJK text)"
        )


@dataclass(frozen=True, slots=True)
class KeepAll:
    """No gate: every ranked memory is kept (ranking evaluation)."""

    @property
    def label(self) -> str:
        return "no gate"

    def drop_reason(self, doc: ScoredDoc) -> str | None:
        return None


DEFAULT_RULE = EvidenceRule()
# USE's cosines for related and unrelated text sit higher than MiniLM's on the evaluation set, so
# its "meaning alone" bar is higher (docs/benchmarks.md, recall section).
_RULES_BY_EMBEDDER: dict[str, RelevanceRule] = {
    "use-multilingual-v3": EvidenceRule(strong=0.45, weak=0.15, coverage=0.15),
}


# Embedders trained on many languages, CJK included: their cosine counts for CJK questions too.
MULTILINGUAL_EMBEDDERS = frozenset(_RULES_BY_EMBEDDER)


def rule_for(embedder_name: str, *, cjk_query: bool = False) -> RelevanceRule:
    """The default rule calibrated for an embedder's similarity scale (and the query's script)."""
    rule = _RULES_BY_EMBEDDER.get(embedder_name, DEFAULT_RULE)
    if cjk_query and embedder_name not in MULTILINGUAL_EMBEDDERS and isinstance(rule, EvidenceRule):
        return WordsRequired(rule)
    return rule


def keep_reason(rule: RelevanceRule, doc: ScoredDoc) -> str:
    """Why ``rule`` keeps ``doc``, for ``--explain`` (rules without reasons say "relevant")."""
    explain = getattr(rule, "keep_reason", None)
    found = explain(doc) if explain is not None else None
    return found if isinstance(found, str) else "relevant"


__all__ = [
    "BROAD_TYPES",
    "DEFAULT_RULE",
    "CosineFloor",
    "EvidenceRule",
    "KeepAll",
    "RelevanceRule",
    "ScoredDoc",
    "WordsRequired",
    "keep_reason",
    "rule_for",
]
