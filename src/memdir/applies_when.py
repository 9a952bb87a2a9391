"""``applies_when``: the situations a memory governs, stored in its frontmatter.

A memory often governs tasks whose words it never uses: "the admin UI uses yarn workspaces" is
what matters for "add a date-picker dependency". ``applies_when`` is an optional frontmatter list
of short, human-readable situations ("adding, installing or upgrading a dependency, package or
library") that recall indexes beside the memory's text and the relevance rule reads as evidence.

Invariants:
- A list written by a person or a model is kept as it is: rules only fill a missing field, never
  overwrite one (:func:`with_applies_when`), and every writer that rewrites a memory keeps unknown
  frontmatter keys (``Memory.extra``), so the field survives edits.
- The offline rules are deterministic and read only the memory (type, name, description, body):
  a situation is listed when the memory names one of its cues (tools, package managers, commands,
  file kinds, frameworks). No cue, no situation: an empty list is written as nothing.
- Values are bounded (``MAX_ITEMS`` items of ``MAX_CHARS`` characters) whoever wrote them, and
  each is one printable line: whitespace runs become one space and control characters (terminal
  escapes, NULs, bidirectional overrides) are dropped, since a saving agent's list is shown on
  terminals (``--explain``) and read back into prompts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memdir.applies_rules import EXPLAIN, EXPLAIN_CUES, SITUATIONS, STYLE, STYLE_CUES
from memdir.errors import FrontmatterError, MemdirError
from memdir.model import Memory
from memdir.script import printable
from memdir.store import MemoryStore

FIELD = "applies_when"
# Who wrote a stored list when it was not a person (absent: a person, or the rules' own list):
# "agent", the saving agent at save time, is kept like a person's; "model", a model run in the
# background, may be refreshed by the next run.
BY_FIELD = "applies_when_by"
BY_AGENT = "agent"
BY_MODEL = "model"
MAX_ITEMS = 8
MAX_CHARS = 160

# The offline rules' table (situation, cue pattern) lives in memdir.applies_rules.
# Cues are matched against the lowercased text (three times faster than IGNORECASE over 44
# alternations, which was most of an index build's non-model time); the cues hold no escapes
# whose meaning lowercasing would change (\S, \W, \D, \B).
_COMPILED = tuple((s, re.compile(rf"\b(?:{cue.lower()})\b")) for s, cue in SITUATIONS)
_EXPLAIN_RE = re.compile(rf"\b(?:{EXPLAIN_CUES})\b", re.IGNORECASE)
_RUN = re.compile(r"\w+")


def _alternatives(cue: str) -> list[str]:
    """The top-level ``|`` branches of a cue pattern."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(cue):
        ch = cue[i]
        if ch == "\\":
            i += 2  # an escaped character opens, closes and splits nothing
            continue
        depth += (ch == "(") - (ch == ")")
        if ch == "|" and depth == 0:
            out.append(cue[start:i])
            start = i + 1
        i += 1
    return [*out, cue[start:]]


_ANCHOR_CHARS = 6  # long enough to tell "conda" from "configure", short enough to stay cheap
# a branch's literal start: word characters, and punctuation written escaped ("t\\.run")
_LITERAL = re.compile(r"(?:[a-z0-9_#@-]|\\[.+#@-])+")


@dataclass(frozen=True, slots=True)
class _Anchors:
    """What a text must hold for a cue to match in it: a word starting with one of ``words``,
    or one of ``texts`` anywhere (a branch whose start has punctuation: ".env", "n+1")."""

    words: frozenset[str]
    texts: tuple[str, ...]

    def absent(self, starts: set[str], text: str) -> bool:
        return self.words.isdisjoint(starts) and not any(t in text for t in self.texts)


def _anchors(cue: str) -> _Anchors | None:
    """One anchor per branch of ``\\b(?:cue)\\b``; None when a branch has no literal start of
    two characters or more ("e-?mail": the hyphen is optional), so the cue is always scanned."""
    words, texts = set(), []
    for branch in _alternatives(cue):
        lead = _LITERAL.match(branch)
        if lead is None:
            return None
        literal = lead.group()
        if branch[len(literal) : len(literal) + 1] in ("?", "*", "{"):
            literal = literal[:-2] if literal[-2:-1] == "\\" else literal[:-1]  # "pipx?"
        plain = literal.replace("\\", "")
        if len(plain) < 2:
            return None
        if re.fullmatch(r"\w+", plain):
            words.add(plain[:_ANCHOR_CHARS])
        else:
            texts.append(plain)
    return _Anchors(frozenset(words), tuple(texts))


