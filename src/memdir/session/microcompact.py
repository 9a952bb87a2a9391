"""Microcompact: clear old tool results, keep the calls (reference §6b).

Invariants: only results of compactable tools (file reads and edits, shell, search, web fetch)
are cleared, oldest first, and the newest ``keep_recent`` (at least 1) stay whole; a cleared result
keeps its ``tool_use_id`` and error flag and its content becomes :data:`CLEARED`, so every
tool_use/tool_result pair and the conversation's shape are untouched. The message list is never
shortened and no uuid changes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from memdir.session.messages import ChatMessage, ContentBlock

CLEARED = "[Old tool result content cleared]"
KEEP_RECENT = 5
TIME_GAP = dt.timedelta(minutes=60)
COMPACTABLE_TOOLS = frozenset(
    {
        "Read",
        "Bash",
        "Grep",
        "Glob",
        "WebSearch",
        "WebFetch",
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
        "read_file",
        "bash",
        "shell",
        "str_replace_based_edit_tool",
        "web_search",
        "web_fetch",
    }
)


@dataclass(frozen=True)
class Microcompaction:
    messages: list[ChatMessage]
    cleared: int
    tokens_saved: int


def microcompact(
    messages: Sequence[ChatMessage], *, keep_recent: int = KEEP_RECENT
) -> Microcompaction:
    """Clear every compactable tool result but the newest ``keep_recent``."""
    from memdir.session.tokens import estimate_tokens

    names = {
        str(b.get("id")): str(b.get("name"))
        for m in messages
        if m.role == "assistant"
        for b in m.tool_uses
    }
    positions = [
        (i, j)
        for i, m in enumerate(messages)
        if m.role == "user"
        for j, b in enumerate(m.content)
        if b.get("type") == "tool_result"
        and names.get(str(b.get("tool_use_id"))) in COMPACTABLE_TOOLS
        and b.get("content") != CLEARED
    ]
    already_kept = max(1, keep_recent)
    to_clear = positions[: max(0, len(positions) - already_kept)]
    if not to_clear:
        return Microcompaction(list(messages), 0, 0)
    by_message: dict[int, set[int]] = {}
    for i, j in to_clear:
        by_message.setdefault(i, set()).add(j)
    out = list(messages)
    for i, blocks in by_message.items():
        out[i] = out[i].with_content(
            _cleared(b) if j in blocks else b for j, b in enumerate(out[i].content)
        )
    saved = estimate_tokens(messages) - estimate_tokens(out)
    return Microcompaction(out, len(to_clear), saved)


def _cleared(block: ContentBlock) -> ContentBlock:
    new = {k: v for k, v in block.items() if k in ("type", "tool_use_id", "is_error")}
    new["content"] = CLEARED
    return new


def _parse_time(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def time_triggered(
    messages: Sequence[ChatMessage], now: dt.datetime, *, gap: dt.timedelta = TIME_GAP
) -> bool:
    """True when the last assistant message is older than ``gap``: the provider's prompt cache
    has expired, so clearing old results costs no cache hit."""
    for m in reversed(messages):
        if m.role == "assistant":
            stamp = _parse_time(m.timestamp)
            return stamp is not None and now - stamp > gap
    return False
