"""Notes that are requests, not facts: "Forget the earlier note that I prefer tabs", "Update: CI
moved from Node 20 to Node 22". A tool that keeps free-form notes (Codex's ad-hoc notes) records
what a person asked for as a note of its own; imported as a fact it would sit beside the fact it
was meant to remove or correct. Here a request is applied to the facts of the same import it
names, and reported as applied in the dry run.

Matching is by content words: a fact is named by a request when it holds every content word of
the request's target (a trailing plural and case aside). A request that names no fact is
reported as such and changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from memdir.importers.base import Item, one_line
from memdir.model import MemoryType

_FORGET = re.compile(
    r"^(?:please\s+)?(?:forget|remove|delete|drop|disregard)\s+(?:about\s+)?"
    r"(?:(?:the|my|that)\s+)?(?:(?:earlier|old|previous|last)\s+)?"
    r"(?:(?:note|memory|fact|preference)s?\s+)?(?:(?:that|about|saying)\s+)?(?P<target>.+?)\.?$",
    re.IGNORECASE,
)
_UPDATE = re.compile(r"^(?:update|correction|changed?)\s*:\s*(?P<fact>.+)$", re.IGNORECASE)
_MOVED = re.compile(
    r"^(?P<subject>.+?)\s+(?:moved|changed|switched|went|was moved|has moved)\s+from\s+"
    r"(?P<old>.+?)\s+to\s+(?P<new>.+?)\.?$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9][a-z0-9._+-]*")
_STOP_WORDS = (
    "a an the i i'm me my we our you your is are was were be to of in on for and or that "
    "this it its with as at by from now"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


@dataclass(frozen=True, slots=True)
class Request:
    """What a note asks: forget facts naming ``target``; or, for an update, keep ``fact`` and
    drop the facts that name ``target`` (the old value) — ``fact`` None for a pure forget."""

    target: str
    fact: str | None = None


def as_request(text: str) -> Request | None:
    """The request a note makes, or None for a note that states a fact."""
    flat = " ".join(text.split())
    if m := _UPDATE.match(flat):
        fact = m.group("fact").strip()
        fact = fact[:1].upper() + fact[1:]
        moved = _MOVED.match(fact)
        old = f"{moved.group('subject')} {moved.group('old')}" if moved else ""
        return Request(target=old, fact=fact)
    if m := _FORGET.match(flat):
        return Request(target=m.group("target"))
    return None


def _words(text: str) -> set[str]:
    out = set()
    for word in _WORD.findall(text.lower()):
        word = word.rstrip(".")
        if word and word not in _STOP:
            out.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return out


def _names(target: str, fact: str) -> bool:
    wanted = _words(target)
    return bool(wanted) and wanted <= _words(fact)


def apply_requests(
    source: str, facts: Sequence[Item], requests: Sequence[tuple[str, Request]]
) -> Iterator[Item]:
    """``facts`` with each request applied (the facts it names skipped, saying which request),
    then one skipped item per request saying what it did."""
    dropped: dict[int, str] = {}
    done: list[tuple[str, Request, list[str]]] = []
    for note, request in requests:
        hit = []
        if request.target:
            for i, item in enumerate(facts):
                text = item.fact or item.body
                if (
                    item.source_id == note
                    or i in dropped
                    or (request.fact and text == request.fact)
                ):
                    continue
                if _names(request.target, text):
                    dropped[i] = note
                    hit.append(one_line(text, 60))
        done.append((note, request, hit))
    for i, item in enumerate(facts):
        if i in dropped:
            why = f"superseded: the request in {dropped[i]} applies to it"
            yield replace(item, skip=why)
        else:
            yield item
    for note, request, hit in done:
        if request.fact is not None:
            continue  # an update is imported as its new fact (above); its old one is dropped
        what = f"forgot {len(hit)}: " + "; ".join(hit) if hit else "it names no imported fact"
        skip = f"a request, not a fact ({what})"
        name = one_line(request.target, 80)
        yield Item(source, f"{note}#request", MemoryType.PROJECT, name, "", "", skip=skip)