# A cue matches at a word boundary, so the word it starts in begins with one of its anchors:
# a memory none of whose words does cannot match it, and its scan is skipped (44 cues' scans
# of every memory were most of a first index build)
_ANCHORS = tuple(_anchors(cue.lower()) for _, cue in SITUATIONS)


def _starts(text: str) -> set[str]:
    """The first one to six characters of every word of ``text``."""
    out: set[str] = set()
    for word in set(_RUN.findall(text)):
        out.update(word[:n] for n in range(1, _ANCHOR_CHARS + 1))
    return out


_STYLE_RE = re.compile(rf"\b(?:{STYLE_CUES})\b", re.IGNORECASE)


def derive(memory_type: str | None, name: str, description: str, body: str) -> list[str]:
    """The situations a memory governs, by rules (see module); most specific cues first."""
    text = f"{name}\n{description}\n{body}"
    head = f"{name}\n{description}"
    low_head, low_body = head.lower(), body.lower()
    found: list[tuple[int, str]] = []
    # one scan of head and body together: no cue matches a line break (none has \s, \W, a
    # negated class or a bare dot), so no match crosses from the head into the body
    low = f"{low_head}\n{low_body}"
    starts = _starts(low)
    for (situation, pattern), anchors in zip(_COMPILED, _ANCHORS, strict=True):
        if anchors is not None and anchors.absent(starts, low):
            continue
        # Cues in the name or description weigh more than cues only in the body.
        hits = sum(3 if m.start() < len(low_head) else 1 for m in pattern.finditer(low))
        if hits:
            found.append((hits, situation))
    if memory_type == "user" and _EXPLAIN_RE.search(text):
        found.append((100, EXPLAIN))
    if memory_type in ("user", "feedback") and _STYLE_RE.search(head):
        found.append((50, STYLE))
    found.sort(key=lambda pair: -pair[0])
    return [situation for _, situation in found[:MAX_ITEMS]]


def normalise(value: Any) -> list[str]:
    """The stored field as a bounded list of one-line strings (a single string is one item)."""
    if value is None:
        return []
    items: Iterable[Any] = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        return []
    out: list[str] = []
    for item in items:
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            text = " ".join(printable(str(item)).split())[:MAX_CHARS].rstrip()
            if text and text not in out:
                out.append(text)
    return out[:MAX_ITEMS]


def as_given(items: Iterable[str]) -> list[str]:
    """A person's list (``memdir add --applies-when``), stored as given: one that would not be
    (more than ``MAX_ITEMS`` situations, or one over ``MAX_CHARS`` characters) is refused rather
    than cut, so nothing they typed is lost without a word."""
    given = [item for item in items if item.strip()]
    if len(given) > MAX_ITEMS:
        raise FrontmatterError(f"applies_when takes at most {MAX_ITEMS} situations ({len(given)})")
    for item in given:
        if len(" ".join(item.split())) > MAX_CHARS:
            raise FrontmatterError(
                f"an applies_when situation is at most {MAX_CHARS} characters: {item[:40]!r}…"
            )
    return normalise(given)


def stored(memory: Memory) -> list[str]:
    """What the memory's frontmatter says (empty when the field is absent)."""
    return normalise(memory.extra.get(FIELD))


def for_memory(memory: Memory) -> list[str]:
    """The stored situations, or the rules' when none are stored."""
    return stored(memory) or derive(memory.type, memory.name, memory.description, memory.body)


def with_applies_when(memory: Memory, situations: list[str] | None = None) -> Memory:
    """``memory`` with ``applies_when`` filled when it has none (``situations`` or the rules).

    A stored list (a person's or a model's) is never replaced here; pass ``replace=True``
    semantics by calling :func:`set_applies_when` instead.
    """
    if stored(memory):
        return memory
    found = normalise(situations) if situations is not None else for_memory(memory)
    if found:
        memory.extra[FIELD] = found
    return memory


