"""Transcript JSONL entries (reference §12) to :class:`ChatMessage` lists, and back.

Invariants:

* Reading never raises on content: sidechain (sub-agent) entries, entry types other than
  user/assistant/compact-boundary, malformed messages and unknown block types are skipped and
  reported as issues, never guessed at.
* A resumed session sees exactly what the model saw: at a compact boundary the messages before it
  are replaced by the boundary, then the summary entry that follows it, then the segment the
  compaction kept (named in the boundary's ``compactMetadata.preservedSegment`` by its first and
  last uuid), then whatever came later.
* :func:`append_compaction` only appends (a transcript is never rewritten): the boundary entry,
  the summary entry and any messages a compaction added (re-attached files).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

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
        if kind == "tool_use" and not (isinstance(block.get("id"), str) and block.get("name")):
            issues.append(f"{where}: tool_use without id or name skipped")
            continue
        if kind == "tool_result" and not isinstance(block.get("tool_use_id"), str):
            issues.append(f"{where}: tool_result without tool_use_id skipped")
            continue
        if kind == "text" and not str(block.get("text", "")).strip():
            continue
        blocks.append(dict(block))
    return tuple(blocks)


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
    return ChatMessage(
        "user",
        content,
        uuid=uuid or new_uuid(),
        timestamp=_str(entry.get("timestamp")),
        kind="compact_summary" if summary else "message",
        is_meta=bool(entry.get("isMeta")) or summary,
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def messages_from_entries(entries: Iterable[Entry]) -> tuple[list[ChatMessage], list[str]]:
    """The main-thread conversation as the model last saw it (see the module invariants)."""
    issues: list[str] = []
    current: list[ChatMessage] = []
    pending_kept: list[ChatMessage] | None = None
    for entry in entries:
        if not isinstance(entry, Mapping) or entry.get("isSidechain"):
            continue
        msg = message_from_entry(entry, issues)
        if msg is None:
            continue
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
    return current, issues


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
    preserved = {"headUuid": kept[0].uuid, "tailUuid": kept[-1].uuid} if kept else None
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
