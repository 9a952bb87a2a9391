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
import contextlib
import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from memdir.model import MemoryHeader
from memdir.prompt_context import RecallContext
from memdir.recall.base import MAX_SELECTED, Selection, takes_keyword
from memdir.recall.engine import MemoryRecall
from memdir.recall.keyword import KeywordSelector
from memdir.recall.session import RecallSession
from memdir.recall.surface import RelevantMemory

T = TypeVar("T")


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


def in_daemon_thread(fn: Callable[[], T], *, name: str) -> asyncio.Future[T]:
    """Run ``fn`` on a daemon thread; the future resolves with its result.

    For the index warm-up, which can take minutes on a large new memory dir: a worker of the
    loop's executor would make ``asyncio.run`` (and so the program's exit) wait for it, while a
    daemon thread is simply dropped at exit (the index is saved atomically, so an unfinished
    build leaves the previous index, or none, behind).
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]  # None only with an error

    def run() -> None:
        try:
            result, error = fn(), None
        except BaseException as exc:  # handed to the awaiting task, which reports it
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody is waiting any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


class _Inline:
    """A local selector's ranking called in place: the caller is already on a worker thread, and
    the selector's own ``select`` would hop to yet another thread."""

    def __init__(self, select_sync: Callable[..., list[Selection]]) -> None:
        self._select = select_sync
        self._tools = takes_keyword(select_sync, "recent_tools")
        self._context = takes_keyword(select_sync, "context")

    async def select(
        self,
        query: str,
        headers: Sequence[MemoryHeader],
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
        context: RecallContext | None = None,
    ) -> list[Selection]:
        extra: dict[str, Any] = {"recent_tools": recent_tools} if self._tools else {}
        if self._context and context is not None:
            extra["context"] = context
        return self._select(query, headers, limit=limit, **extra)


def _find_in_thread(
    recall: MemoryRecall,
    query: str,
    session: RecallSession,
    recent_tools: Sequence[str],
    context: RecallContext | None,
) -> list[RelevantMemory]:
    return asyncio.run(recall.find(query, session, recent_tools=recent_tools, context=context))


def inline(recall: MemoryRecall) -> MemoryRecall | None:
    """The same recall with its local selector called in place; None for any other selector."""
    select_sync = getattr(recall.selector, "select_sync", None)
    own = getattr(type(recall.selector), "select", None)
    if not callable(select_sync) or own not in _sync_backed():
        return None
    return MemoryRecall(
        recall.memory_dir,
        _Inline(select_sync),
        ranker=recall.ranker,
        manifest_cap=recall.manifest_cap,
        header_cache=recall.header_cache,
    )


async def find(
    recall: MemoryRecall,
    query: str,
    session: RecallSession,
    recent_tools: Sequence[str],
    *,
    local: MemoryRecall | None = None,
    context: RecallContext | None = None,
) -> list[RelevantMemory]:
    """``recall.find`` without blocking the caller's loop on local work (``local``: the
    :func:`inline` twin of ``recall``, which then runs whole on one worker thread)."""
    if local is not None:
        return await asyncio.to_thread(
            _find_in_thread, local, query, session, recent_tools, context
        )
    return await recall.find(query, session, recent_tools=recent_tools, context=context)


@functools.cache
def _sync_backed() -> frozenset[object]:
    """Selector classes whose ``select`` only wraps ``select_sync`` (safe to call in place)."""
    found: set[object] = {KeywordSelector.select}
    try:
        from memdir.recall.local import LocalSelector
    except ImportError:  # the recall extra is not installed
        return frozenset(found)
    found.add(LocalSelector.select)
    return frozenset(found)
