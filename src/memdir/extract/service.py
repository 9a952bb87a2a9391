"""The extraction service: runs after each completed turn, in the background, one at a time.

Invariants (reference §5):

* :meth:`ExtractionService.notify_turn_end` never blocks and never raises: it only schedules.
* Single flight: while a run is in progress, a notification only stashes its messages
  (overwriting any older stash); when the run ends, exactly one trailing run starts with the
  newest stash. Trailing runs bypass the throttle.
* The cursor (uuid of the last message covered) advances only when a run succeeds, so a failed
  or timed-out run is retried over the same messages next time.
* If the main agent itself wrote a memory (an Edit/Write tool call on a path in the memory dir)
  since the cursor, the run is skipped and the cursor moves to the newest message: the two
  writers must not both record the same thing. Concurrent file writes are serialised by the
  store's lock.
* :meth:`drain` waits (bounded) for the in-flight run and its trailing run, for shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from memdir.errors import ConfigError
from memdir.extract.base import ConversationMessage, ExtractionResult, Extractor
from memdir.llm.base import ToolUseBlock
from memdir.pathsafe import is_within

log = logging.getLogger(__name__)

WRITE_TOOL_NAMES = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})


def messages_since(
    messages: Sequence[ConversationMessage], cursor: str | None
) -> Sequence[ConversationMessage]:
    """Messages after the one with uuid ``cursor`` (all of them if it is absent or unknown)."""
    if cursor is not None:
        for index, entry in enumerate(messages):
            if entry.uuid == cursor:
                return messages[index + 1 :]
    return messages


def wrote_memory(messages: Sequence[ConversationMessage], memory_dir: Path) -> bool:
    """True if an assistant message calls Edit/Write on a path inside ``memory_dir``."""
    roots = {Path(os.path.abspath(memory_dir)), Path(os.path.realpath(memory_dir))}
    for entry in messages:
        if entry.message.role != "assistant":
            continue
        for block in entry.message.blocks:
            if isinstance(block, ToolUseBlock) and block.name in WRITE_TOOL_NAMES:
                raw = block.input.get("file_path") or block.input.get("notebook_path")
                if isinstance(raw, str) and raw:
                    path = Path(os.path.abspath(raw))
                    if any(is_within(root, path) for root in roots):
                        return True
    return False


class ExtractionService:
    """Background extraction for one conversation."""

    def __init__(
        self,
        memory_dir: Path,
        extractor: Extractor,
        *,
        every_n_turns: int = 1,
        on_result: Callable[[ExtractionResult], None] | None = None,
    ) -> None:
        if every_n_turns < 1:
            raise ConfigError("every_n_turns must be >= 1")
        self.memory_dir = memory_dir
        self.extractor = extractor
        self.every_n_turns = every_n_turns
        self.on_result = on_result
        self.cursor: str | None = None
        self.results: list[ExtractionResult] = []
        self.runs = 0  # extractor invocations, for observability and tests
        self._turns_since_run = 0
        self._task: asyncio.Task[None] | None = None
        self._stash: list[ConversationMessage] | None = None

    @property
    def in_progress(self) -> bool:
        return self._task is not None and not self._task.done()

    def notify_turn_end(self, messages: Sequence[ConversationMessage]) -> None:
        """Call when the main agent finished a turn; schedules extraction and returns."""
        snapshot = list(messages)
        if self.in_progress:
            self._stash = snapshot  # newest context wins; one trailing run picks it up
            return
        self._task = asyncio.get_running_loop().create_task(
            self._run_then_trailing(snapshot), name="memdir-extraction"
        )

    async def drain(self, timeout: float = 60.0) -> bool:
        """Wait for the in-flight run (and its trailing run); False if ``timeout`` passed first."""
        task = self._task
        if task is None or task.done():
            return True
        done, _ = await asyncio.wait({task}, timeout=timeout)
        return bool(done)

    async def cancel(self) -> None:
        """Stop any run now (its partial writes stay; the cursor does not move)."""
        self._stash = None
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run_then_trailing(self, messages: list[ConversationMessage]) -> None:
        trailing = False
        current: list[ConversationMessage] | None = messages
        while current is not None:
            await self._run_once(current, trailing=trailing)
            current, self._stash = self._stash, None
            trailing = True

    async def _run_once(self, messages: list[ConversationMessage], *, trailing: bool) -> None:
        new = messages_since(messages, self.cursor)
        if not new:
            return
        last_uuid = messages[-1].uuid
        if wrote_memory(new, self.memory_dir):
            self.cursor = last_uuid
            self._record(ExtractionResult(self.memory_dir, skipped="main agent wrote memory"))
            return
        if not trailing:
            self._turns_since_run += 1
            if self._turns_since_run < self.every_n_turns:
                return
        self._turns_since_run = 0
        self.runs += 1
        try:
            result = await self.extractor.extract(
                [m.message for m in messages], new_messages=len(new)
            )
        except Exception as exc:  # a background failure must be reported, never crash the loop
            log.warning("memory extraction failed: %s", exc)
            result = ExtractionResult(self.memory_dir, ok=False, error=str(exc))
        if result.ok:
            self.cursor = last_uuid
        self._record(result)

    def _record(self, result: ExtractionResult) -> None:
        self.results.append(result)
        if self.on_result is not None:
            try:
                self.on_result(result)
            except Exception:  # a UI callback must not break extraction
                log.exception("extraction on_result callback failed")
