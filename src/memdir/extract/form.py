"""The reference's memory form for what the offline rules save: the rule, **Why:**, **How to
apply:**, and the sessions' evidence.

Invariants:

* The name and description state the rule in general words; the session's specifics (the
  command lines, the output, the user's sentence) appear only in the evidence lines under
  **Why:**, one line per sighting (``- 2026-12-01: …``), newest last, at most
  :data:`MAX_EVIDENCE`.
* **How to apply:** is the rule's own (a lesson brings its own; for a user's statement it is
  built from the statement's trigger, the choice it makes or what it forbids), never one
  sentence shared by every memory.
* Adding evidence is idempotent: a line already present changes nothing (:func:`with_evidence`
  returns None), so running the rules again over the same session writes nothing. A memory a
  person wrote keeps every word: evidence goes under a **Seen again:** list at its end.
"""

from __future__ import annotations

import datetime as dt
import re

from memdir.extract.rules import Candidate
from memdir.model import MemoryType
from memdir.sameness import normalise
from memdir.script import contains_cjk

MAX_EVIDENCE = 5
SEEN_AGAIN = "**Seen again:**"
_BULLET = re.compile(r"^- \d{4}-\d{2}-\d{2}: ")
_TRIGGER = re.compile(
    r"\b(?P<t>before|after|whenever|when|every time|each time|while|in every|on every|for every)"
    r"\s+(?P<w>[^,.;]{3,80})",
    re.IGNORECASE,
)
_CHOICE = re.compile(
    r"^(?:use|prefer|pick|choose)\s+(?P<a>.+?),?\s+"
    r"(?:instead of|rather than|not|over)\s+(?P<b>.+)$",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(r"^(?:never|don't|do not|avoid|stop)\s+(?P<x>.+)$", re.IGNORECASE)
_POSITIVE = re.compile(r"^(?:always|make sure(?: that| to)?|be sure to|ensure)\s+(?P<x>.+)$", re.I)


_DANGLING = frozenset(
    {"a", "an", "the", "and", "or", "but", "to", "of", "in", "on", "at", "for", "with", "before"}
    | {"after", "into", "from", "by", "as", "that", "this", "your", "our", "my", "its", "their"}
)


def name_of(candidate: Candidate) -> str:
    """The memory's title: the lesson's own name, else the statement's first words."""
    if candidate.name:
        return candidate.name
    words = candidate.statement.split()[:7]
    while len(words) > 3 and words[-1].lower().strip(",;:.") in _DANGLING:
        words.pop()  # "Keep adding a version number to the" ends on a word that needs a next
    return " ".join(words).rstrip(",;:.")  # a title, not a quote cut short: no "…"


def evidence_of(candidate: Candidate, today: dt.date) -> str:
    """This sighting's evidence line."""
    said = candidate.evidence or f'the user said: "{_flat(candidate.source, 240)}"'
    return f"- {today.isoformat()}: {said.rstrip('.')}"


def how_to_apply(candidate: Candidate) -> str | None:
    """**How to apply:** for this candidate; None for types the form gives none (user,
    reference)."""
    if candidate.how:
        return candidate.how
    if candidate.type not in (MemoryType.FEEDBACK, MemoryType.PROJECT):
        return None
    text = candidate.statement.rstrip(".")
    lower = text[0].lower() + text[1:]
    if m := _CHOICE.match(text):
        return f"Whenever {_flat(m.group('b'))} would be the choice here, use {m.group('a')}."
    if m := _TRIGGER.search(text):
        when = f"{m.group('t')} {m.group('w')}".strip()
        action = (text[: m.start()] + text[m.end() :]).strip(" ,;:")
        action = re.sub(r"^(?:always|please)\s+", "", action, flags=re.IGNORECASE)
        if len(action.split()) < 2:
            action = lower
        action = action[0].lower() + action[1:]
        return f"{when[0].upper()}{when[1:]}: {action}, without waiting to be asked."
    if m := _NEGATIVE.match(text):
        return f"Do not {m.group('x')} in this project; if it seems necessary, ask the user first."
    if m := _POSITIVE.match(text):
        return f"Make it part of the work itself ({m.group('x')}), without waiting to be asked."
    if candidate.type is MemoryType.PROJECT:
        subject = _subject(text)
        if candidate.rule == "requirement":
            return f"Check every plan and change that touches {subject} against this requirement."
        return f"Rely on this whenever work touches {subject}; say so if it turns out stale."
    return f"In future work here, {lower}, without being reminded."


_VERB = re.compile(
    r"\s(?:is|are|was|were|must|has|have|needs?|can|should|will|lives?|runs?|uses?|listens?|"
    r"starts?|ends?|goes|stays?|belongs?|depends?)\b",
    re.IGNORECASE,
)


def _subject(text: str) -> str:
    """What a fact is about: its words before the first verb ("the staging database")."""
    m = _VERB.search(text)
    head = text[: m.start()] if m and m.start() > 0 else text
    words = head.split()[:6]
    subject = " ".join(words).strip(" ,;:")
    return subject[0].lower() + subject[1:] if subject else "it"


def body_of(candidate: Candidate, today: dt.date) -> str:
    """The body of a new memory: the rule, **Why:** with this session's evidence, **How to
    apply:**."""
    rule = candidate.fact or candidate.statement
    chinese = contains_cjk(rule)
    lines = [_sentence(rule)]
    how = how_to_apply(candidate)
    why = candidate.why or (
        "the session showed it"
        if candidate.rule == "proven-fix"
        else "用户明确这样说过"
        if chinese
        else "the user said so explicitly"
    )
    lines += ["", f"**Why:** {_sentence(why)} Seen in:", evidence_of(candidate, today)]
    if how:
        lines += ["", f"**How to apply:** {how}"]
    return "\n".join(lines) + "\n"


def _sentence(text: str) -> str:
    """``text`` as a sentence: a Chinese one ends in 。, any other in a full stop."""
    text = text.rstrip(".。 ")
    return text + ("。" if contains_cjk(text) else ".")


_REASON = re.compile(r"^\*\*Why:\*\* (?P<why>.+?)[.。] Seen in:$", re.MULTILINE)


def reason_of(body: str) -> str | None:
    """The reason under **Why:** in a body this module wrote, or None."""
    m = _REASON.search(body)
    return m.group("why") if m else None


def with_evidence(body: str, line: str, *, ours: bool) -> str | None:
    """``body`` with one more evidence line, or None when it already holds that line.

    Ours: the line joins the bullets under **Why:** (the oldest dropped beyond the cap). A
    person's: their text is kept whole and the line goes into a **Seen again:** list at the end.
    """
    lines = body.rstrip("\n").split("\n")
    if normalise(line) in {normalise(text) for text in lines}:
        return None  # seen already (case and punctuation aside)
    bullets = [i for i, text in enumerate(lines) if _BULLET.match(text)]
    if ours and bullets:
        run = _last_run(bullets)
        lines.insert(run[-1] + 1, line)
        if len(run) + 1 > MAX_EVIDENCE:
            del lines[run[0]]
        return "\n".join(lines) + "\n"
    if SEEN_AGAIN in lines:
        return "\n".join(lines) + "\n" + line + "\n"
    return "\n".join(lines) + f"\n\n{SEEN_AGAIN}\n{line}\n"


def is_evidence(line: str) -> bool:
    return bool(_BULLET.match(line))


def merge_evidence(fresh: list[str], kept: list[str]) -> str:
    """A new body's lines (:func:`body_of`, one evidence line) with the older evidence ``kept``
    in front of its own, newest last, within the cap."""
    at = next(i for i, line in enumerate(fresh) if _BULLET.match(line))
    seen = {normalise(line): line for line in [*kept, fresh[at]]}
    lines = list(seen.values())[-MAX_EVIDENCE:]
    return "\n".join([*fresh[:at], *lines, *fresh[at + 1 :]]) + "\n"


def without_evidence(text: str) -> str:
    """``text`` without evidence lines and dates: what comparing two lessons should read."""
    kept = [
        ln
        for ln in text.split("\n")
        if not _BULLET.match(ln) and ln.strip() != SEEN_AGAIN and not ln.startswith("_Source:")
    ]
    return re.sub(r"\s*\bSeen in:|\b\d{4}-\d{2}-\d{2}\b", "", "\n".join(kept))


def _last_run(indexes: list[int]) -> list[int]:
    run = [indexes[-1]]
    for i in reversed(indexes[:-1]):
        if i != run[0] - 1:
            break
        run.insert(0, i)
    return run


def _flat(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…"
