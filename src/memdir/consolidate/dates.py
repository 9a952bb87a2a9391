"""Relative dates made absolute, from the date the memory itself was written.

"We shipped yesterday" means nothing a month later. The anchor is the memory's own date (its
``updated`` frontmatter, else ``created``, else the file's mtime): the day the sentence was
written, as far as the file can tell. Each phrase keeps its wording and gains the date in
parentheses — ``yesterday (2026-11-28)`` — so nothing is lost if the anchor guess is off, and a
second pass finds nothing left to do (idempotent).

Not touched: fenced code blocks, inline code, possessives ("today's standup"), and bare weekday
names ("on Friday" could be any Friday).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_NUM = r"(?P<n>\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_DAY = "|".join(_WEEKDAYS)
_PHRASE = re.compile(
    rf"\b(?:"
    rf"(?P<simple>today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening))"
    rf"|(?P<rel>last|next|this) (?P<unit>week|month|year|{_DAY})"
    rf"|{_NUM} (?P<span>days?|weeks?) (?P<dir>ago|from now)"
    rf"|in {_NUM.replace('?P<n>', '?P<n2>')} (?P<span2>days?|weeks?)"
    rf")\b(?!'s|’s| \((?:\d{{4}}|week of ))",
    re.IGNORECASE,
)
_INLINE_CODE = re.compile(r"`[^`]*`")


@dataclass(frozen=True, slots=True)
class DateFix:
    phrase: str
    absolute: str


def _monday(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def resolve(match: re.Match[str], anchor: dt.date) -> str | None:
    """The absolute date (or week/month) a relative phrase means, written on ``anchor``."""
    g = match.groupdict()
    if g["simple"]:
        word = g["simple"].lower()
        offset = {"yesterday": -1, "tomorrow": 1}.get(word, 0)
        return (anchor + dt.timedelta(days=offset)).isoformat()
    if g["rel"]:
        rel, unit = g["rel"].lower(), g["unit"].lower()
        step = {"last": -1, "next": 1, "this": 0}[rel]
        if unit == "week":
            return f"week of {_monday(anchor + dt.timedelta(weeks=step)).isoformat()}"
        if unit == "month":
            month = anchor.month - 1 + step
            return f"{anchor.year + month // 12:04d}-{month % 12 + 1:02d}"
        if unit == "year":
            return f"{anchor.year + step}"
        target = _WEEKDAYS.index(unit)
        if rel == "last":
            back = (anchor.weekday() - target) % 7 or 7
            return (anchor - dt.timedelta(days=back)).isoformat()
        ahead = (target - anchor.weekday()) % 7
        if rel == "next":
            ahead = ahead or 7
        return (anchor + dt.timedelta(days=ahead)).isoformat()
    raw_n = g["n"] or g["n2"]
    span = (g["span"] or g["span2"]).lower()
    n = int(raw_n) if raw_n.isdigit() else _NUMBERS[raw_n.lower()]
    days = n * (7 if span.startswith("week") else 1)
    sign = -1 if (g["dir"] or "").lower() == "ago" else 1
    return (anchor + dt.timedelta(days=sign * days)).isoformat()


def _fix_line(line: str, anchor: dt.date, fixes: list[DateFix]) -> str:
    code_spans = [m.span() for m in _INLINE_CODE.finditer(line)]

    def replace(match: re.Match[str]) -> str:
        start = match.start()
        if any(a <= start < b for a, b in code_spans):
            return match.group(0)
        absolute = resolve(match, anchor)
        if absolute is None:
            return match.group(0)
        fixes.append(DateFix(match.group(0), absolute))
        return f"{match.group(0)} ({absolute})"

    return _PHRASE.sub(replace, line)


def absolutize(body: str, anchor: dt.date) -> tuple[str, list[DateFix]]:
    """``body`` with every relative date phrase annotated; the fixes made."""
    fixes: list[DateFix] = []
    out: list[str] = []
    fenced = False
    for line in body.splitlines(keepends=True):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            out.append(line)
            continue
        if fenced:
            out.append(line)
            continue
        out.append(_fix_line(line, anchor, fixes))
    return "".join(out), fixes
