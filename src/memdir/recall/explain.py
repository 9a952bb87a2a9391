"""Why a memory would or would not surface: recall's explain over exactly what the hooks see.

Invariant: the candidates are the *current* memories (:func:`memdir.validity.current_only`),
as :class:`~memdir.recall.engine.MemoryRecall` selects from, so an expired, superseded or
retired memory never shows as "relevant" here while recall would never surface it.
``memdir recall --explain`` and ``memdir ui``'s "Why it surfaced" both call this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memdir.model import MemoryHeader
from memdir.validity import current_only

if TYPE_CHECKING:
    from memdir.recall.local import Explanation, LocalSelector


def explain(
    selector: LocalSelector,
    headers: Sequence[MemoryHeader],
    query: str,
    *,
    limit: int = 5,
    top: int | None = 20,
) -> list[Explanation]:
    """Every candidate among the current memories in fused order, with the verdict."""
    return selector.explain(query, current_only(headers), limit=limit, top=top)
