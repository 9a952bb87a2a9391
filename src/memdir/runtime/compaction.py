"""The runtime's compaction step: ``memdir.session``'s ladder on the runtime's messages.

The agent loop speaks provider-neutral :class:`~memdir.llm.base.Message`; the ladder works on
uuid-carrying :class:`~memdir.session.ChatMessage`. This module converts both ways and keeps the
transcript right:

* Before a compaction can write its boundary and summary to the transcript, every message it may
  summarise is appended first, so a resumed session reads them in the order the model saw them.
* Messages that come back from the ladder are registered under their uuids, so the turn's end does
  not append them again (the compactor already wrote the boundary, the summary and any re-attached
  files; kept messages were already in the transcript).
* Consecutive messages of one role (a summary followed by a kept user message) are merged into
  one, so every provider accepts the result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from memdir.llm.base import Message
from memdir.runtime.conversation import ConversationLog, chat_messages
from memdir.session.compactor import Compactor, CompactReport
from memdir.session.messages import ChatMessage
from memdir.session.tokens import Window, estimate_tokens


@dataclass
class CompactionOutcome:
    messages: list[Message]
    report: CompactReport

    @property
    def compacted(self) -> bool:
        return self.report.rung in ("session_memory", "full")

    @property
    def notice(self) -> str:
        r = self.report
        if self.compacted:
            how = "session notes" if r.rung == "session_memory" else "a summary"
            return (
                f"Compacted the conversation with {how}: ~{r.tokens_before:,} → "
                f"~{r.tokens_after:,} tokens, {r.kept_messages} recent messages kept"
            )
        if r.rung == "microcompact":
            return f"Cleared {r.cleared_results} old tool results"
        return ""


class CompactionStep:
    def __init__(self, compactor: Compactor, log: ConversationLog, lock: asyncio.Lock) -> None:
        self.compactor = compactor
        self.log = log
        self.lock = lock  # held while the transcript is appended to, by anyone

    async def run(
        self,
        messages: Sequence[Message],
        context_window: int,
        *,
        force: bool = False,
        usage_tokens: int | None = None,
    ) -> CompactionOutcome:
        turns = self.log.assign(messages)
        chat = chat_messages(turns)
        window = Window(context_window, self.compactor.max_output_tokens)
        tokens = usage_tokens if usage_tokens is not None else estimate_tokens(chat)
        if force or window.over(tokens):  # a compaction may write to the transcript: catch up
            async with self.lock:
                await asyncio.to_thread(self.log.record, list(messages))
                result = await self.compactor.maybe_compact(
                    chat, context_window, force=force, usage_tokens=usage_tokens
                )
        else:  # at most a microcompact, which writes nothing
            result = await self.compactor.maybe_compact(
                chat, context_window, force=force, usage_tokens=usage_tokens
            )
        if result.report.rung in ("none", "breaker_open", "failed"):
            return CompactionOutcome(list(messages), result.report)
        return CompactionOutcome(self._adopt(result.messages), result.report)

    def _adopt(self, chat: Sequence[ChatMessage]) -> list[Message]:
        out: list[Message] = []
        uuids: list[str] = []
        for item in chat:
            if item.is_boundary:
                continue
            message = item.message
            if out and out[-1].role == message.role:
                out[-1] = Message(message.role, [*out[-1].blocks, *message.blocks])
                uuids[-1] = item.uuid
            else:
                out.append(message)
                uuids.append(item.uuid)
        for message, uuid in zip(out, uuids, strict=True):
            self.log.adopt(message, uuid)
        return out


def failed_report(window: int) -> CompactReport:
    """The report of a compaction that could not run at all (the step itself failed)."""
    return CompactReport("failed", window, 0, 0, 0)
