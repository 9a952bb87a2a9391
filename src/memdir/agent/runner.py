"""The bounded agent runner: a tool loop over any :class:`~memdir.llm.base.Provider`.

Invariants:

* At most ``max_turns`` model calls and ``time_limit`` seconds per run; the tool calls of one
  assistant turn run concurrently (``asyncio.gather``) and their results go back in call order.
* Nothing the model does raises out of the loop: tool failures and policy refusals are tool
  results. A provider failure ends the run with ``stop_reason="error"``; the time limit ends it
  with ``"time_limit"``. Cancelling the task cancels the in-flight call and tools (their
  subprocesses are killed) and re-raises, with :attr:`AgentRunner.current` holding what was done.
* A provider that runs tool loops itself (``ToolLoopProvider``: the host's agent CLI) gets the
  whole run in one call; every tool call still comes back here through ``_call`` and is
  recorded the same way, so the sandbox and the records do not depend on who runs the turns.
* "Forked" runs: the parent's messages are sent unchanged as a prefix with ``cache_prefix=True``,
  and the run's own instruction is appended, so a caching provider pays only for the tail.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.agent.toolset import ToolResult, Toolset
from memdir.errors import ProviderError
from memdir.llm.base import (
    Block,
    CompletionRequest,
    Message,
    Provider,
    TextBlock,
    ToolLoopProvider,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    turn: int
    name: str
    input: Mapping[str, Any]
    is_error: bool
    denied: bool
    written_path: Path | None
    result: str


@dataclass
class RunResult:
    """What one run did: its own messages (after the prefix) and a summary."""

    messages: list[Message] = field(default_factory=list)
    turns: int = 0
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    stop_reason: str = "running"
    error: str | None = None
    elapsed: float = 0.0
    usage: Usage = field(default_factory=Usage)
    failure: ProviderError | None = None  # what ended a run with stop_reason "error"
    cost_usd: float | None = None  # when the provider reports dollars (the host's CLI does)

    @property
    def written_paths(self) -> list[Path]:
        """Paths successfully changed by Edit/Write, unique, in first-written order."""
        seen: dict[Path, None] = {}
        for call in self.tool_calls:
            if call.written_path is not None and not call.is_error:
                seen.setdefault(call.written_path, None)
        return list(seen)

    @property
    def denials(self) -> list[ToolCallRecord]:
        return [call for call in self.tool_calls if call.denied]

    @property
    def final_text(self) -> str:
        for message in reversed(self.messages):
            if message.role == "assistant" and message.text:
                return message.text
        return ""

    def cost(self) -> dict[str, Any]:
        """Tokens and (when known) dollars, for logs."""
        u = self.usage
        out: dict[str, Any] = {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens}
        if self.cost_usd is not None:
            out["cost_usd"] = round(self.cost_usd, 6)
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "tool_calls": len(self.tool_calls),
            "written_paths": [str(p) for p in self.written_paths],
            "denials": [f"{c.name}: {c.result}" for c in self.denials],
            "stop_reason": self.stop_reason,
            "error": self.error,
            "elapsed_s": round(self.elapsed, 3),
        }


def _add_usage(a: Usage, b: Usage) -> Usage:
    return Usage(
        a.input_tokens + b.input_tokens,
        a.output_tokens + b.output_tokens,
        a.cache_read_tokens + b.cache_read_tokens,
        a.cache_write_tokens + b.cache_write_tokens,
    )


def _record(turn: int, call: ToolUseBlock, outcome: ToolResult) -> ToolCallRecord:
    return ToolCallRecord(
        turn=turn,
        name=call.name,
        input=call.input,
        is_error=outcome.is_error,
        denied=outcome.denied,
        written_path=outcome.written_path,
        result=outcome.content,
    )


def fork_messages(prefix: Sequence[Message], instruction: str) -> list[Message]:
    """The parent's messages followed by ``instruction`` as a user turn.

    When the prefix already ends with a user message the instruction joins it as another text
    block (roles must alternate); only that last message then misses the shared cache.
    """
    messages = list(prefix)
    if messages and messages[-1].role == "user":
        last = messages.pop()
        messages.append(Message("user", [*last.blocks, TextBlock(instruction)]))
    else:
        messages.append(Message("user", instruction))
    return messages


class AgentRunner:
    """Runs one bounded tool loop per :meth:`run` call."""

    def __init__(
        self,
        provider: Provider,
        toolset: Toolset,
        *,
        system: str,
        max_turns: int = 5,
        time_limit: float = 120.0,
        max_tokens: int = 4096,
    ) -> None:
        self.provider = provider
        self.toolset = toolset
        self.system = system
        self.max_turns = max_turns
        self.time_limit = time_limit
        self.max_tokens = max_tokens
        self.current: RunResult | None = None

    async def run(self, instruction: str, *, prefix: Sequence[Message] = ()) -> RunResult:
        result = RunResult()
        self.current = result
        started = time.monotonic()
        messages = fork_messages(prefix, instruction)
        result.messages.append(messages[-1])
        try:
            async with asyncio.timeout(self.time_limit):
                await self._loop(messages, result)
        except TimeoutError:
            result.stop_reason = "time_limit"
            result.error = f"run exceeded its {self.time_limit:g}s time limit"
        except ProviderError as exc:
            result.stop_reason = "error"
            result.error = str(exc)
            result.failure = exc
        except asyncio.CancelledError:
            result.stop_reason = "cancelled"
            raise
        finally:
            result.elapsed = time.monotonic() - started
        return result

    async def _loop(self, messages: list[Message], result: RunResult) -> None:
        specs = self.toolset.specs()
        if isinstance(self.provider, ToolLoopProvider):
            await self._hosted_loop(self.provider, messages, result)
            return
        while result.turns < self.max_turns:
            request = CompletionRequest(
                system=self.system,
                messages=list(messages),
                max_tokens=self.max_tokens,
                tools=specs,
                cache_prefix=True,
            )
            completion = await self.provider.complete(request)
            result.turns += 1
            result.usage = _add_usage(result.usage, completion.usage)
            reply = completion.as_message()
            messages.append(reply)
            result.messages.append(reply)
            if not completion.tool_calls:
                result.stop_reason = "end_turn"
                return
            outcomes = await asyncio.gather(*(self._call(c) for c in completion.tool_calls))
            blocks: list[Block] = []
            for call, outcome in zip(completion.tool_calls, outcomes, strict=True):
                blocks.append(ToolResultBlock(call.id, outcome.content, outcome.is_error))
                result.tool_calls.append(_record(result.turns, call, outcome))
            tool_message = Message("user", blocks)
            messages.append(tool_message)
            result.messages.append(tool_message)
        result.stop_reason = "max_turns"

    async def _hosted_loop(
        self, provider: ToolLoopProvider, messages: list[Message], result: RunResult
    ) -> None:
        async def execute(call: ToolUseBlock) -> ToolResultBlock:
            outcome = await self._call(call)
            result.tool_calls.append(_record(result.turns + 1, call, outcome))
            return ToolResultBlock(call.id, outcome.content, outcome.is_error)

        request = CompletionRequest(
            system=self.system,
            messages=list(messages),
            max_tokens=self.max_tokens,
            tools=self.toolset.specs(),
            cache_prefix=True,
        )
        loop = await provider.run_tool_loop(request, execute, max_turns=self.max_turns)
        result.turns = loop.turns
        result.usage = _add_usage(result.usage, loop.usage)
        result.messages.extend(loop.messages)
        result.stop_reason = loop.stop_reason
        result.cost_usd = (result.cost_usd or 0.0) + loop.cost_usd

    async def _call(self, call: ToolUseBlock) -> ToolResult:
        try:
            return await self.toolset.call(call.name, call.input)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not end the run; the model sees it
            return ToolResult(f"{call.name} failed unexpectedly: {exc!r}", is_error=True)
