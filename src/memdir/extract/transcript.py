"""Turn saved transcript entries (reference JSONL shape) into conversation messages.

Invariant: every user/assistant entry on the main thread becomes one :class:`Turn` with its
uuid, and its content blocks map one-to-one onto the provider-neutral blocks; blocks the
providers do not carry (thinking, images) are dropped, never invented. Sidechain (sub-agent)
entries are skipped: extraction reviews the main conversation only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from memdir.extract.base import Turn
from memdir.llm.base import Block, Message, Role, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.transcripts import Entry, conversation


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return json.dumps(content, ensure_ascii=False)


def _blocks(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    blocks: list[Block] = []
    for raw in content if isinstance(content, list) else []:
        if not isinstance(raw, Mapping):
            continue
        kind = raw.get("type")
        if kind == "text" and isinstance(raw.get("text"), str):
            blocks.append(TextBlock(raw["text"]))
        elif kind == "tool_use":
            tool_input = raw.get("input")
            blocks.append(
                ToolUseBlock(
                    str(raw.get("id", "")),
                    str(raw.get("name", "")),
                    dict(tool_input) if isinstance(tool_input, Mapping) else {},
                )
            )
        elif kind == "tool_result":
            blocks.append(
                ToolResultBlock(
                    str(raw.get("tool_use_id", "")),
                    _result_text(raw.get("content", "")),
                    bool(raw.get("is_error", False)),
                )
            )
    return blocks


def turns_from_entries(entries: Iterable[Entry], *, include_meta: bool = True) -> list[Turn]:
    """The main-thread conversation as :class:`Turn` objects, in file order.

    ``include_meta=False`` drops ``isMeta`` user entries (text the harness injected, which the
    model sees but the user did not say) — what the rule extractor wants.
    """
    turns: list[Turn] = []
    for entry in conversation(entries):
        if entry.get("isSidechain") or (not include_meta and entry.get("isMeta")):
            continue
        message = entry.get("message")
        uuid = entry.get("uuid")
        if not isinstance(message, Mapping) or not isinstance(uuid, str):
            continue
        role: Role = "assistant" if entry.get("type") == "assistant" else "user"
        blocks = _blocks(message.get("content"))
        if blocks:
            turns.append(Turn(uuid, Message(role, blocks)))
    return turns
