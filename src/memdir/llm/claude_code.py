"""The ``claude-code`` provider: memdir's model calls through the user's own Claude Code CLI.

Why the CLI and not the Python Agent SDK: the SDK drives the very same CLI as a subprocess and
adds a dependency (and a bundled binary) to memdir; spawning ``claude -p --output-format
stream-json`` ourselves gives the same features with nothing to install, one process boundary
we control (timeout, kill, environment) and a plain-text protocol we can record and replay in
tests. The one thing the SDK adds — tools hosted in-process — we get from a tiny stdio relay
(:mod:`memdir.llm.relay_mcp`) that forwards each call back to this process.

Two ways to call it:

* :meth:`ClaudeCodeProvider.complete` — one model turn, the ``Provider`` protocol. Plain and
  structured (``json_schema`` → ``--json-schema``) requests map directly. A request with tools
  runs the child with ``--max-turns 1`` and the relay in *capture* mode: the tool calls the model
  makes are returned to the caller (who runs them, as ``memdir chat`` does) and never executed
  in the child. Earlier turns are sent as a labelled transcript, since ``-p`` takes one prompt.
* :meth:`ClaudeCodeProvider.run_tool_loop` — a whole bounded agent run in one child: the CLI
  runs the turns, every tool call comes back through the relay to the caller's ``execute``
  (memdir's sandboxed toolset). :class:`~memdir.agent.runner.AgentRunner` uses this when the
  provider offers it, so extraction, notes and dream pay one CLI start per run, not per turn.

Failures never hang a hook: a missing executable, a logged-out CLI (also caught early from the
``api_retry`` stream), a failed call or the timeout (the child's process group is killed) raise
:class:`~memdir.errors.HostModelUnavailableError`; a spent daily budget raises
:class:`~memdir.errors.BudgetExhaustedError` before anything starts. Every finished call is
recorded in the cost ledger with its usage and ``total_cost_usd``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.errors import HostModelUnavailableError, ProviderError
from memdir.llm import claude_code_io as io
from memdir.llm.base import (
    Completion,
    CompletionRequest,
    LoopResult,
    Message,
    ToolExecutor,
    ToolResultBlock,
    ToolUseBlock,
)
from memdir.llm.cli_provider import CliProviderBase
from memdir.llm.tool_relay import ToolRelay

DEFAULT_TIMEOUT = 300.0
LINE_LIMIT = 64 * 1024 * 1024  # one stream-json line holds a whole message (a long tool result)
CAPTURED = "(not run here: memdir runs this tool call itself)"
STDERR_TAIL = 400


@dataclass
class _Run:
    """One child's stream, read as it arrives."""

    messages: list[Message] = field(default_factory=list)
    last_id: str | None = None  # the CLI streams one event per content block of a message
    result: dict[str, Any] | None = None
    failure: ProviderError | None = None
    stderr: str = ""

    def feed(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return  # the CLI's stdout is JSON lines; anything else is noise
        if not isinstance(event, dict):
            return
        if event.get("type") == "result":
            self.result = event
        elif (message := io.message_from_event(event)) is not None:
            body = event.get("message")
            mid = body.get("id") if isinstance(body, dict) and message.role == "assistant" else None
            if mid is not None and mid == self.last_id and self.messages:
                last = self.messages.pop()
                message = Message("assistant", [*last.blocks, *message.blocks])
            self.last_id = mid
            self.messages.append(message)
        elif (failure := io.retry_failure(event)) is not None:
            self.failure = failure


def find_cli(env: Mapping[str, str]) -> str | None:
    """The CLI to run: ``MEMDIR_CLAUDE_CLI`` when set, else ``claude`` on the env's PATH."""
    explicit = env.get("MEMDIR_CLAUDE_CLI", "").strip()
    if explicit:
        return explicit if Path(explicit).is_file() else None
    return shutil.which("claude", path=env.get("PATH") or os.defpath)


class ClaudeCodeProvider(CliProviderBase):
    """``Provider`` over ``claude -p``; also runs whole tool loops (``run_tool_loop``)."""

    HOST = "claude-code"

    # -- the Provider protocol ------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> Completion:
        if not request.tools:
            run, _ = await self._call(request, max_turns=2 if request.json_schema else 1)
            assert run.result is not None
            return io.completion_from(run.messages, run.result, request)

        async def capture(call: ToolUseBlock) -> ToolResultBlock:
            return ToolResultBlock(call.id, CAPTURED)

        run, cost = await self._call(request, max_turns=1, execute=capture)
        reply = next((m for m in run.messages if m.role == "assistant"), Message("assistant", ""))
        calls = [b for b in reply.blocks if isinstance(b, ToolUseBlock)]
        return Completion(
            text=reply.text,
            tool_calls=calls,
            stop_reason="tool_use" if calls else "end_turn",
            usage=cost.usage,
        )

    # -- hosted tool loops ----------------------------------------------------------------

    async def run_tool_loop(
        self,
        request: CompletionRequest,
        execute: ToolExecutor,
        *,
        max_turns: int,
    ) -> LoopResult:
        """Run up to ``max_turns`` model turns in one child; tools run via ``execute``."""
        run, cost = await self._call(request, max_turns=max_turns, execute=execute)
        assert run.result is not None
        subtype = str(run.result.get("subtype", ""))
        turns = sum(1 for m in run.messages if m.role == "assistant")
        return LoopResult(
            messages=run.messages,
            turns=turns,
            usage=cost.usage,
            stop_reason="max_turns" if subtype == "error_max_turns" else "end_turn",
            cost_usd=cost.cost_usd,
        )

    # -- one child ------------------------------------------------------------------------

    async def _call(
        self,
        request: CompletionRequest,
        *,
        max_turns: int,
        execute: ToolExecutor | None = None,
    ) -> tuple[_Run, io.CallCost]:
        left = self.ledger.check() if self.ledger is not None else None
        cli = find_cli(self.env)
        if cli is None:
            raise HostModelUnavailableError(
                "the Claude Code CLI (`claude`) is not installed or not on PATH"
            )
        started = time.monotonic()
        run = _Run()
        try:
            if execute is not None and request.tools:
                async with ToolRelay(request.tools, execute) as relay:
                    config = io.mcp_config(self.python, str(relay.socket))
                    call = io.build_call(
                        request,
                        model=self.model,
                        max_turns=max_turns,
                        budget_usd=left,
                        relay=config,
                        tools=request.tools,
                    )
                    await self._spawn(cli, call, run, request.timeout)
            else:
                call = io.build_call(
                    request, model=self.model, max_turns=max_turns, budget_usd=left
                )
                await self._spawn(cli, call, run, request.timeout)
        except ProviderError as exc:
            self._record(run, started, error=str(exc))
            raise
        error = run.failure or (
            io.result_error(run.result)
            if run.result is not None
            else HostModelUnavailableError(f"the host CLI ended without a result{run.stderr}")
        )
        self._record(run, started, error=str(error) if error else None)
        if error is not None:
            raise error
        assert run.result is not None
        return run, io.cost_from(run.result)

    async def _spawn(self, cli: str, call: io.ChildCall, run: _Run, timeout: float | None) -> None:
        try:
            proc = await asyncio.create_subprocess_exec(
                cli,
                *call.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=io.child_env(self.env),
                cwd=str(self.cwd) if self.cwd else None,
                limit=LINE_LIMIT,
                start_new_session=True,  # so a timeout can kill the CLI and its MCP child
            )
        except OSError as exc:
            raise HostModelUnavailableError(f"cannot start the Claude Code CLI: {exc}") from None
        limit = timeout or self.timeout
        try:
            async with asyncio.timeout(limit):
                await _drive(proc, call.prompt, run)
        except TimeoutError:
            raise HostModelUnavailableError(
                f"the Claude Code CLI did not answer within {limit:g}s"
            ) from None
        except (OSError, ValueError) as exc:  # a broken pipe, an unreadable stream
            raise HostModelUnavailableError(f"reading the Claude Code CLI failed: {exc}") from None
        finally:
            _kill_group(proc)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), 5.0)

    def _record(self, run: _Run, started: float, *, error: str | None) -> None:
        cost = io.cost_from(run.result or {})
        self._book(
            cost.usage,
            cost.cost_usd,
            turns=cost.turns,
            started=started,
            estimated=False,
            error=error,
            cost_estimated=False,  # the CLI reports its own total_cost_usd
        )


async def _drive(proc: asyncio.subprocess.Process, prompt: str, run: _Run) -> None:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    with contextlib.suppress(ConnectionError):
        proc.stdin.write(prompt.encode("utf-8"))
        await proc.stdin.drain()
        proc.stdin.close()
    err_task = asyncio.ensure_future(proc.stderr.read())
    try:
        while line := await proc.stdout.readline():
            run.feed(line)
            if run.failure is not None:
                return  # e.g. auth refused: no retry will fix it, stop waiting now
        await proc.wait()
        err = (await err_task).decode("utf-8", "replace").strip()
        if err and run.result is None:
            run.stderr = f": {' '.join(err.split())[-STDERR_TAIL:]}"
    finally:
        err_task.cancel()


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


HostCliProvider = ClaudeCodeProvider  # the name memdir.adapters.hooks.hostmodel looks up

__all__ = ["DEFAULT_TIMEOUT", "ClaudeCodeProvider", "HostCliProvider", "find_cli"]
