"""What every headless-agent-CLI provider shares (``codex exec``, ``gemini -p``): the Provider
protocol and whole tool loops over one child per call; each host gives only its ``_call``.

Invariants:
- ``complete`` with tools returns the first response's tool calls unrun (the caller runs them):
  the child's calls are answered "not run here", and once the model has moved past its first
  response every further call is refused, so a child cannot wander off on its own.
- ``run_tool_loop`` runs every call through the caller's ``execute``, at most
  ``max_turns * CALLS_PER_TURN``; later calls are refused with a request to finish, and a model
  that keeps calling past ``LATE_CALLS_ALLOWED`` refusals is stopped (``max_turns``).
- The totals (calls, estimated cost, tokens) add up over the provider's life, for a log row.
"""

from __future__ import annotations

import abc
import asyncio
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from memdir.llm.base import (
    Completion,
    CompletionRequest,
    LoopResult,
    Message,
    ToolExecutor,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    parse_json_output,
    require_real_providers_allowed,
)
from memdir.llm.ledger import CostLedger

DEFAULT_TIMEOUT = 300.0
CALLS_PER_TURN = 4
LATE_CALLS_ALLOWED = 2
SINGLE_CALL_TURNS = 1  # a plain or captured call: the first response only, never a second
CAPTURED = "(not run here: memdir runs this tool call itself)"
CAPTURE_CLOSED = "memdir takes only the first response's tool calls: reply with text, no tools."
LIMIT_REACHED = (
    "memdir's tool-call limit for this run is reached: call no more tools and reply with a "
    "short final message."
)


class ChildStream(Protocol):
    """What a host's parsed child output must say."""

    messages: list[Message]

    @property
    def usage(self) -> Usage | None: ...

    @property
    def final_text(self) -> str: ...

    @property
    def text_after_tools(self) -> bool: ...

    @property
    def turns(self) -> int: ...

    @property
    def turn_limited(self) -> bool: ...


class CliProviderBase:
    """What every provider over a host's CLI keeps: its settings, the running totals and one
    cost-ledger row per call (``claude -p`` as much as ``codex exec`` and ``gemini -p``)."""

    HOST = ""

    def __init__(
        self,
        model: str,
        *,
        env: Mapping[str, str],
        ledger: CostLedger | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        cwd: Path | None = None,
        purpose: str | None = None,
        session: str | None = None,
        python: str = sys.executable,
    ) -> None:
        require_real_providers_allowed(self.HOST)
        self.model = model
        self.env = dict(env)
        self.ledger = ledger
        self.timeout = timeout
        self.cwd = cwd  # the project; the child itself runs in a private dir
        self.purpose = purpose
        self.session = session
        self.python = python
        self.calls, self.cost_usd, self.input_tokens, self.output_tokens = 0, 0.0, 0, 0

    def totals(self) -> dict[str, Any]:
        """What this provider's calls cost so far (for a caller's own log row)."""
        return {
            "calls": self.calls,
            "cost_usd": round(self.cost_usd, 6),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }

    def _book(
        self, usage: Usage, cost: float, *, turns: int, started: float, estimated: bool,
        error: str | None, cost_estimated: bool = True,
    ) -> float:  # fmt: skip
        """Add one call to the totals and the cost ledger; returns ``cost`` (estimated from list
        prices unless the CLI reported it, as Claude Code's ``total_cost_usd``)."""
        self.calls += 1
        self.cost_usd += cost
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        if self.ledger is not None:
            self.ledger.record(
                {
                    "session": self.session,
                    "purpose": self.purpose,
                    "host": self.HOST,
                    "model": self.model_label,
                    # the ledger is what budgets add up: kept to the nano-dollar, not rounded
                    # to what a person reads (a day of calls would drift from what was spent)
                    "cost_usd": round(cost, 9),
                    "cost_estimated": cost_estimated,
                    "usage_estimated": estimated,
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "cache_read_tokens": usage.cache_read_tokens,
                    "cache_write_tokens": usage.cache_write_tokens,
                    "turns": turns,
                    "ms": round((time.monotonic() - started) * 1000, 1),
                    "error": error,
                }
            )
        return cost

    @property
    def model_label(self) -> str:
        return self.model


class HeadlessCliProvider(CliProviderBase, abc.ABC):
    """``Provider`` over one headless CLI child per call; subclasses give ``HOST`` and
    ``_call`` (spawn the child, fold its output into a stream, record the cost)."""

    @abc.abstractmethod
    async def _call(
        self,
        request: CompletionRequest,
        *,
        max_turns: int,
        execute: ToolExecutor | None = None,
        stop: asyncio.Event | None = None,
        holder: list[Any] | None = None,
    ) -> tuple[ChildStream, float]:
        """One child for ``request``: (its stream, the call's cost); ``holder`` gets the
        stream as soon as it exists (the capture reads it while the child runs)."""

    # -- the Provider protocol ------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> Completion:
        if not request.tools:
            stream, _ = await self._call(request, max_turns=SINGLE_CALL_TURNS)
            usage = stream.usage or Usage()
            if request.json_schema is None:
                return Completion(text=stream.final_text, usage=usage)
            value = parse_json_output(stream.final_text)
            return Completion(text=json.dumps(value), parsed_json=value, usage=usage)

        captured: list[ToolUseBlock] = []
        holder: list[ChildStream] = []

        async def capture(call: ToolUseBlock) -> ToolResultBlock:
            if holder and holder[0].text_after_tools:
                return ToolResultBlock(call.id, CAPTURE_CLOSED, is_error=True)
            captured.append(call)
            return ToolResultBlock(call.id, CAPTURED)

        stream, _ = await self._call(
            request, max_turns=SINGLE_CALL_TURNS, execute=capture, holder=holder
        )
        first = stream.messages[0] if stream.messages else None
        text = first.text if first is not None and captured else stream.final_text
        return Completion(
            text=text,
            tool_calls=captured,
            stop_reason="tool_use" if captured else "end_turn",
            usage=stream.usage or Usage(),
        )

    # -- hosted tool loops ----------------------------------------------------------------

    async def run_tool_loop(
        self, request: CompletionRequest, execute: ToolExecutor, *, max_turns: int
    ) -> LoopResult:
        """One child runs the loop; tools run via ``execute``, at most ``max_turns *
        CALLS_PER_TURN`` of them (and at most ``max_turns`` model turns where the CLI
        bounds them itself)."""
        limit = max(max_turns, 1) * CALLS_PER_TURN
        counts = {"calls": 0, "late": 0}
        stop = asyncio.Event()

        async def bounded(call: ToolUseBlock) -> ToolResultBlock:
            counts["calls"] += 1
            if counts["calls"] <= limit:
                return await execute(call)
            counts["late"] += 1
            if counts["late"] > LATE_CALLS_ALLOWED:
                stop.set()
            return ToolResultBlock(call.id, LIMIT_REACHED, is_error=True)

        stream, cost = await self._call(request, max_turns=max_turns, execute=bounded, stop=stop)
        limited = counts["late"] > 0 or stream.turn_limited
        return LoopResult(
            messages=stream.messages,
            turns=stream.turns,
            usage=stream.usage or Usage(),
            stop_reason="max_turns" if limited else "end_turn",
            cost_usd=cost,
        )


__all__ = [
    "CALLS_PER_TURN",
    "DEFAULT_TIMEOUT",
    "LATE_CALLS_ALLOWED",
    "LIMIT_REACHED",
    "ChildStream",
    "CliProviderBase",
    "HeadlessCliProvider",
]