def set_applies_when(memory: Memory, situations: list[str]) -> Memory:
    """``memory`` with ``applies_when`` replaced (a model's or a person's list)."""
    found = normalise(situations)
    if found:
        memory.extra[FIELD] = found
    else:
        memory.extra.pop(FIELD, None)
    return memory


def for_recall(rules: list[str], stored: list[str]) -> list[str]:
    """What recall reads as a memory's situations: the rules' first, then the stored list's new
    ones (up to ``MAX_ITEMS`` each).

    Whoever wrote the stored list (a person, the saving agent with its file tools, a model), the
    rules' situations stay evidence too: the intents match the rules' wording, and on the
    evaluation sets a model's list after the rules' surfaced more than the model's alone
    (docs/benchmarks.md, "Recall for tasks").
    """
    return [*rules, *(s for s in stored if s not in rules)][: 2 * MAX_ITEMS]


def initial(memory_type: str | None, name: str, description: str, body: str) -> dict[str, Any]:
    """The frontmatter a new memory starts with: ``{"applies_when": [...]}`` by the rules, or
    ``{}`` (for ``MemoryStore.create(extra=...)``: one write, one guard check)."""
    found = derive(memory_type, name, description, body)
    return {FIELD: found} if found else {}


def from_agent(
    memory_type: str | None, name: str, description: str, body: str, situations: Iterable[Any]
) -> dict[str, Any]:
    """The frontmatter of a memory the saving agent gave situations for (``memory_save`` with
    ``applies_when``): its own list, marked ``agent``; without any, the rules' (:func:`initial`).

    The file keeps the agent's list alone: recall reads the rules' situations first anyway
    (:func:`for_recall`), so nothing of the agent's is squeezed out by the bound.
    """
    given = normalise(list(situations))  # once: ``situations`` may be a one-shot iterator
    if not given:
        return initial(memory_type, name, description, body)
    return {FIELD: given, BY_FIELD: BY_AGENT}


def marked(memory: Memory) -> str:
    """Who wrote the stored list when it was not a person: BY_MODEL, BY_AGENT, or ""."""
    mark = memory.extra.get(BY_FIELD)
    return mark if mark in (BY_MODEL, BY_AGENT) else ""


def stamp(
    store: MemoryStore, rel: str, situations: list[str] | None = None, *, replace: bool = False
) -> list[str]:
    """Write ``applies_when`` into a stored memory (under the store lock); returns the list.

    Without ``situations`` the rules fill a missing field; ``replace`` puts a model's or a
    person's list in place of the stored one. A file that already says what it should is not
    rewritten (its mtime, and so the recall index, stay as they are).
    """
    written: list[str] = []

    def change(memory: Memory) -> Memory | None:
        nonlocal written
        before = stored(memory)
        if replace and situations is not None:
            set_applies_when(memory, situations)
        else:
            with_applies_when(memory, situations)
        written = stored(memory)
        return memory if written != before else None

    with store.lock():
        current = store.read(rel)
        if change(current) is not None:
            store.save(current)
    return written


def backfill(store: MemoryStore) -> tuple[list[str], list[str]]:
    """Fill ``applies_when`` by rules in every memory that has none: (written, problems).

    What ``memdir reindex`` runs for dirs written before the field existed. A file that cannot be
    read or written is reported and left alone.
    """
    written: list[str] = []
    problems: list[str] = []
    for header in store.list():
        try:
            before = stored(store.read(header.filename))
            if not before and stamp(store, header.filename):
                written.append(header.filename)
        except (MemdirError, OSError) as exc:
            problems.append(f"{header.filename}: {exc}")
    return written, problems


__all__ = [
    "BY_AGENT",
    "BY_FIELD",
    "BY_MODEL",
    "FIELD",
    "MAX_CHARS",
    "MAX_ITEMS",
    "as_given",
    "backfill",
    "derive",
    "for_memory",
    "for_recall",
    "from_agent",
    "initial",
    "marked",
    "normalise",
    "set_applies_when",
    "stamp",
    "stored",
    "with_applies_when",
]
