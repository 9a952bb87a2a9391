"""The whole-session rules on a host that extracts turn by turn (a ``Stop`` hook's worker).

A per-turn extractor reads the new turn; the session rules (:mod:`memdir.extract.session_rules`)
need the session: a check-up asked twice, a command that failed in one turn and worked in the
next. :func:`extract_session_so_far` runs them over the session so far after each turn and
keeps what closes in the new part, so a session extracted turn by turn ends with the memories
one run over the whole transcript leaves (``tests/extract/test_session_pass.py`` proves it on a
transcript). It is idempotent: run twice over the same messages, the second run writes nothing
(evidence a memory holds is not added again, :mod:`memdir.extract.form`), so calling it after an
extractor that already ran the rules (the offline fallback) costs only the comparison.

:class:`WithSessionLessons` wraps any extractor (the model one) with it: the wrapped result's
files and the lessons' files are reported together, in one "Saved N memories" notice.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Sequence

from memdir.extract.base import ExtractionResult, Extractor, unique_written
from memdir.extract.rule_extractor import RuleExtractor
from memdir.llm.base import Message
from memdir.store import MemoryStore


def extract_session_so_far(
    store: MemoryStore,
    messages: Sequence[Message],
    *,
    new_messages: int,
    clock: Callable[[], dt.datetime] | None = None,
) -> ExtractionResult:
    """The session rules over ``messages`` (the whole session so far, oldest first) for lessons
    that close in its last ``new_messages`` messages."""
    since = max(0, len(messages) - new_messages) if new_messages > 0 else len(messages)
    return RuleExtractor(store, clock=clock).apply_session(messages, since=since)


class WithSessionLessons:
    """``primary``'s extraction, then the session rules over the same messages."""

    def __init__(
        self,
        primary: Extractor,
        store: MemoryStore,
        *,
        clock: Callable[[], dt.datetime] | None = None,
    ) -> None:
        self.primary = primary
        self.store = store
        self._clock = clock

    async def extract(self, messages: Sequence[Message], *, new_messages: int) -> ExtractionResult:
        result = await self.primary.extract(messages, new_messages=new_messages)
        lessons = await asyncio.to_thread(
            extract_session_so_far,
            self.store,
            messages,
            new_messages=new_messages,
            clock=self._clock,
        )
        result.written = unique_written([*result.written, *lessons.written])
        result.removed = [*result.removed, *lessons.removed]
        return result
