"""Which memories say the same thing, and which say conflicting things about the same subject.

The one notion of "the same memory" in memdir: dream merges what it calls the same
(:mod:`memdir.consolidate.plan`), extraction updates it instead of writing another file
(:mod:`memdir.extract.rule_extractor`), recall surfaces it once (:mod:`memdir.recall.fold`), and
an import must ask :func:`find_same` too.

Lexical, deterministic and explainable (every verdict carries its score and the tokens that
decided it). A memory becomes a :class:`Doc`: its content words, its *values* (tokens with a
digit: versions, ports, dates, counts) and whether it negates. Two memories are compared by
IDF-weighted Jaccard over content words, so boilerplate every memory shares ("Why:", "How to
apply:", "the user said so") weighs almost nothing and rare subject words decide.

* **exact**: identical text after normalising case, whitespace and punctuation;
* **near duplicate**: weighted similarity over :data:`NEAR` (or a short memory almost contained
  in a longer one, or — when an embedder is given — sentence-embedding cosine over
  :data:`SEMANTIC_NEAR` with some shared rare words), compatible types, and *no* conflict —
  two memories that differ in a value ("Postgres 14" / "Postgres 16") or in negation are never
  merged, because merging would hide the conflict;
* **contradiction**: similar subject (over :data:`SUBJECT`) and such a conflict.

Chinese and Japanese, written without spaces, are compared by their characters and character
bigrams (a title's subject by its characters), and 不要 / 禁止 / 不再 … negate as "not" does.

Neither is possible when the two titles name different things: if each memory's name has a word
the other memory never uses, they are parallel facts about two subjects ("Billing database" /
"Auth database"), however alike their sentences.

Candidate pairs come from an inverted index over rarer words, so the cost grows with the number
of memories that share a subject, not with the square of the dir.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memdir.script import CJK

NEAR = 0.5
CONTAINED = 0.8
SUBJECT = 0.45
CONFLICT_SUBJECT = 0.35  # a conflict needs less overlap: an update often restates one line
CONFLICT_CONTAINED = 0.5
SEMANTIC_NEAR = 0.80  # with an embedder: paraphrases ("prefers pnpm" / "uses pnpm, not npm")
SEMANTIC_FLOOR = 0.2  # ... that still share some rare words
MAX_BLOCK_DF = 0.1  # words in more than 10% of memories do not propose candidate pairs

_WORD = re.compile(r"[a-z0-9][a-z0-9._+-]*[a-z0-9+]|[a-z0-9]")
_NEGATION = re.compile(
    r"\b(?:not|never|no longer|don't|doesn't|isn't|aren't|won't|can't|cannot|shouldn't|"
    r"mustn't|without|stop(?:ped)?|disabled?|avoid)\b|"
    r"不要|不能|不许|不准|禁止|别再|不再|绝不|永远不|从不|不可以|不应该?",  # and in Chinese
    re.IGNORECASE,
)
_STOP_WORDS = """a an the and or but to of in on at for with by from as is are was were be been
    being it its this that these those i me my we our you your they them their he she his her
    user users s
    please always should would could will can do does did have has had so if then than there
    here what which who when where why how about into over under also just only very more most
    not never no don't doesn't isn't without use uses used using each every all any"""
_STOP = frozenset(_STOP_WORDS.split())
_CJK_RUN = re.compile(f"(?:{CJK.pattern})+")
# single characters that say how, not what (as "always", "never", "please" above)
_CJK_STOP = frozenset("的了是在和与也都就要不别再总始终永远必须应该会能可以这那个我你他她们请把被")

Verdict = Literal["exact", "near", "contradiction", "different"]


