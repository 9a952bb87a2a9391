"""The conversation as the runtime sees it: stable uuids, the transcript, recall attachments.

Invariants:

* Every message object gets one uuid the first time the runtime sees it, and is appended to the
  transcript exactly once (reference JSONL layout, so ``memdir extract``, ``memdir compact`` and
  dream read it). The extraction cursor points at those uuids.
* Recall attachments are injected as ``<system-reminder>`` text blocks joined to the user's
  message (roles keep alternating; the rule extractor ignores tagged blocks, so a surfaced
  memory is never re-extracted as something the user said).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from memdir.extract.base import Turn
from memdir.llm.base import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.recall.surface import Attachment
from memdir.session.messages import ChatMessage
from memdir.transcripts import Transcript, new_uuid

REMINDER_OPEN, REMINDER_CLOSE = "<system-reminder>", "</system-reminder>"


def attachment_block(attachments: Sequence[Attachment]) -> TextBlock:
    """One reminder block carrying every attachment of a turn."""
    body = "\n\n".join(a.text.rstrip("\n") for a in attachments)
    return TextBlock(f"{REMINDER_OPEN}\n{body}\n{REMINDER_CLOSE}")


def with_attachments(
    messages: Sequence[Message], attachments: Sequence[Attachment]
) -> list[Message]:
    """``messages`` with the attachments joined to the last user message (unchanged if none)."""
    out = list(messages)
    if not attachments:
        return out
    block = attachment_block(attachments)
    if out and out[-1].role == "user":
        last = out.pop()
        out.append(Message("user", [*last.blocks, block]))
    else:
        out.append(Message("user", [block]))
    return out


def _block_json(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    entry: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": block.content,
    }
    if block.is_error:
        entry["is_error"] = True
    return entry


def message_content(message: Message) -> str | list[Mapping[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    return [_block_json(b) for b in message.blocks]


class ConversationLog:
    """Uuids for messages and the append-only transcript behind them.

    :meth:`assign` (no I/O, on the event loop) and :meth:`record` (file appends, on a worker
    thread) may interleave; a lock around the bookkeeping keeps one uuid per message either way.
    """

    def __init__(self, transcript: Transcript | None, *, model: str) -> None:
        self.transcript = transcript
        self.model = model
        self._lock = threading.Lock()
        self._seen: dict[int, tuple[Message, str]] = {}  # keeps the message alive: ids stay unique
        self._pending: dict[int, tuple[Message, str]] = {}  # uuid given, not yet appended

    def uuid_of(self, message: Message) -> str | None:
        known = self._seen.get(id(message))
        return known[1] if known is not None else None

    def _uuid(self, message: Message) -> tuple[str, bool]:
        """(uuid, already in the transcript). Caller holds the lock."""
        known = self._seen.get(id(message)) or self._pending.get(id(message))
        if known is not None:
            return known[1], id(message) in self._seen
        uuid = new_uuid()
        self._pending[id(message)] = (message, uuid)
        return uuid, False

    def assign(self, messages: Sequence[Message]) -> list[Turn]:
        """Uuids for every message (new ones get one now, and are appended later by record)."""
        with self._lock:
            return [Turn(self._uuid(m)[0], m) for m in messages]

    def adopt(self, message: Message, uuid: str) -> None:
        """Register ``message`` as already in the transcript under ``uuid``."""
        with self._lock:
            self._pending.pop(id(message), None)
            self._seen[id(message)] = (message, uuid)

    def record(self, messages: Sequence[Message]) -> list[Turn]:
        """Append the messages not in the transcript yet; return the whole conversation."""
        turns: list[Turn] = []
        for message in messages:
            with self._lock:
                uuid, written = self._uuid(message)
            if not written:
                self._append(message, uuid)
                with self._lock:
                    self._seen[id(message)] = (message, uuid)
                    self._pending.pop(id(message), None)
            turns.append(Turn(uuid, message))
        return turns

    def _append(self, message: Message, uuid: str) -> str:
        if self.transcript is None:
            return uuid
        content = message_content(message)
        if message.role == "assistant":
            entry = self.transcript.assistant(
                content, model=self.model, stop_reason=_stop(message), uuid=uuid
            )
        elif any(isinstance(b, ToolResultBlock) for b in message.blocks):
            entry = self.transcript.user(
                content, tool_use_result=_tool_result_text(message), uuid=uuid
            )
        else:
            entry = self.transcript.user(content, uuid=uuid)
        return str(entry["uuid"])


def _stop(message: Message) -> str:
    return "tool_use" if any(isinstance(b, ToolUseBlock) for b in message.blocks) else "end_turn"


def _tool_result_text(message: Message) -> str:
    return "\n".join(b.content for b in message.blocks if isinstance(b, ToolResultBlock))


def chat_messages(turns: Sequence[Turn]) -> list[ChatMessage]:
    """The conversation in the session package's shape, keeping each message's uuid."""
    out: list[ChatMessage] = []
    for turn in turns:
        blocks = [_block_json(b) for b in turn.message.blocks]
        if turn.message.role == "assistant":
            out.append(ChatMessage.assistant(blocks, uuid=turn.uuid))
        else:
            out.append(ChatMessage.user(blocks, uuid=turn.uuid))
    return out
