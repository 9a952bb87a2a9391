"""Transcript JSONL entries (reference §12) to :class:`ChatMessage` lists, and back.

Invariants:

* Reading never raises on content: sidechain (sub-agent) entries, entry types other than
  user/assistant/compact-boundary/queued prompt, malformed messages and unknown block types are
  skipped and reported as issues, never guessed at.
* Faithful to the host: the pieces of one assistant reply (entries sharing the provider message
  id, which Claude Code writes one per parallel ``tool_use`` with the results in between) are one
  message again, followed by one message holding all their results — so no call is "unanswered"
  and no result becomes loose text. A prompt typed while the agent worked (a ``queue-operation``
  enqueue that never became a user entry) is a user request, placed after the tool results it
  arrived during. Host-generated user text (:mod:`memdir.session.harness`) is marked meta:
  context, never a request.
* A resumed session sees exactly what the model saw: at a compact boundary the messages before it
  are replaced by the boundary, then the summary entry that follows it, then the segment the
  compaction kept (named in the boundary's ``compactMetadata.preservedSegment`` by its first and
  last uuid), then whatever came later.
* :func:`append_compaction` only appends (a transcript is never rewritten): the boundary entry,
  the summary entry and any messages a compaction added (re-attached files).
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from memdir.session.harness import is_harness_entry, is_harness_text
from memdir.session.messages import ChatMessage, ContentBlock, new_uuid
from memdir.transcripts import Entry, Transcript, read_transcript

KNOWN_BLOCKS = frozenset(
    {"text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"}
)
SUMMARY_PREFIX = "This session is being continued from a previous conversation"


def _content(raw: Any, issues: list[str], where: str) -> tuple[ContentBlock, ...]:
    if isinstance(raw, str):
        return ({"type": "text", "text": raw},) if raw.strip() else ()
    if not isinstance(raw, list):
        issues.append(f"{where}: content is neither text nor a list of blocks; skipped")
        return ()
    blocks: list[ContentBlock] = []
    for block in raw:
        if not isinstance(block, Mapping):
            issues.append(f"{where}: a content block is not an object; skipped")
            continue
        kind = block.get("type")
        if kind not in KNOWN_BLOCKS:
            issues.append(f"{where}: unknown block type {kind!r} skipped")
            continue
        fixed = _checked(dict(block))
        if fixed is None:
            issues.append(f"{where}: malformed {kind} block skipped")
            continue
        if kind == "text" and not fixed["text"].strip():
            continue
        blocks.append(fixed)
    return tuple(blocks)


def _checked(block: dict[str, Any]) -> dict[str, Any] | None:
    """The block if its fields have the types the API needs (tool_result content that is neither
    text nor a list becomes its JSON text), else None."""
    kind = block.get("type")
    if kind == "text":
        return block if isinstance(block.get("text"), str) else None
    if kind == "thinking":
        return block if isinstance(block.get("thinking"), str) else None
    if kind == "tool_use":
        ok = isinstance(block.get("id"), str) and block["id"] and isinstance(block.get("name"), str)
        return block if ok and block["name"] and isinstance(block.get("input"), Mapping) else None
    if kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            return None
        content = block.get("content", "")
        if isinstance(content, list):
            content = [
                b for b in content if isinstance(b, Mapping) and _checked(dict(b)) is not None
            ]
        elif not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, default=str)
        return {**block, "content": content}
    return block


def message_from_entry(entry: Mapping[str, Any], issues: list[str]) -> ChatMessage | None:
    """One entry as a ChatMessage, or None (with a reason in ``issues``) when it is not one."""
    kind = entry.get("type")
    uuid = entry.get("uuid") if isinstance(entry.get("uuid"), str) else None
    where = f"entry {uuid or '?'}"
    if kind == "system" and entry.get("subtype") == "compact_boundary":
        meta = entry.get("compactMetadata")
        meta = meta if isinstance(meta, Mapping) else {}
        pre = meta.get("preTokens")
        preserved = meta.get("preservedSegment")
        return ChatMessage(
            "system",
            (),
            uuid=uuid or new_uuid(),
            timestamp=_str(entry.get("timestamp")),
            kind="compact_boundary",
            metadata={
                "trigger": str(meta.get("trigger", "auto")),
                "pre_tokens": pre if isinstance(pre, int) else 0,
                "preserved": dict(preserved) if isinstance(preserved, Mapping) else None,
            },
        )
    if kind not in ("user", "assistant"):
        return None
    message = entry.get("message")
    if not isinstance(message, Mapping):
        issues.append(f"{where}: {kind} entry without a message object; skipped")
        return None
    content = _content(message.get("content"), issues, where)
    if not content:
        return None
    if uuid is None:
        issues.append(f"{where}: entry without uuid; one was assigned")
    if kind == "assistant":
        mid = message.get("id")
        return ChatMessage(
            "assistant",
            content,
            uuid=uuid or new_uuid(),
            message_id=mid if isinstance(mid, str) and mid else None,
            timestamp=_str(entry.get("timestamp")),
        )
    summary = bool(entry.get("isCompactSummary"))
    text = "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    return ChatMessage(
        "user",
        content,
        uuid=uuid or new_uuid(),
        timestamp=_str(entry.get("timestamp")),
        kind="compact_summary" if summary else "message",
        is_meta=summary or is_harness_entry(entry, text.strip()),
    )


def queued_prompt(entry: Mapping[str, Any]) -> ChatMessage | None:
    """A ``queue-operation`` enqueue the user typed, as a user message (None for anything else).

    Its uuid is derived from the entry, so reading the same transcript twice gives the same ids
    (compaction records kept messages by uuid)."""
    if entry.get("type") != "queue-operation" or entry.get("operation") != "enqueue":
        return None
    text = entry.get("content")
    if not isinstance(text, str) or not text.strip() or is_harness_text(text):
        return None
    stamp = _str(entry.get("timestamp"))
    return ChatMessage(
        "user",
        ({"type": "text", "text": text},),
        uuid=str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"queued:{stamp}:{text}")),
        timestamp=stamp,
        metadata={"queued": True},
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def messages_from_entries(entries: Iterable[Entry]) -> tuple[list[ChatMessage], list[str]]:
    """The main-thread conversation as the model last saw it (see the module invariants)."""
    issues: list[str] = []
    current: list[ChatMessage] = []
    pending_kept: list[ChatMessage] | None = None
    main = [e for e in entries if isinstance(e, Mapping) and not e.get("isSidechain")]
    typed = {_user_text(e) for e in main if e.get("type") == "user"}
    held: list[ChatMessage] = []  # queued prompts waiting for the tool results they arrived in
    for entry in main:
        queued = queued_prompt(entry)
        if queued is not None:
            if queued.text not in typed:  # else it was delivered as a user entry of its own
                held.append(queued)
            continue
        msg = message_from_entry(entry, issues)
        if msg is None:
            continue
        if held and (msg.is_boundary or _settled(current, msg)):
            current.extend(held)
            held = []
        if msg.is_boundary:
            if pending_kept:
                current.extend(pending_kept)
            pending_kept = _preserved(current, msg.metadata.get("preserved"))
            current = [msg]
            continue
        if pending_kept is not None and msg.kind != "compact_summary":
            current.extend(pending_kept)
            pending_kept = None
        current.append(msg)
        if msg.kind == "compact_summary" and pending_kept is not None:
            current.extend(pending_kept)
            pending_kept = None
    if pending_kept:
        current.extend(pending_kept)
    current.extend(held)
    return merge_split_replies(current), issues


def _user_text(entry: Mapping[str, Any]) -> str:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str)).strip()
    return ""


def _settled(current: Sequence[ChatMessage], msg: ChatMessage) -> bool:
    """True when a queued prompt can go in before ``msg`` without splitting a tool call from its
    result: ``msg`` is neither a tool result nor another piece of the running reply."""
    if msg.role == "user":
        return not msg.tool_result_ids
    last = next((m for m in reversed(current) if m.role == "assistant"), None)
    return last is None or msg.message_id is None or last.message_id != msg.message_id


def _only_results(message: ChatMessage) -> bool:
    return (
        message.role == "user"
        and bool(message.content)
        and all(b.get("type") == "tool_result" for b in message.content)
    )


def merge_split_replies(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """One assistant message per provider reply, followed by one message with all its results.

    A piece joins the earlier message with its message id only when nothing but tool results
    came in between (anything else means the reply really was interrupted). The merged message
    keeps the first piece's uuid and records the last piece's as ``metadata["last_uuid"]``, so a
    compaction that keeps it can name the whole span."""
    out: list[ChatMessage] = []
    owner: dict[str, int] = {}  # message id -> index in ``out`` of its merged message
    for m in messages:
        j = owner.get(m.message_id or "") if m.role == "assistant" else None
        if j is not None and all(_only_results(b) for b in out[j + 1 :]):
            out[j] = _joined(out[j], m.content, m.uuid)
            continue
        if owner and _only_results(m) and out and _only_results(out[-1]):
            out[-1] = _joined(out[-1], m.content, m.uuid)  # results of one reply: one message
            continue
        if m.role == "assistant" and m.message_id:
            owner[m.message_id] = len(out)
        elif not _only_results(m):
            owner.clear()
        out.append(m)
    return out


def _joined(first: ChatMessage, more: Iterable[ContentBlock], last_uuid: str) -> ChatMessage:
    return replace(
        first,
        content=(*first.content, *more),
        metadata={**first.metadata, "last_uuid": last_uuid},
    )


def _preserved(messages: Sequence[ChatMessage], segment: Any) -> list[ChatMessage]:
    if not isinstance(segment, Mapping):
        return []
    head, tail = segment.get("headUuid"), segment.get("tailUuid")
    index = {m.uuid: i for i, m in enumerate(messages)}
    if head not in index or tail not in index or index[head] > index[tail]:
        return []
    return [m for m in messages[index[head] : index[tail] + 1] if not m.is_boundary]


def load_transcript(path: Path) -> tuple[list[ChatMessage], list[str]]:
    """A transcript file as messages, with every skipped line or entry reported."""
    read = read_transcript(path)
    messages, issues = messages_from_entries(read.entries)
    notes = [f"line {i.line}: {i.reason}" for i in read.issues]
    if read.truncated:
        notes.append("the transcript is larger than the read cap; only its newest part was read")
    return messages, notes + issues


def append_compaction(
    transcript: Transcript,
    boundary: ChatMessage,
    added: Sequence[ChatMessage],
    *,
    kept: Sequence[ChatMessage] = (),
) -> None:
    """Append a compaction: the boundary (naming the kept segment), then the summary and any
    other messages the compaction added (all already in ``added``, in order)."""
    tail = kept[-1].metadata.get("last_uuid", kept[-1].uuid) if kept else None
    preserved = {"headUuid": kept[0].uuid, "tailUuid": str(tail)} if kept else None
    transcript.compact_boundary(
        pre_tokens=int(boundary.metadata.get("pre_tokens", 0)),
        trigger=str(boundary.metadata.get("trigger", "auto")),
        preserved=preserved,
        uuid=boundary.uuid,
    )
    for msg in added:
        transcript.user(
            list(msg.content),
            is_meta=msg.is_meta,
            is_compact_summary=msg.kind == "compact_summary",
            uuid=msg.uuid,
        )
