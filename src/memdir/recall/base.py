"""The selector interface: pick the few memories worth surfacing for a query.

A selector sees only headers (filename, description, type, mtime) — never bodies — and returns at
most ``limit`` selections whose ``filename`` is one of the given headers' filenames. Selectors
are advisory: a selector that cannot decide returns ``[]`` rather than raising, because recall
runs beside the agent's turn and must never break it. Implementations:
``recall.llm_select.LLMSelector`` (a side query to a model) and the offline selectors in
``recall.local*``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from memdir.model import MemoryHeader

MAX_SELECTED = 5


@dataclass(frozen=True, slots=True)
class Selection:
    """One chosen memory. ``score`` and ``reason`` are optional: an LLM selector has neither."""

    filename: str
    score: float | None = None
    reason: str | None = None


@runtime_checkable
class Selector(Protocol):
    """Chooses up to ``limit`` of ``headers`` relevant to ``query``, most relevant first."""

    async def select(
        self,
        query: str,
        headers: Sequence[MemoryHeader],
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
    ) -> list[Selection]: ...


@runtime_checkable
class IndexedSelector(Protocol):
    """A selector that keeps its own index of the memory dir, so recall need not pass headers.

    ``exclude`` holds the paths (relative to the memory dir) already surfaced this session.
    Synchronous: the engine runs it in a worker thread.
    """

    def select_unseen(
        self,
        query: str,
        exclude: AbstractSet[str],
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
    ) -> list[Selection]: ...


def takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` names the keyword ``name``: optional arguments a selector grew later
    (``recent_tools``, ``context``) go only to selectors that take them, so older selectors and
    plain fakes keep working (a bare ``**kwargs`` does not count: it usually forwards)."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        return False


__all__ = ["MAX_SELECTED", "IndexedSelector", "Selection", "Selector", "takes_keyword"]
