"""The ``codex`` provider: memdir's background model calls through the user's own Codex CLI.

The twin of :mod:`memdir.llm.claude_code` for Codex CLI (pinned and verified: 0.171). Each call
is one ``codex exec --json`` child with the user's own login and config, stripped to memdir's
prompt and memdir's tools (the flags and why: :mod:`memdir.llm.codex_cli_io`). Before the child
starts, ``codex mcp list --json`` names the user's MCP servers so each can be switched off for
the child.

* :meth:`HostCliProvider.complete` — the ``Provider`` protocol. Plain requests map directly;
  structured ones use ``--output-schema`` when the schema is one OpenAI's strict mode accepts,
  else the schema goes into the instructions, and the reply is parsed either way. A request with
  tools runs the relay in *capture* mode: the tool calls of the model's first response are
  returned to the caller and never run (later calls are refused), as with Claude Code.
* :meth:`HostCliProvider.run_tool_loop` — a whole agent run in one child, every tool call coming
  back through the relay (:mod:`memdir.llm.relay_mcp`) to the caller's ``execute``. ``codex
  exec`` has no turn limit, so memdir bounds the run itself: at most ``max_turns *
  CALLS_PER_TURN`` tool calls run; later ones are answered with an error asking the model to
  finish, and a model that keeps calling is stopped (``stop_reason="max_turns"``).

Failures never hang a hook: a missing executable, a logged-out CLI (a refused key ends the
child at the first error event), a failed call or the timeout (the child's process group is
killed) raise :class:`~memdir.errors.HostModelUnavailableError`; a spent daily budget raises
:class:`~memdir.errors.BudgetExhaustedError` before anything starts. Every call that started a
child is recorded in the cost ledger with its tokens and an *estimated* cost
(:data:`~memdir.llm.codex_cli_io.PRICES`); a child killed before it reported usage is recorded
with its prompt's estimated input tokens, so the budget still counts it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import memdir
from memdir.errors import HostModelUnavailableError, ProviderError
from memdir.llm import cli_child
from memdir.llm import codex_cli_io as io
from memdir.llm.base import (
    CompletionRequest,
    ToolExecutor,
    Usage,
    estimate_tokens,
)
from memdir.llm.claude_code_io import render_prompt
from memdir.llm.cli_provider import DEFAULT_TIMEOUT, HeadlessCliProvider
from memdir.llm.tool_relay import ToolRelay

LIST_TIMEOUT = 20.0
LINE_LIMIT = 64 * 1024 * 1024  # one JSON line can hold a whole tool result
# Codex's own start-up warnings are noise here (PATH aliases, bubblewrap, model metadata).
STDERR_NOISE = ("WARNING:", "warning:")
PYTHONPATH = str(Path(memdir.__file__).resolve().parent.parent)  # where the relay imports from


def find_cli(env: Mapping[str, str]) -> str | None:
    """The CLI to run: ``MEMDIR_CODEX_CLI`` when set, else ``codex`` on the env's PATH."""
    explicit = env.get("MEMDIR_CODEX_CLI", "").strip()
    if explicit:
        return explicit if Path(explicit).is_file() else None
    return shutil.which("codex", path=env.get("PATH") or os.defpath)


