"""Conversation messages in the Anthropic Messages shape, and the API's shape rules.

A :class:`ChatMessage` is one transcript entry: a role, Anthropic content blocks as JSON dicts,
the entry's uuid, and (assistant only) the provider's message id. One API reply may be split
over several ChatMessages that share a message id (the reference logs each streamed block as its
own entry), and tool results may sit between those pieces.

Invariants:

* :func:`to_api` never invents or drops content: it removes compact boundaries (bookkeeping the
  model never sees) and merges consecutive same-role messages, nothing else. Making bad input
  valid is :func:`repair`'s job, and it reports every change it makes.
* :func:`api_shape_problems` is the validator the tests hold every rung to: an empty list means the
  Messages API would accept the conversation's shape.
"""

from __future__ import annotations

import json
import re
import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from memdir.llm.base import Block as LLMBlock
from memdir.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock

ContentBlock: TypeAlias = dict[str, Any]
Kind: TypeAlias = Literal["message", "compact_boundary", "compact_summary"]
ChatRole: TypeAlias = Literal["user", "assistant", "system"]


def new_uuid() -> str:
    return str(uuidlib.uuid4())


@dataclass(frozen=True)
class ChatMessage:
    role: ChatRole
    content: tuple[ContentBlock, ...]
    uuid: str = field(default_factory=new_uuid)
    message_id: str | None = None
    timestamp: str | None = None
    kind: Kind = "message"
    is_meta: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)

    # -- constructors ---------------------------------------------------------------------

    @classmethod
    def user(cls, content: str | Iterable[Mapping[str, Any]], **kwargs: Any) -> ChatMessage:
        return cls("user", _blocks(content), **kwargs)

    @classmethod
    def assistant(
        cls,
        content: str | Iterable[Mapping[str, Any]],
        *,
        message_id: str | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        mid = message_id or f"msg_{uuidlib.uuid4().hex[:24]}"
        return cls("assistant", _blocks(content), message_id=mid, **kwargs)

    @classmethod
    def boundary(cls, *, pre_tokens: int, trigger: str = "auto", **metadata: Any) -> ChatMessage:
        meta = {"trigger": trigger, "pre_tokens": pre_tokens, **metadata}
        return cls("system", (), kind="compact_boundary", metadata=meta)

    # -- views ------------------------------------------------------------------------------

    @property
    def is_boundary(self) -> bool:
        return self.kind == "compact_boundary"

    @property
    def tool_use_ids(self) -> list[str]:
        return [str(b.get("id")) for b in self.content if b.get("type") == "tool_use"]

    @property
    def tool_result_ids(self) -> list[str]:
        return [str(b.get("tool_use_id")) for b in self.content if b.get("type") == "tool_result"]

    @property
    def tool_uses(self) -> list[ContentBlock]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    @property
    def has_text(self) -> bool:
        """True when the message holds a non-empty text block (what "text-block messages" count)."""
        return any(b.get("type") == "text" and str(b.get("text", "")).strip() for b in self.content)

    @property
    def text(self) -> str:
        return "\n".join(
            str(b.get("text", "")) for b in self.content if b.get("type") == "text"
        ).strip()

    @property
    def message(self) -> Message:
        """The provider-neutral message (thinking, images and documents are not carried)."""
        blocks: list[LLMBlock] = []
        for b in self.content:
            kind = b.get("type")
            if kind == "text" and b.get("text"):
                blocks.append(TextBlock(str(b["text"])))
            elif kind == "tool_use":
                raw = b.get("input")
                blocks.append(
                    ToolUseBlock(
                        str(b.get("id", "")),
                        str(b.get("name", "")),
                        dict(raw) if isinstance(raw, Mapping) else {},
                    )
                )
            elif kind == "tool_result":
                blocks.append(
                    ToolResultBlock(
                        str(b.get("tool_use_id", "")),
                        result_text(b.get("content")),
                        bool(b.get("is_error", False)),
                    )
                )
        return Message("assistant" if self.role == "assistant" else "user", blocks)

    def with_content(self, content: Iterable[ContentBlock]) -> ChatMessage:
        return replace(self, content=tuple(content))


def _blocks(content: str | Iterable[Mapping[str, Any]]) -> tuple[ContentBlock, ...]:
    if isinstance(content, str):
        return ({"type": "text", "text": content},)
    return tuple(dict(b) for b in content)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def readable_result(content: Any) -> str:
    """A tool result's text as a person reads it: terminal colour codes removed (test runners
    colour their summaries, which hides "267 passed" from every pattern that reads output)."""
    return _ANSI.sub("", result_text(content))


def result_text(content: Any) -> str:
    """The text of a tool_result's content (a string, or text/image blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, Mapping):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") in ("image", "document"):
                    parts.append(f"[{block.get('type')}]")
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def to_llm_messages(messages: Sequence[ChatMessage]) -> list[Message]:
    """Provider-neutral messages for a side query, merged so roles alternate."""
    merged: list[Message] = []
    for m in to_api(messages):
        chat = ChatMessage(m["role"], tuple(m["content"]))
        msg = chat.message
        if msg.blocks:
            merged.append(msg)
    out: list[Message] = []
    for msg in merged:
        if out and out[-1].role == msg.role:
            out[-1] = Message(msg.role, [*out[-1].blocks, *msg.blocks])
        else:
            out.append(msg)
    return out


# -- the API view -----------------------------------------------------------------------------


def to_api(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """``[{"role", "content"}]`` for the Messages API: boundaries dropped, same roles merged."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.is_boundary or m.role == "system" or not m.content:
            continue
        blocks = [dict(b) for b in m.content]
        if out and out[-1]["role"] == m.role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": m.role, "content": blocks})
    for api in out:  # a merged user message must still lead with its tool results
        if api["role"] == "user":
            results = [b for b in api["content"] if b.get("type") == "tool_result"]
            if results:
                others = [b for b in api["content"] if b.get("type") != "tool_result"]
                api["content"] = results + others
    return out


def api_shape_problems(api: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every way ``api`` breaks the Messages API's shape rules (empty list: valid)."""
    problems: list[str] = []
    if not api:
        return ["no messages"]
    if api[0].get("role") != "user":
        problems.append("the first message is not from the user")
    pending: set[str] = set()
    for i, m in enumerate(api):
        role, content = m.get("role"), m.get("content")
        if role not in ("user", "assistant"):
            problems.append(f"message {i}: role {role!r}")
            continue
        if i and api[i - 1].get("role") == role:
            problems.append(f"message {i}: two {role} messages in a row")
        if not isinstance(content, list) or not content:
            problems.append(f"message {i}: empty content")
            continue
        for b in content:
            problems += [f"message {i}: {p}" for p in _block_problems(b)]
        if role == "assistant":
            if pending:
                problems.append(f"message {i}: tool_use {sorted(pending)} got no tool_result")
            if any(b.get("type") == "tool_result" for b in content):
                problems.append(f"message {i}: tool_result in an assistant message")
            pending = {str(b.get("id")) for b in content if b.get("type") == "tool_use"}
            continue
        kinds = [b.get("type") for b in content]
        results = [str(b.get("tool_use_id")) for b in content if b.get("type") == "tool_result"]
        if results and kinds[: len(results)] != ["tool_result"] * len(results):
            problems.append(f"message {i}: tool_result blocks are not first")
        for rid in results:
            if rid not in pending:
                problems.append(f"message {i}: tool_result {rid} has no tool_use just before it")
        if pending - set(results):
            problems.append(f"message {i}: tool_use {sorted(pending - set(results))} unanswered")
        pending = set()
    if pending:
        problems.append(f"the last message has unanswered tool_use {sorted(pending)}")
    return problems


def _block_problems(b: Mapping[str, Any]) -> list[str]:
    kind = b.get("type")
    if kind == "text":
        text = b.get("text")
        if not isinstance(text, str):
            return ["text block without a string"]
        return [] if text.strip() else ["empty text block"]
    if kind == "tool_use":
        ok = isinstance(b.get("id"), str) and isinstance(b.get("name"), str)
        ok = ok and isinstance(b.get("input"), Mapping)
        return [] if ok else ["tool_use needs a string id and name and an object input"]
    if kind == "tool_result":
        content = b.get("content", "")
        ok = isinstance(b.get("tool_use_id"), str) and isinstance(content, str | list)
        if isinstance(content, list):
            ok = ok and all(
                isinstance(x, Mapping) and isinstance(x.get("type"), str) for x in content
            )
        return [] if ok else ["tool_result needs a string tool_use_id and text or block content"]
    if kind == "thinking":
        return [] if isinstance(b.get("thinking"), str) else ["thinking block without text"]
    return []


def _as_text(block: ContentBlock) -> ContentBlock:
    """A tool_result that cannot stand where it is, as text (its content is not lost)."""
    return {"type": "text", "text": f"[tool result]\n{result_text(block.get('content'))}"}


def repair(messages: Sequence[ChatMessage]) -> tuple[list[ChatMessage], list[str]]:
    """A conversation the API accepts, made from ``messages``, and a note for every change.

    Orphan tool_results (their tool_use is not in the assistant message right before) become text
    so their content is not lost; a tool_use with no result gets an error result saying so;
    messages left empty are dropped; a conversation opening with the assistant gets a short
    user message in front.
    """
    issues: list[str] = []
    out: list[ChatMessage] = []
    pending: list[str] = []  # tool_use ids of the last assistant turn still waiting for results
    answered: set[str] = set()

    def close_pending() -> None:
        missing = [t for t in pending if t not in answered]
        if missing:
            issues.append(f"tool_use {missing} had no result; an error result was added")
            blocks = [_missing_result(t) for t in missing]
            if out and out[-1].role == "user" and not out[-1].is_boundary:
                prev = out[-1]
                out[-1] = prev.with_content([*blocks, *prev.content])
            else:
                out.append(ChatMessage("user", tuple(blocks), is_meta=True))
        pending.clear()
        answered.clear()

    for m in messages:
        if m.is_boundary:
            out.append(m)
            continue
        if m.role == "assistant":
            if pending and not (out and out[-1].role == "assistant"):
                close_pending()
            content = [_as_text(b) if b.get("type") == "tool_result" else b for b in m.content]
            if content != list(m.content):  # a malformed entry: the API refuses it there
                issues.append(f"tool_result in assistant message {m.uuid} kept as text")
            content = [b for b in content if _nonempty(b)]
            if not content:
                issues.append(f"empty assistant message {m.uuid} dropped")
                continue
            if out and out[-1].role == "assistant":
                pending.extend(m.tool_use_ids)  # a split reply: its pieces share one turn
            else:
                pending[:] = m.tool_use_ids
                answered.clear()
            out.append(m.with_content(content))
            continue
        kept: list[ContentBlock] = []
        for b in m.content:
            if b.get("type") == "tool_result":
                tid = str(b.get("tool_use_id"))
                if tid in pending and tid not in answered:
                    answered.add(tid)
                    kept.append(b)
                else:
                    issues.append(f"tool_result {tid} without its tool_use kept as text")
                    kept.append(_as_text(b))
            elif _nonempty(b):
                kept.append(b)
        kept = [b for b in kept if _nonempty(b)]
        if not kept:
            issues.append(f"empty user message {m.uuid} dropped")
            continue
        if pending and all(t in answered for t in pending):
            pending.clear()
            answered.clear()
        elif pending and not any(b.get("type") == "tool_result" for b in kept):
            close_pending()
        out.append(m.with_content(kept))
    close_pending()
    first = next((m for m in out if not m.is_boundary), None)
    if first is not None and first.role == "assistant":
        issues.append("the conversation opened with the assistant; a user message was added")
        idx = out.index(first)
        out.insert(idx, ChatMessage.user("[earlier conversation not available]", is_meta=True))
    return out, issues


def _missing_result(tool_use_id: str) -> ContentBlock:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": "[no result was recorded for this tool call]",
        "is_error": True,
    }


def _nonempty(block: Mapping[str, Any]) -> bool:
    if block.get("type") == "text":
        return bool(str(block.get("text", "")).strip())
    return True
