"""Turn saved transcript entries (reference JSONL shape) into conversation messages.

Invariant: every user/assistant entry on the main thread becomes one :class:`Turn` with its
uuid, and its content blocks map one-to-one onto the provider-neutral blocks; blocks the
providers do not carry (thinking, images) are dropped, never invented. Sidechain (sub-agent)
entries are skipped: extraction reviews the main conversation only. The host's compaction
summary is never a turn (it is the host's words, not the user's: "the user said…" memories
taken from it would be invented), and a prompt the user typed while the agent worked
(``queue-operation``) is one, in file order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from memdir.extract.base import Turn
from memdir.llm.base import Block, Message, Role, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.session.convert import queued_prompt
from memdir.session.harness import is_harness_entry
from memdir.transcripts import Entry


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
    main = [e for e in entries if isinstance(e, Mapping) and not e.get("isSidechain")]
    typed = {_text(e) for e in main if e.get("type") == "user"}
    for entry in main:
        queued = queued_prompt(entry)
        if queued is not None and queued.text not in typed:
            turns.append(Turn(queued.uuid, Message("user", [TextBlock(queued.text)])))
            continue
        if entry.get("type") not in ("user", "assistant") or entry.get("isCompactSummary"):
            continue
        if (
            not include_meta
            and entry.get("type") == "user"
            and is_harness_entry(entry, _text(entry))
        ):
            continue  # host-generated: task notifications, interrupts, hook feedback
        message = entry.get("message")
        uuid = entry.get("uuid")
        if not isinstance(message, Mapping) or not isinstance(uuid, str):
            continue
        role: Role = "assistant" if entry.get("type") == "assistant" else "user"
        blocks = _blocks(message.get("content"))
        if blocks:
            turns.append(Turn(uuid, Message(role, blocks)))
    return turns


def _text(entry: Mapping[str, Any]) -> str:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return "\n".join(b.text for b in _blocks(content) if isinstance(b, TextBlock)).strip()
