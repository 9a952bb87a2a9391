"""Each turn's recall in the runtime: started on the user's message, taken before the model call.

The query is the prompt plus what the conversation just did — its recent turns, the files its
tools read or edited, the tools it used — summarised by the same rule the Claude Code hook uses
on its transcript (:func:`memdir.prompt_context.from_entries` over the messages in transcript
shape), so "add the dependency" right after editing ``admin/package.json`` can surface the
admin UI's package-manager rule while the prompt still decides (see memdir.prompt_context).

Invariants: starting never blocks (recall runs as a task, local work on a worker thread); one
recall in flight (a newer message cancels the older one); a recall that fails or times out is
recorded on the task board and attaches nothing; taken attachments count against the session.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from memdir.config import Settings
from memdir.errors import MissingExtraError
from memdir.llm.base import Message, Provider
from memdir.prompt_context import RecallContext, from_entries
from memdir.recall.engine import MemoryRecall, should_recall
from memdir.recall.session import RecallSession
from memdir.recall.surface import Attachment, RelevantMemory, surface
from memdir.runtime import recall_step
from memdir.runtime.conversation import message_content
from memdir.runtime.options import RuntimeOptions
from memdir.runtime.tasks import TaskBoard, retrieve_exception

# The context needs the last few turns; a turn of many tool rounds is many messages, but the
# files and tools worth naming are in its last rounds (the hook reads a 64 KiB transcript tail).
MAX_MESSAGES = 64
_WARMUP = "recall-warmup"


def context_of(messages: Sequence[Message]) -> RecallContext:
    """The recall context at the end of ``messages`` (bounded, as memdir.prompt_context says)."""
    entries = [
        {"type": m.role, "message": {"role": m.role, "content": message_content(m)}}
        for m in messages[-MAX_MESSAGES:]
    ]
    return from_entries(entries)


def build_engine(
    settings: Settings, memory_dir: Path, cache_dir: Path, provider: Provider | None
) -> tuple[MemoryRecall, str | None]:
    """The configured recall (and a status note when it had to fall back to keywords)."""
    from memdir.recall.factory import build_recall

    kind = settings.recall_selector or "auto"
    try:
        return build_recall(memory_dir, cache_dir, kind=kind, provider=provider), None
    except MissingExtraError:
        from memdir.recall.keyword import KeywordSelector

        fallback = MemoryRecall(
            memory_dir, KeywordSelector(), header_cache=cache_dir / "headers.json"
        )
        return fallback, "keyword fallback (install memdir[recall])"


class RecallTurn:
    """The recall of the current turn, and the context the next one will carry."""

    def __init__(
        self,
        board: TaskBoard,
        session: RecallSession,
        options: RuntimeOptions,
        project_root: Path | None = None,
    ) -> None:
        self.board = board
        # recalled memories are checked against this repository (memdir.evidence)
        self.project_root = project_root if options.evidence else None
        self._evidence: dict[str, Any] = {}
        self.session = session
        self.options = options
        self.engine: MemoryRecall | None = None
        self._local: MemoryRecall | None = None
        self._task: asyncio.Task[list[RelevantMemory]] | None = None
        self._started = 0.0
        self._conversation: Sequence[Message] = ()

    def use(self, engine: MemoryRecall) -> None:
        self.engine = engine
        self._local = recall_step.inline(engine)

    def remember(self, messages: Sequence[Message]) -> None:
        """The conversation at a turn's end: what the next prompt's context is read from."""
        self._conversation = messages

    def warm_up(self) -> None:
        """Load the local index (and embedding model) in the background, so the first turn's
        recall does not pay for it; the first recall simply waits on the index lock if needed."""
        if self.engine is None:
            return
        parts = (self.engine.selector, self.engine.ranker)
        candidates = (getattr(c, "refresh", None) for c in parts)
        refresh = next((r for r in candidates if callable(r)), None)
        if refresh is None:
            return

        def job() -> Any:
            return recall_step.in_daemon_thread(refresh, name="memdir-recall-warmup")

        self.board.spawn(_WARMUP, job, timeout=self.options.warmup_timeout)

    async def stop_warm_up(self) -> None:
        await self.board.cancel(_WARMUP)  # a thread cannot be stopped; its result is dropped

    def start(
        self,
        text: str,
        recent_tools: Sequence[str] = (),
        context: RecallContext | None = None,
    ) -> None:
        """Start recall for ``text`` (needs a running loop); never blocks.

        ``context``: None reads it from the conversation of the last turn's end.
        """
        self.cancel()
        if self.engine is None or not should_recall(text):
            return
        if context is None:
            context = context_of(self._conversation)
        self._started = time.monotonic()
        self._task = asyncio.get_running_loop().create_task(
            self._find(self.engine, text, recent_tools, context), name="memdir-recall"
        )
        self._task.add_done_callback(retrieve_exception)
        self.board.set("recall", state="running")

    async def _find(
        self,
        engine: MemoryRecall,
        text: str,
        recent_tools: Sequence[str],
        context: RecallContext,
    ) -> list[RelevantMemory]:
        async with asyncio.timeout(self.options.recall_timeout):
            found = await recall_step.find(
                engine, text, self.session, recent_tools, local=self._local, context=context
            )
        if found and self.project_root is not None:
            from memdir.evidence import screen

            paths = [m.path for m in found]
            checked = await asyncio.to_thread(screen, paths, self.project_root, None)
            self._evidence = {c.path: c.evidence for c in checked}
        return found

    async def take(self, wait: float | None) -> list[Attachment]:
        """This turn's recalled memories if recall has finished (waiting at most ``wait``)."""
        task = self._task
        if task is None:
            return []
        limit = self.options.recall_wait if wait is None else wait
        if not task.done() and limit > 0:
            await asyncio.wait({task}, timeout=limit)
        if not task.done():
            return []
        self._task = None
        elapsed = time.monotonic() - self._started
        if task.cancelled() or task.exception() is not None:
            error = "timed out" if task.cancelled() else repr(task.exception())
            self.board.set("recall", state="failed", last_error=error, last_seconds=elapsed)
            return []
        found = [a for m in task.result() if (a := surface(m)) is not None]
        taken = self.session.accept(self._checked(a) for a in found)
        status = self.board.status("recall")
        self.board.set(
            "recall",
            state="ok",
            runs=status.runs + 1,
            last_seconds=elapsed,
            detail=f"{len(taken)} attached; {self.session.used_bytes} bytes this session",
        )
        return taken

    def _checked(self, attachment: Attachment) -> Attachment:
        """A held-back memory becomes its one-line note; a changed or moved one gets a caveat."""
        ev = self._evidence.get(str(attachment.path))
        if ev is None:
            return attachment
        title = Path(attachment.filename).stem
        text = ev.shown(attachment.content, title, attachment.filename)
        if text == attachment.content:
            return attachment
        return replace(
            attachment, content=text, truncated=attachment.truncated and not ev.held_back
        )

    def cancel(self) -> bool:
        """Drop the recall in flight; True if one was running."""
        running = self._task is not None and not self._task.done()
        if self._task is not None and running:
            self._task.cancel()
        self._task = None
        return running
