"""Tool calls spoken as JSON in plain text, for models that give memdir text only.

Two kinds of provider need it: a small local model (llama.cpp, where a grammar makes the JSON
exact) and an agent CLI run headless as a plain completer (``pi -p``, ``copilot -p``, ``qwen``),
which offers memdir's tools no other way. A reply is either ``{"tool": <name>, "input": {...}}``
(one call), a list of such objects (several), or ``{"answer": ...}`` (done); earlier calls and
their results are written back into the transcript the same way, so the model sees its own
format.

Invariants: a reply that names no tool is a final answer, never an error (a frontier model may
answer in prose when it has nothing to call); only a named tool the request offers becomes a
call, so a model cannot invent one; a structured request's answer is parsed as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memdir.errors import InvalidOutputError
from memdir.llm.base import (
    Completion,
    CompletionRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
    new_tool_use_id,
    parse_json_output,
)


def tool_call_schema(tools: tuple[ToolSpec, ...], answer: dict[str, Any] | None) -> dict[str, Any]:
    """The schema a reply must match when tools are offered: one tool call, or a final answer."""
    options: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"tool": {"const": t.name}, "input": t.input_schema},
            "required": ["tool", "input"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    options.append(
        {
            "type": "object",
            "properties": {"answer": answer if answer is not None else {"type": "string"}},
            "required": ["answer"],
            "additionalProperties": False,
        }
    )
    return {"anyOf": options}


def tools_prompt(tools: Sequence[ToolSpec], *, several: bool = False) -> str:
    """The instructions that teach the reply format, with every tool's schema."""
    calls = (
        '{"tool": "<name>", "input": {...}} to call one tool (or a JSON list of such objects '
        "to call several at once)"
        if several
        else '{"tool": "<name>", "input": {...}} to call one tool'
    )
    lines = [
        f"You can call tools. Reply with JSON only: either {calls}, or "
        '{"answer": ...} when done.',
        "Tools:",
    ]
    lines += [
        f"- {t.name}: {t.description} Input schema: {json.dumps(t.input_schema)}" for t in tools
    ]
    return "\n".join(lines)


def schema_prompt(schema: dict[str, Any]) -> str:
    return (
        "Reply with only a JSON value (no prose, no code fence) matching this JSON Schema:\n"
        f"{json.dumps(schema)}"
    )


def render_message(message: Message) -> str:
    """A message as text; tool traffic in the same JSON the model emits."""
    if isinstance(message.content, str):
        return message.content
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            parts.append(json.dumps({"tool": block.name, "input": block.input}))
        elif isinstance(block, ToolResultBlock):
            status = "error" if block.is_error else "result"
            parts.append(f"Tool {status} ({block.tool_use_id}):\n{block.content}")
    return "\n\n".join(parts)


def chat_messages(request: CompletionRequest) -> list[dict[str, str]]:
    """Plain role/content messages; tool traffic is rendered in the same JSON the model emits."""
    system = request.system_text
    if request.tools:
        system = f"{system}\n\n{tools_prompt(tuple(request.tools))}".strip()
    out = [{"role": "system", "content": system}] if system else []
    for message in request.messages:
        out.append({"role": message.role, "content": render_message(message)})
    return out


def transcript(messages: Sequence[Message]) -> str:
    """The conversation as one prompt for a CLI that takes one user turn: a lone user message
    as is, a longer one as a labelled transcript that ends where the model's reply begins."""
    if len(messages) == 1 and messages[0].role == "user":
        return render_message(messages[0])
    parts = [f"[{m.role}]\n{render_message(m)}" for m in messages]
    return "\n\n".join(parts) + "\n\n[assistant]\n"


def first_json(text: str) -> Any:
    """The JSON value a reply holds: the whole reply (a code fence allowed), else the first
    object or list inside it (a model that wrote a sentence first). ``InvalidOutputError``
    when there is none."""
    try:
        return parse_json_output(text)
    except InvalidOutputError:
        pass
    decoder = json.JSONDecoder()
    for at, char in enumerate(text):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(text, at)
            except json.JSONDecodeError:
                continue
            return value
    raise InvalidOutputError("the model's reply holds no JSON value")


def _calls(value: Any, offered: set[str]) -> list[ToolUseBlock]:
    items = value if isinstance(value, list) else [value]
    calls: list[ToolUseBlock] = []
    for item in items:
        if not isinstance(item, dict) or item.get("tool") not in offered:
            continue
        raw = item.get("input")
        calls.append(
            ToolUseBlock(
                id=new_tool_use_id(),
                name=str(item["tool"]),
                input=dict(raw) if isinstance(raw, dict) else {},
            )
        )
    return calls


def completion_from_text(
    text: str, request: CompletionRequest, *, usage: Usage, stop: str = "end_turn"
) -> Completion:
    """The ``Completion`` a text reply means for ``request`` (tools offered or not)."""
    if not request.tools:
        if request.json_schema is None:
            return Completion(text=text, stop_reason=stop, usage=usage)
        value = first_json(text)
        return Completion(text=json.dumps(value), stop_reason=stop, usage=usage, parsed_json=value)
    try:
        envelope = first_json(text)
    except InvalidOutputError:
        envelope = None
    calls = _calls(envelope, {t.name for t in request.tools}) if envelope is not None else []
    if calls:
        return Completion(tool_calls=calls, stop_reason="tool_use", usage=usage)
    answer = envelope.get("answer") if isinstance(envelope, dict) else None
    if request.json_schema is not None:
        if answer is None:
            answer = envelope
        return Completion(
            text=json.dumps(answer), stop_reason=stop, usage=usage, parsed_json=answer
        )
    if answer is None:
        return Completion(text=text.strip(), stop_reason=stop, usage=usage)
    return Completion(
        text=answer if isinstance(answer, str) else json.dumps(answer),
        stop_reason=stop,
        usage=usage,
    )


__all__ = [
    "chat_messages",
    "completion_from_text",
    "first_json",
    "render_message",
    "schema_prompt",
    "tool_call_schema",
    "tools_prompt",
    "transcript",
]
