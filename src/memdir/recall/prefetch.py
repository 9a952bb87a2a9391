"""Non-blocking recall: start when the user's message arrives, take the result only if ready.

Invariant: nothing here ever waits for recall. :meth:`RecallPrefetch.take` returns the
attachments if the task has finished, otherwise ``None`` and the turn goes on without them
(the late result is dropped, and the memories stay eligible for a later turn, because they are
recorded as surfaced only when taken). Starting a new prefetch cancels an unfinished one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from memdir.recall.engine import MemoryRecall
from memdir.recall.session import RecallSession
from memdir.recall.surface import Attachment, RelevantMemory, surface

log = logging.getLogger(__name__)


class RecallPrefetch:
    """One in-flight recall per session, started per user turn."""

    def __init__(self, recall: MemoryRecall, session: RecallSession) -> None:
        self.recall = recall
        self.session = session
        self._task: asyncio.Task[list[RelevantMemory]] | None = None

    def start(self, query: str, *, recent_tools: Sequence[str] = ()) -> None:
        """Begin recall for this turn (needs a running event loop); returns immediately."""
        self.cancel()
        self._task = asyncio.get_running_loop().create_task(
            self.recall.find(query, self.session, recent_tools=recent_tools),
            name="memdir-recall-prefetch",
        )

    @property
    def ready(self) -> bool:
        return self._task is not None and self._task.done()

    def take(self, *, now: float | None = None) -> list[Attachment] | None:
        """The attachments if recall has settled, else None. Never blocks."""
        task = self._task
        if task is None or not task.done():
            return None
        self._task = None
        if task.cancelled():
            return None
        if task.exception() is not None:  # find() does not raise, but stay safe
            log.error("recall prefetch failed", exc_info=task.exception())
            return []
        found = task.result()
        return self.session.accept(a for m in found if (a := surface(m, now=now)) is not None)

    def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None

    async def aclose(self) -> None:
        """Cancel and wait for the in-flight task to unwind (clean shutdown)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
