"""A lesson asked for once in each of two sessions: single sightings kept in the daily log.

Two requests for a draft PR in one session make a habit (:mod:`memdir.extract.habits`). One
request on Monday and one on Thursday say the same, but no single session shows it: the gap study
of issue #30 found draft PRs asked for in five sessions of one repository and tests first in
nine, mostly once per session. So the first request of a session is noted as a bullet in the
memory dir's daily log (:mod:`memdir.daily_log`), the Markdown journal a person reads and dream
distils::

    - 14:02 — seen draft-pr in session 3f2a9c1d0b7e: "commit, push and open a draft PR"

and a later session that asks again finds that bullet — another session's — and saves the
lesson, both requests as its evidence. The log is the canonical record of a sighting: nothing
else remembers it, so deleting the bullet forgets it.

Invariants:

* A sighting is noted once per session and lesson (the session is a hash of its first user
  message, stable over every prefix of it, so the hook's turn-by-turn passes and one pass over
  the whole transcript note and promote the same).
* Only another session's sighting promotes; two in one session are the habit rules' business.
* A sighting bullet is bookkeeping, not a statement: dream does not distil its quoted words
  (:func:`is_sighting`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.daily_log import append_log, bullets, log_files
from memdir.extract.rules import Candidate
from memdir.script import printable

_SAID_CHARS = 100
_BULLET = re.compile(
    r'^seen (?P<lesson>[a-z][a-z0-9-]{0,40}) in session (?P<session>[0-9a-f]{12}): "(?P<said>.*)"$'
)


@dataclass(frozen=True, slots=True)
class Sighting:
    at: int  # index of the message that asked
    lesson: str  # which lesson: a habit's id, "check-up-push", …
    said: str  # the user's words, as asked
    candidate: Candidate  # the lesson to save once another session asks too


@dataclass(frozen=True, slots=True)
class _Seen:
    session: str
    day: dt.date
    said: str


def session_key(first_user_text: str) -> str:
    return hashlib.sha256(" ".join(first_user_text.split()).encode()).hexdigest()[:12]


def is_sighting(bullet_text: str) -> bool:
    return _BULLET.match(bullet_text) is not None


def across_sessions(
    root: Path,
    found: Sequence[Sighting],
    *,
    session: str,
    since: int,
    now: dt.datetime,
) -> list[tuple[int, Candidate]]:
    """Note each sighting from ``since`` on in the daily log, and (index, lesson) for each one
    another session's sighting already noted."""
    fresh = [s for s in found if s.at >= since]
    if not fresh:
        return []
    seen = _noted(root)
    promoted = []
    for sighting in fresh:
        earlier = [s for s in seen.get(sighting.lesson, []) if s.session != session]
        said = _short(sighting.said)
        if not any(s.session == session for s in seen.get(sighting.lesson, [])):
            append_log(root, f'seen {sighting.lesson} in session {session}: "{said}"', now=now)
            seen.setdefault(sighting.lesson, []).append(_Seen(session, now.date(), said))
        if earlier:
            first = earlier[0]
            evidence = (
                f'the user asked "{first.said}" in a session of {first.day.isoformat()}, and '
                f'"{said}" in this one'
            )
            lesson = dataclasses.replace(
                sighting.candidate,
                why="the user asked for it in separate sessions",
                evidence=evidence,
            )
            promoted.append((sighting.at, lesson))
    return promoted


def _noted(root: Path) -> dict[str, list[_Seen]]:
    seen: dict[str, list[_Seen]] = {}
    for rel, day in log_files(root):
        for bullet in bullets(root, rel, day):
            m = _BULLET.match(bullet.text)
            if m is not None:
                entry = _Seen(m.group("session"), day, m.group("said"))
                seen.setdefault(m.group("lesson"), []).append(entry)
    return seen


def _short(text: str) -> str:
    # one line of plain text: a journal a person cats must not carry a terminal escape
    flat = " ".join(printable(text).split()).replace('"', "'")
    return flat if len(flat) <= _SAID_CHARS else flat[: _SAID_CHARS - 1] + "…"


__all__ = ["Sighting", "across_sessions", "is_sighting", "session_key"]
