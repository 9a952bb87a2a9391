"""Freshness of a memory: how old it is, and the note that tells the model to verify old facts.

Ages are whole days, floored, never negative (clock skew must not produce "-1 days ago").
"""

from __future__ import annotations

import math
import time

DAY_SECONDS = 86_400


def memory_age_days(mtime: float, now: float | None = None) -> int:
    current = time.time() if now is None else now
    return max(0, math.floor((current - mtime) / DAY_SECONDS))


def memory_age(mtime: float, now: float | None = None) -> str:
    """'today', 'yesterday' or 'N days ago'."""
    days = memory_age_days(mtime, now)
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"


def freshness_note(mtime: float, now: float | None = None) -> str | None:
    """A staleness warning for memories older than one day; None when fresh."""
    days = memory_age_days(mtime, now)
    if days <= 1:
        return None
    return (
        f"This memory is {days} days old. Memories are point-in-time observations, not live "
        "state: what it says about code, files or behaviour may be outdated. Verify it against "
        "the current state before asserting it as fact."
    )


def attachment_header(path: str, mtime: float, now: float | None = None) -> str:
    """The line that introduces a surfaced memory (computed once, so prompts stay cache-stable)."""
    note = freshness_note(mtime, now)
    if note is not None:
        return f"<system-reminder>{note}</system-reminder>\n\nMemory: {path}:"
    return f"Memory (saved {memory_age(mtime, now)}): {path}:"
