"""A scripted fake provider, shipped in the package so every layer above can be tested for real.

The script is a list of steps consumed in order, one per ``complete`` call:

* a ``Completion`` — returned as is (``Completion.from_text``, ``from_json``, ``from_tool_call``);
* an exception instance or class — raised, to drive error paths (``ProviderUnavailableError`` ...);
* a callable ``(request) -> Completion`` (sync or async) — for replies that depend on the request.

Every request is recorded in ``requests`` before the step runs. When the request carries a
``json_schema`` and the step is plain text, the text is parsed exactly as a real provider would, so
invalid JSON raises ``InvalidOutputError`` through the same path. Running past the end raises
``ScriptExhausted`` — an ``AssertionError``, not a ``MemdirError``, because it means the test's
script is wrong, and code under test must not mistake it for a provider outage it should tolerate.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import TypeAlias

from memdir.llm.base import (
    Completion,
    CompletionRequest,
    LoopResult,
    Message,
    ToolExecutor,
    Usage,
    parse_json_output,
)

Responder: TypeAlias = Callable[[CompletionRequest], Completion | Awaitable[Completion]]
Step: TypeAlias = Completion | BaseException | type[BaseException] | Responder


class ScriptExhausted(AssertionError):
    """The provider was called more times than the script has steps."""


class ScriptedProvider:
    """Replays ``steps`` then ``repeat`` (if given); ``delay`` seconds pass before each reply."""

    def __init__(
        self, steps: Iterable[Step] = (), *, delay: float = 0.0, repeat: Step | None = None
    ) -> None:
        self._steps: list[Step] = list(steps)
        self._repeat = repeat
        self.delay = delay
        self.requests: list[CompletionRequest] = []

    @classmethod
    def always(cls, step: Step, *, delay: float = 0.0) -> ScriptedProvider:
        """A provider that gives the same reply to every call, however many (after ``steps``)."""
        return cls(delay=delay, repeat=step)

    def add(self, *steps: Step) -> ScriptedProvider:
        self._steps.extend(steps)
        return self

    @property
    def remaining(self) -> int:
        return len(self._steps)

    @property
    def calls(self) -> int:
        return len(self.requests)

    @property
    def last_request(self) -> CompletionRequest:
        if not self.requests:
            raise AssertionError("ScriptedProvider has not been called")
        return self.requests[-1]

    def assert_exhausted(self) -> None:
        if self._steps:
            raise AssertionError(f"{len(self._steps)} scripted step(s) were never used")

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests.append(request)
        if self._steps:
            step = self._steps.pop(0)
        elif self._repeat is not None:
            step = self._repeat
        else:
            raise ScriptExhausted(
                f"ScriptedProvider ran out of steps on call {len(self.requests)}; "
                f"last user message: {_last_user_text(request)[:200]!r}"
            )
        if self.delay:
            await asyncio.sleep(self.delay)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, Completion):
            reply = step
        elif isinstance(step, type):
            raise step("scripted failure")
        else:
            produced = step(request)
            reply = await produced if inspect.isawaitable(produced) else produced
        return _as_structured(reply, request)


def _as_structured(reply: Completion, request: CompletionRequest) -> Completion:
    if request.json_schema is None or reply.parsed_json is not None or reply.tool_calls:
        return reply
    return replace(reply, parsed_json=parse_json_output(reply.text))


def _last_user_text(request: CompletionRequest) -> str:
    for message in reversed(request.messages):
        if message.role == "user":
            return message.text
    return ""


class ScriptedLoopProvider(ScriptedProvider):
    """A scripted stand-in for a provider that runs tool loops itself (the host's agent CLI):
    each scripted completion is one turn, its tool calls go to ``execute`` in order, and the
    loop ends at a turn without tool calls or at ``max_turns``; ``cost_usd`` is per turn."""

    def __init__(self, steps: Iterable[Step] = (), *, cost_usd: float = 0.0) -> None:
        super().__init__(steps)
        self.cost_usd = cost_usd

    async def run_tool_loop(
        self, request: CompletionRequest, execute: ToolExecutor, *, max_turns: int
    ) -> LoopResult:
        loop = LoopResult(stop_reason="max_turns")
        messages = list(request.messages)
        while loop.turns < max_turns:
            completion = await self.complete(replace(request, messages=list(messages)))
            loop.turns += 1
            loop.cost_usd += self.cost_usd
            u, c = loop.usage, completion.usage
            loop.usage = Usage(u.input_tokens + c.input_tokens, u.output_tokens + c.output_tokens)
            reply = completion.as_message()
            results = Message("user", [await execute(call) for call in completion.tool_calls])
            loop.messages.append(reply)
            messages.append(reply)
            if not completion.tool_calls:
                loop.stop_reason = "end_turn"
                break
            loop.messages.append(results)
            messages.append(results)
        return loop


__all__ = ["Responder", "ScriptExhausted", "ScriptedLoopProvider", "ScriptedProvider", "Step"]
