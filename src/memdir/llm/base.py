"""The provider interface: one async ``complete`` call, provider-neutral request and reply types.

Everything above this layer (selector, extraction, agent runner) speaks only these dataclasses,
so any provider — Anthropic, an OpenAI-compatible endpoint, in-process llama.cpp, or the scripted
fake — can stand in for any other. Invariants:

* ``Completion.parsed_json`` is set exactly when the request carried ``json_schema`` and the reply
  parsed as JSON; a reply that does not parse raises ``InvalidOutputError`` (never a half result).
* Providers make one attempt per call; retries belong to ``memdir.llm.retry.RetryingProvider``.
* ``ALLOW_REAL_PROVIDERS`` guards construction of providers that reach a network. The test suite
  sets it to False so no test can talk to a real model by accident (in-process llama.cpp is local
  and stays allowed).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from memdir.errors import InvalidOutputError, ProviderConfigError

ALLOW_REAL_PROVIDERS = True
"""Set to False (tests/conftest.py does) to make constructing a network provider fail."""

Role: TypeAlias = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """A tool call the model made; ``id`` ties it to its ``ToolResultBlock``."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_use_id: str
    content: str
    is_error: bool = False


Block: TypeAlias = TextBlock | ToolUseBlock | ToolResultBlock


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str | Sequence[Block]

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The content as blocks (a plain string becomes one ``TextBlock``)."""
        if isinstance(self.content, str):
            return (TextBlock(self.content),) if self.content else ()
        return tuple(self.content)

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """One model call.

    ``cache_prefix`` asks the provider to mark the stable prefix (tools + system) for prompt
    caching, so a fork that shares the parent's prefix pays for it once. ``timeout`` is seconds
    per attempt; None means the provider's default.
    """

    system: str | Sequence[TextBlock]
    messages: Sequence[Message]
    max_tokens: int = 1024
    tools: Sequence[ToolSpec] = ()
    json_schema: dict[str, Any] | None = None
    temperature: float | None = None
    stop: Sequence[str] = ()
    cache_prefix: bool = False
    timeout: float | None = None

    @property
    def system_blocks(self) -> tuple[TextBlock, ...]:
        if isinstance(self.system, str):
            return (TextBlock(self.system),) if self.system else ()
        return tuple(self.system)

    @property
    def system_text(self) -> str:
        return "\n\n".join(b.text for b in self.system_blocks)


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Completion:
    """A model reply. ``stop_reason`` uses Anthropic's vocabulary (end_turn, tool_use, ...)."""

    text: str = ""
    tool_calls: list[ToolUseBlock] = field(default_factory=list)
    stop_reason: str = "end_turn"
    usage: Usage = field(default_factory=Usage)
    parsed_json: Any = None

    @classmethod
    def from_text(cls, text: str, *, usage: Usage | None = None) -> Completion:
        return cls(text=text, usage=usage or Usage())

    @classmethod
    def from_json(cls, value: Any) -> Completion:
        """A structured-output reply: ``text`` is the JSON, ``parsed_json`` the value."""
        return cls(text=json.dumps(value), parsed_json=value)

    @classmethod
    def from_tool_call(
        cls, name: str, input: dict[str, Any], *, id: str | None = None, text: str = ""
    ) -> Completion:
        return cls.from_tool_calls([(name, input)], text=text, ids=[id] if id else None)

    @classmethod
    def from_tool_calls(
        cls,
        calls: Sequence[tuple[str, dict[str, Any]]],
        *,
        text: str = "",
        ids: Sequence[str] | None = None,
    ) -> Completion:
        blocks = [
            ToolUseBlock(id=(ids[i] if ids else new_tool_use_id()), name=name, input=dict(args))
            for i, (name, args) in enumerate(calls)
        ]
        return cls(text=text, tool_calls=blocks, stop_reason="tool_use")

    def as_message(self) -> Message:
        """The assistant message to append to a transcript before sending tool results back."""
        blocks: list[Block] = [TextBlock(self.text)] if self.text else []
        blocks.extend(self.tool_calls)
        return Message("assistant", blocks)


@runtime_checkable
class Provider(Protocol):
    async def complete(self, request: CompletionRequest) -> Completion: ...


ToolExecutor: TypeAlias = Callable[[ToolUseBlock], Awaitable[ToolResultBlock]]


@dataclass
class LoopResult:
    """What a hosted tool loop did: its messages after the prompt, turns, usage, why it stopped."""

    messages: list[Message] = field(default_factory=list)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = "end_turn"
    cost_usd: float = 0.0


@runtime_checkable
class ToolLoopProvider(Protocol):
    """A provider that runs a whole bounded tool loop itself (an agent CLI), calling back into
    ``execute`` for every tool call so the caller's sandbox decides and records each one."""

    async def run_tool_loop(
        self, request: CompletionRequest, execute: ToolExecutor, *, max_turns: int
    ) -> LoopResult: ...


def new_tool_use_id() -> str:
    return f"toolu_{uuid.uuid4().hex[:24]}"


def estimate_tokens(text: str) -> int:
    """Rough token count (4 characters a token), as the reference uses for budgeting."""
    return round(len(text) / 4)


def estimate_message_tokens(messages: Sequence[Message]) -> int:
    """Rough token count of a transcript: text, tool inputs (as JSON) and tool results."""
    total = 0
    for message in messages:
        for block in message.blocks:
            if isinstance(block, TextBlock):
                total += estimate_tokens(block.text)
            elif isinstance(block, ToolUseBlock):
                total += estimate_tokens(block.name + json.dumps(block.input))
            else:
                total += estimate_tokens(block.content)
    return total


def parse_json_output(text: str) -> Any:
    """Parse a structured-output reply, tolerating a Markdown code fence around it."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise InvalidOutputError(
            f"model output is not valid JSON ({exc.msg} at char {exc.pos})"
        ) from None


def require_real_providers_allowed(kind: str) -> None:
    """Refuse to build a network provider while ``ALLOW_REAL_PROVIDERS`` is False."""
    if not ALLOW_REAL_PROVIDERS:
        raise ProviderConfigError(
            f"real {kind} provider requested while memdir.llm.base.ALLOW_REAL_PROVIDERS is False "
            "(tests must use memdir.llm.scripted.ScriptedProvider)"
        )


__all__ = [
    "ALLOW_REAL_PROVIDERS",
    "Block",
    "Completion",
    "CompletionRequest",
    "LoopResult",
    "Message",
    "Provider",
    "Role",
    "TextBlock",
    "ToolExecutor",
    "ToolLoopProvider",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "estimate_message_tokens",
    "estimate_tokens",
    "new_tool_use_id",
    "parse_json_output",
    "require_real_providers_allowed",
]