def normalise(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


_SUFFIXES = ("ments", "ment", "ences", "ence", "ances", "ance", "ings", "ing", "ed")
_DIGIT = re.compile(r"[0-9]")


@functools.lru_cache(maxsize=1 << 16)  # the same words recur across thousands of memories
def _stem(word: str) -> str:
    """A deliberately small stemmer: plurals and a few derivational endings, so "prefers",
    "preference" and "prefer" meet, while distinct words ("check", "checkout") stay apart."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True, slots=True)
class Doc:
    """One memory as the comparer sees it."""

    rel: str
    scope: str
    type: str | None
    key: str  # a digest of the normalised full text, for exact duplicates ("" when empty)
    words: frozenset[str]
    values: frozenset[str]
    negated: bool
    subject: frozenset[str] = frozenset()  # the words of the memory's name (its title)


def _split(text: str, *, bigrams: bool = True) -> tuple[set[str], set[str]]:
    words: set[str] = set()
    values: set[str] = set()
    for raw in _WORD.findall(text.lower()):
        if raw in _STOP:
            continue
        if _DIGIT.search(raw):
            values.add(raw.strip(".-"))
        else:
            words.add(_stem(raw))
    # Chinese and Japanese write no spaces: a run's characters and character bigrams are its
    # words, as in Lucene's CJK analysis; without them two CJK memories share only their English
    # scaffolding ("Why", "Seen in") and look alike whatever they say. A title's subject is its
    # characters alone: one character added ("提交前都先跑") changes two bigrams, not the subject
    for run in _CJK_RUN.findall(text):
        words.update(ch for ch in run if ch not in _CJK_STOP)
        if bigrams:
            words.update(run[i : i + 2] for i in range(len(run) - 1))
    return words, values


def _digest(key: str) -> str:
    """Equal texts, equal digests; kept instead of the text (100,000 imported memories held
    their whole normalised text twice)."""
    if not key:
        return ""
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def make_doc(rel: str, scope: str, type: str | None, text: str, *, name: str = "") -> Doc:
    """A comparable memory; ``text`` should include ``name`` (the title) and description."""
    words, values = _split(f"{name}\n{text}")
    return Doc(
        rel,
        scope,
        (type or "").strip().lower() or None,
        _digest(normalise(text)),
        frozenset(words),
        frozenset(values),
        bool(_NEGATION.search(text)),
        frozenset(_split(name, bigrams=False)[0]),
    )


def different_subjects(a: Doc, b: Doc) -> bool:
    """Each title has a word the other memory never mentions ("Billing database" vs "Auth
    database"): parallel facts about two things, however alike the sentences are."""
    return not a.subject <= b.words and not b.subject <= a.words  # no set built per pair


@dataclass(frozen=True, slots=True)
class Pair:
    a: str
    b: str
    verdict: Verdict
    score: float
    detail: str = ""


class Comparer:
    """Pairwise verdicts over one set of docs (IDF from that set)."""

    def __init__(self, docs: Sequence[Doc], vectors: Mapping[str, Any] | None = None) -> None:
        self.docs = {d.rel: d for d in docs}
        self.vectors = vectors or {}
        df: dict[str, int] = defaultdict(int)
        for d in docs:
            for w in d.words:
                df[w] += 1
        n = max(len(docs), 1)
        self.df = dict(df)
        self.idf = {w: math.log(1 + n / c) for w, c in df.items()}
        self.n = n
        self._unseen = math.log(1 + n)
        self._totals: dict[frozenset[str], float] = {}  # a doc's whole weight, asked per pair

    def weight(self, words: Iterable[str]) -> float:
        return sum(map(self.idf.get, words, itertools.repeat(self._unseen)))

    def _total(self, words: frozenset[str]) -> float:
        total = self._totals.get(words)
        if total is None:
            total = self._totals[words] = self.weight(words)
        return total

    def similarity(self, a: Doc, b: Doc) -> tuple[float, float]:
        """(weighted Jaccard, weighted containment of the smaller in the larger)."""
        inter = self.weight(a.words & b.words)
        if inter == 0:
            return 0.0, 0.0
        wa, wb = self._total(a.words), self._total(b.words)
        union = wa + wb - inter  # weights add up: |A ∪ B| = |A| + |B| - |A ∩ B|
        smaller = min(wa, wb)
        return min(1.0, inter / union), min(1.0, inter / smaller) if smaller else 0.0

    def compare(self, a: Doc, b: Doc) -> Pair:
        if a.scope != b.scope or not _types_compatible(a.type, b.type):
            return Pair(a.rel, b.rel, "different", 0.0)
        if a.key and a.key == b.key:
            return Pair(a.rel, b.rel, "exact", 1.0)
        if different_subjects(a, b):
            return Pair(a.rel, b.rel, "different", 0.0, "different subjects")
        jac, contained = self.similarity(a, b)
        only_a, only_b = a.values - b.values, b.values - a.values
        value_conflict = bool(only_a and only_b)
        negation_conflict = a.negated != b.negated
        if value_conflict or negation_conflict:
            if jac >= CONFLICT_SUBJECT or contained >= CONFLICT_CONTAINED:
                why = (
                    f"values {sorted(only_a)} vs {sorted(only_b)}"
                    if value_conflict
                    else "one says not/never, the other does not"
                )
                return Pair(a.rel, b.rel, "contradiction", jac, why)
            return Pair(a.rel, b.rel, "different", jac)
        small = min(len(a.words), len(b.words))
        if jac >= NEAR or (contained >= CONTAINED and jac >= SUBJECT and small >= 4):
            return Pair(a.rel, b.rel, "near", jac, f"similarity {jac:.2f}")
        cos = self.cosine(a, b)
        if cos >= SEMANTIC_NEAR and jac >= SEMANTIC_FLOOR:
            return Pair(a.rel, b.rel, "near", jac, f"similarity {jac:.2f}, cosine {cos:.2f}")
        return Pair(a.rel, b.rel, "different", jac)

    def cosine(self, a: Doc, b: Doc) -> float:
        va, vb = self.vectors.get(a.rel), self.vectors.get(b.rel)
        if va is None or vb is None:
            return 0.0
        return float(va @ vb)

    def candidate_pairs(self) -> list[tuple[Doc, Doc]]:
        """Pairs that share at least one not-too-common word, or are exact duplicates."""
        limit = max(2, int(self.n * MAX_BLOCK_DF))
        postings: dict[str, list[str]] = defaultdict(list)
        by_key: dict[str, list[str]] = defaultdict(list)
        for d in self.docs.values():
            by_key[d.key].append(d.rel)
            for w in d.words:
                if self.df[w] <= limit:
                    postings[w].append(d.rel)
        seen: set[tuple[str, str]] = set()
        for group in [*postings.values(), *by_key.values()]:
            for i, x in enumerate(group):
                for y in group[i + 1 :]:
                    seen.add((x, y) if x < y else (y, x))
        return [(self.docs[x], self.docs[y]) for x, y in sorted(seen)]


SAME: frozenset[Verdict] = frozenset({"exact", "near"})
_RANK: dict[Verdict, int] = {"exact": 3, "near": 2, "contradiction": 1}


def closest(doc: Doc, docs: Sequence[Doc], vectors: Mapping[str, Any] | None = None) -> Pair | None:
    """The memory among ``docs`` nearest to being ``doc``: an exact copy, else the nearest near
    duplicate, else the one it contradicts most; None when every one is a different memory.
    Word weights come from ``docs`` and ``doc`` together, so pass the whole dir when there is
    one: a word every memory uses then decides nothing."""
    others = [d for d in docs if d.rel != doc.rel]
    if not others:
        return None
    comparer = Comparer([*others, doc], vectors)
    pairs = [comparer.compare(doc, other) for other in others]
    found = [p for p in pairs if p.verdict in _RANK]
    return max(found, key=lambda p: (_RANK[p.verdict], p.score), default=None)


def find_same(
    doc: Doc, docs: Sequence[Doc], vectors: Mapping[str, Any] | None = None
) -> Pair | None:
    """The memory among ``docs`` that is the same memory as ``doc`` (see :func:`closest`)."""
    pair = closest(doc, docs, vectors)
    return pair if pair is not None and pair.verdict in SAME else None


def _types_compatible(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b
