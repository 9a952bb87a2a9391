"""Shared test data for extraction tests."""

from __future__ import annotations

import datetime as dt

from memdir.extract.base import Turn
from memdir.llm.base import Message

FIXED_NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


def conversation(*texts: str, start: int = 0) -> list[Turn]:
    """Alternating user/assistant turns with uuids u0, u1, ..."""
    roles = ("user", "assistant")
    return [
        Turn(f"u{start + i}", Message(roles[(start + i) % 2], text))  # type: ignore[arg-type]
        for i, text in enumerate(texts)
    ]
