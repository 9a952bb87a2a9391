"""Extraction with an offline fallback: the model path first, the rule extractor when the model
cannot be reached at all.

Invariant: the fallback runs only when the primary's model was *unavailable*
(:class:`~memdir.errors.HostModelUnavailableError`: the host CLI is missing, logged out, failing,
slow, or today's budget is spent) — never after a model run that worked but chose to save
nothing, so one turn is never extracted twice. The result says which path ran (``fallback``).
"""

from __future__ import annotations

from collections.abc import Sequence

from memdir.errors import HostModelUnavailableError
from memdir.extract.base import ExtractionResult, Extractor
from memdir.llm.base import Message


def unavailable(result: ExtractionResult) -> HostModelUnavailableError | None:
    """The 'model unavailable' failure behind ``result``, if that is why it failed."""
    failure = result.run.failure if result.run is not None else None
    return failure if isinstance(failure, HostModelUnavailableError) else None


class FallbackExtractor:
    """``primary`` (a model extractor); ``fallback`` (offline) when its model is unavailable."""

    def __init__(self, primary: Extractor, fallback: Extractor) -> None:
        self.primary = primary
        self.fallback = fallback
        self.fell_back: str | None = None  # why the last call fell back

    async def extract(self, messages: Sequence[Message], *, new_messages: int) -> ExtractionResult:
        result = await self.primary.extract(messages, new_messages=new_messages)
        reason = unavailable(result)
        if reason is None:
            self.fell_back = None
            return result
        self.fell_back = str(reason)
        offline = await self.fallback.extract(messages, new_messages=new_messages)
        offline.fallback = f"offline (host model unavailable: {reason})"
        return offline