def strict_schema(schema: Any) -> bool:
    """True when OpenAI's strict structured output accepts ``schema`` as it is: every object
    closed (``additionalProperties: false``) with every property required."""
    if isinstance(schema, list):
        return all(strict_schema(s) for s in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if sorted(schema.get("required") or []) != sorted(props):
            return False
    return all(strict_schema(v) for k, v in schema.items() if k not in ("required", "enum"))


class HostCliProvider(HeadlessCliProvider):
    """``Provider`` over ``codex exec``; also runs whole tool loops (``run_tool_loop``)."""

    HOST = "codex"

    @property
    def model_label(self) -> str:
        return io.DEFAULT_MODEL_LABEL if io.is_default_model(self.model) else self.model

    # -- one child ------------------------------------------------------------------------

    async def _call(
        self,
        request: CompletionRequest,
        *,
        max_turns: int,  # unused: `codex exec` has no turn bound (memdir's call bound stands in)
        execute: ToolExecutor | None = None,
        stop: asyncio.Event | None = None,
        holder: list[Any] | None = None,
    ) -> tuple[io.Stream, float]:
        if self.ledger is not None:
            self.ledger.check()
        cli = find_cli(self.env)
        if cli is None:
            raise HostModelUnavailableError(
                "the Codex CLI (`codex`) is not installed or not on PATH"
            )
        stream = io.Stream()
        if holder is not None:
            holder.append(stream)
        started = time.monotonic()
        work = Path(tempfile.mkdtemp(prefix="memdir-codex-"))
        prompt = render_prompt(request.messages)
        sent = f"{request.system_text}\n\n{prompt}"  # what a killed child's tokens are guessed from
        spent = False
        try:
            work.chmod(0o700)
            servers = await self._user_servers(cli, work, request.timeout)
            system, schema_file = self._instructions(request, work)
            (work / "instructions.md").write_text(system, encoding="utf-8")
            common: dict[str, Any] = {
                "model": self.model,
                "instructions_file": str(work / "instructions.md"),
                "schema_file": schema_file,
                "user_servers": servers,
            }
            spent = True
            if execute is not None and request.tools:
                async with ToolRelay(request.tools, execute) as relay:
                    server = io.RelayServer(self.python, str(relay.socket), PYTHONPATH)
                    call = io.build_call(prompt, relay=server, **common)
                    await self._spawn(cli, call, stream, work, request.timeout, stop)
            else:
                call = io.build_call(prompt, **common)
                await self._spawn(cli, call, stream, work, request.timeout, stop)
        except ProviderError as exc:
            self._record(stream, started, sent if spent else None, error=str(exc))
            raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
        stopped = stop is not None and stop.is_set()
        error = stream.failure
        if error is None and not stream.done and not stopped:
            tail = f": {stream.stderr}" if stream.stderr else ""
            error = HostModelUnavailableError(f"the Codex CLI ended without a result{tail}")
        cost = self._record(stream, started, sent, error=str(error) if error else None)
        if error is not None:
            raise error
        return stream, cost

    def _instructions(self, request: CompletionRequest, work: Path) -> tuple[str, str | None]:
        """memdir's system prompt, and the ``--output-schema`` file when the schema allows."""
        system = request.system_text
        schema = request.json_schema
        if schema is None:
            return system, None
        if strict_schema(schema):
            path = work / "schema.json"
            path.write_text(json.dumps(schema), encoding="utf-8")
            return system, str(path)
        return (
            f"{system}\n\nReply with only a JSON value (no prose, no code fence) matching this "
            f"JSON Schema:\n{json.dumps(schema)}",
            None,
        )

    async def _user_servers(self, cli: str, work: Path, timeout: float | None) -> list[str]:
        """The user's MCP server names (``codex mcp list --json``), to switch each off."""
        try:
            proc = await asyncio.create_subprocess_exec(
                cli,
                "mcp",
                "list",
                "--json",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=io.child_env(self.env),
                cwd=str(work),
                start_new_session=True,
            )
        except OSError as exc:
            raise HostModelUnavailableError(f"cannot start the Codex CLI: {exc}") from None
        try:
            async with asyncio.timeout(min(timeout or LIST_TIMEOUT, LIST_TIMEOUT)):
                out, err = await proc.communicate()
        except TimeoutError:
            raise HostModelUnavailableError(
                "`codex mcp list` did not answer within its time limit"
            ) from None
        finally:
            await cli_child.end(proc)
        try:
            if proc.returncode != 0:
                raise ValueError(
                    cli_child.tail(err, STDERR_NOISE) or f"exit status {proc.returncode}"
                )
            return io.server_names(out.decode("utf-8", "replace"))
        except (ValueError, KeyError) as exc:
            raise HostModelUnavailableError(
                f"cannot list the user's Codex MCP servers (`codex mcp list --json`): {exc}"
            ) from None

    async def _spawn(
        self,
        cli: str,
        call: io.ChildCall,
        stream: io.Stream,
        work: Path,
        timeout: float | None,
        stop: asyncio.Event | None,
    ) -> None:
        try:
            proc = await asyncio.create_subprocess_exec(
                cli,
                *call.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=io.child_env(self.env),
                cwd=str(work),
                limit=LINE_LIMIT,
                start_new_session=True,  # so a timeout can kill the CLI and its MCP child
            )
        except OSError as exc:
            raise HostModelUnavailableError(f"cannot start the Codex CLI: {exc}") from None
        limit = timeout or self.timeout
        try:
            async with asyncio.timeout(limit):
                await cli_child.drive(proc, call.prompt, stream, stop, noise=STDERR_NOISE)
        except TimeoutError:
            raise HostModelUnavailableError(
                f"the Codex CLI did not answer within {limit:g}s"
            ) from None
        except (OSError, ValueError) as exc:  # a broken pipe, an unreadable stream
            raise HostModelUnavailableError(f"reading the Codex CLI failed: {exc}") from None
        finally:
            await cli_child.end(proc)

    def _record(
        self, stream: io.Stream, started: float, prompt: str | None, *, error: str | None
    ) -> float:
        """Book one call; returns its estimated cost. ``prompt`` is None when no child ran."""
        usage = stream.usage
        estimated_usage = usage is None and prompt is not None
        if usage is None:
            guess = max(estimate_tokens(prompt), 1) if prompt is not None else 0
            usage = Usage(input_tokens=guess)
        cost = io.estimate_cost(self.model_label, usage)
        return self._book(
            usage, cost, turns=stream.turns, started=started, estimated=estimated_usage,
            error=error,
        )  # fmt: skip


__all__ = ["DEFAULT_TIMEOUT", "HostCliProvider", "find_cli", "strict_schema"]
