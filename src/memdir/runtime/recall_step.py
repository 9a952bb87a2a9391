"""Recall as the runtime runs it each turn: off the event loop, with a per-session path memo.

* A local selector (one with ``select_sync``: BM25 + MiniLM, or the keyword fallback) does only
  disk and CPU work, so the whole recall (header scan, already-surfaced filter, ranking) runs on a
  worker thread with its own short-lived loop: the agent's loop never stalls on a scan of 2,000
  files. An LLM selector's side query stays on the caller's loop (its HTTP client lives there).
* "Already surfaced this session" compares resolved paths; resolving is a few syscalls per file,
  which at 2,000 memories cost more than the ranking. :class:`MemoRecallSession` resolves each
  path once per session (a memory file renamed into a symlink mid-session is the price: it is
  compared under its first resolution, which at worst surfaces it once more).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memdir.recall.engine import MemoryRecall
from memdir.recall.session import RecallSession
from memdir.recall.surface import RelevantMemory


@dataclass
class MemoRecallSession(RecallSession):
    _resolved: dict[str, str] = field(default_factory=dict, repr=False)

    def seen(self, path: Path | str) -> bool:
        raw = str(path)
        key = self._resolved.get(raw)
        if key is None:
            key = str(Path(raw).resolve())
            self._resolved[raw] = key
        return key in self.surfaced


def _find_in_thread(
    recall: MemoryRecall, query: str, session: RecallSession, recent_tools: Sequence[str]
) -> list[RelevantMemory]:
    return asyncio.run(recall.find(query, session, recent_tools=recent_tools))


async def find(
    recall: MemoryRecall, query: str, session: RecallSession, recent_tools: Sequence[str]
) -> list[RelevantMemory]:
    """``recall.find`` without blocking the caller's loop on local work."""
    if callable(getattr(recall.selector, "select_sync", None)):
        return await asyncio.to_thread(_find_in_thread, recall, query, session, recent_tools)
    return await recall.find(query, session, recent_tools=recent_tools)
