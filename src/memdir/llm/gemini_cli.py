"""The ``gemini`` provider: memdir's background model calls through the user's own Gemini CLI.

The twin of :mod:`memdir.llm.codex_cli` for Gemini CLI (pinned and verified: 0.61). Each call
is one ``gemini -p`` child with the user's own auth (the environment, and the auth type their
``~/.gemini/settings.json`` selects), in a private config home holding memdir's settings only
(the switches and why: :mod:`memdir.llm.gemini_cli_io`).

* :meth:`HostCliProvider.complete` — the ``Provider`` protocol. Gemini CLI has no output-schema
  flag, so a structured request gets its schema in the instructions and the reply is parsed. A
  request with tools runs the relay in *capture* mode: the tool calls of the model's first
  response are returned to the caller and never run, and ``maxSessionTurns: 1`` ends the child
  before a second response (the CLI's turn-limit error is then the expected end).
* :meth:`HostCliProvider.run_tool_loop` — a whole agent run in one child, every tool call coming
  back through the relay (:mod:`memdir.llm.relay_mcp`) to the caller's ``execute``. The CLI
  stops after ``max_turns`` model turns (``model.maxSessionTurns``: ``stop_reason="max_turns"``);
  memdir also answers calls past ``max_turns * CALLS_PER_TURN`` with an error and stops a model
  that keeps calling.

Failures never hang a hook: a missing executable, no usable auth (the CLI's own message), a
failed run or the timeout (the child's process group is killed) raise
:class:`~memdir.errors.HostModelUnavailableError`; a spent daily budget raises
:class:`~memdir.errors.BudgetExhaustedError` before anything starts. Every call that started a
child is recorded in the cost ledger with its tokens and an *estimated* cost
(:data:`~memdir.llm.gemini_cli_cost.PRICES`); a child killed before it reported usage is recorded
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
from memdir.llm import gemini_cli_cost as cost
from memdir.llm import gemini_cli_io as io
from memdir.llm.base import (
    CompletionRequest,
    ToolExecutor,
    Usage,
    estimate_tokens,
)
from memdir.llm.claude_code_io import render_prompt
from memdir.llm.cli_provider import DEFAULT_TIMEOUT, HeadlessCliProvider
from memdir.llm.tool_relay import ToolRelay

LINE_LIMIT = 64 * 1024 * 1024  # one JSON line can hold a whole tool result
MAX_SETTINGS_BYTES = 1024 * 1024
OAUTH_FILES = ("oauth_creds.json", "google_accounts.json")
# Gemini's start-up chatter on stderr, never the reason a run failed.
STDERR_NOISE = ("Warning: 256-color", "Ripgrep is not available", "Could not verify the current")
PYTHONPATH = str(Path(memdir.__file__).resolve().parent.parent)  # where the relay imports from


def find_cli(env: Mapping[str, str]) -> str | None:
    """The CLI to run: ``MEMDIR_GEMINI_CLI`` when set, else ``gemini`` on the env's PATH."""
    explicit = env.get("MEMDIR_GEMINI_CLI", "").strip()
    if explicit:
        return explicit if Path(explicit).is_file() else None
    return shutil.which("gemini", path=env.get("PATH") or os.defpath)


def model_words(host_model: str) -> str:
    """What ``hostModel`` means here, in plain words (``memdir install gemini`` says it)."""
    name = cost.model_name(host_model)
    fresh, _, out = cost.price_of(name)
    return f"{name}, list price ${fresh:.2f} / ${out:.2f} per million input / output tokens"


def user_gemini_dir(env: Mapping[str, str]) -> Path:
    """The user's ``~/.gemini`` (``$GEMINI_CLI_HOME/.gemini`` when set)."""
    return Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or Path.home()) / ".gemini"


def user_auth_type(env: Mapping[str, str]) -> str | None:
    """``security.auth.selectedType`` of the user's settings, so the child authenticates as the
    user's CLI does; None when unset or unreadable (the child then picks from the env, as the
    CLI itself would)."""
    path = user_gemini_dir(env) / "settings.json"
    try:
        if not path.is_file() or path.stat().st_size > MAX_SETTINGS_BYTES:
            return None
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    security = value.get("security") if isinstance(value, dict) else None
    auth = security.get("auth") if isinstance(security, dict) else None
    chosen = auth.get("selectedType") if isinstance(auth, dict) else None
    return chosen if isinstance(chosen, str) and chosen else None


class HostCliProvider(HeadlessCliProvider):
    """``Provider`` over ``gemini -p``; also runs whole tool loops (``run_tool_loop``)."""

    HOST = "gemini"

    @property
    def model_label(self) -> str:
        return cost.model_name(self.model)

    # -- one child ------------------------------------------------------------------------

    async def _call(
        self,
        request: CompletionRequest,
        *,
        max_turns: int,
        execute: ToolExecutor | None = None,
        stop: asyncio.Event | None = None,
        holder: list[Any] | None = None,
    ) -> tuple[io.Stream, float]:
        if self.ledger is not None:
            self.ledger.check()
        cli = find_cli(self.env)
        if cli is None:
            raise HostModelUnavailableError(
                "the Gemini CLI (`gemini`) is not installed or not on PATH"
            )
        stream = io.Stream()
        if holder is not None:
            holder.append(stream)
        started = time.monotonic()
        try:
            home = Path(tempfile.mkdtemp(prefix="memdir-gemini-"))
        except OSError as exc:
            raise HostModelUnavailableError(f"cannot make the Gemini CLI's home: {exc}") from None
        prompt = render_prompt(request.messages)
        sent = f"{request.system_text}\n\n{prompt}"  # what a killed child's tokens are guessed from
        spent = False
        try:
            auth = user_auth_type(self.env)
            try:
                home.chmod(0o700)
                system_md = self._prepare(home, request, auth)
            except OSError as exc:  # a full disk, an unreadable login file: offline, not a crash
                raise HostModelUnavailableError(
                    f"cannot prepare the Gemini CLI's private home: {exc}"
                ) from None
            settings: dict[str, Any] = {
                "model": self.model_label,
                "max_turns": max_turns,
                "auth_type": auth,
            }
            spent = True
            if execute is not None and request.tools:
                async with ToolRelay(request.tools, execute) as relay:
                    server = io.RelayServer(self.python, str(relay.socket), PYTHONPATH)
                    self._write_settings(home, io.child_settings(relay=server, **settings))
                    call = io.build_call(prompt, relay=True)
                    await self._spawn(cli, call, stream, home, system_md, request.timeout, stop)
            else:
                self._write_settings(home, io.child_settings(**settings))
                call = io.build_call(prompt, relay=False)
                await self._spawn(cli, call, stream, home, system_md, request.timeout, stop)
        except ProviderError as exc:
            self._record(stream, started, sent if spent else None, error=str(exc))
            raise
        finally:
            shutil.rmtree(home, ignore_errors=True)
        stopped = stop is not None and stop.is_set()
        error = stream.failure
        if error is None and not stream.done and not stopped:
            if stream.stderr and io.is_auth_error(stream.stderr):
                error = io.failure_from(stream.stderr)  # e.g. no GEMINI_API_KEY: exit 41
            else:
                tail = f": {stream.stderr}" if stream.stderr else ""
                error = HostModelUnavailableError(f"the Gemini CLI ended without a result{tail}")
        cost = self._record(stream, started, sent, error=str(error) if error else None)
        if error is not None:
            raise error
        return stream, cost

    def _prepare(self, home: Path, request: CompletionRequest, auth: str | None) -> Path:
        """The private home's ``.gemini/`` (with the user's OAuth login when they use one) and
        memdir's system prompt file; returns the prompt file."""
        config = home / ".gemini"
        config.mkdir(mode=0o700)
        if auth == "oauth-personal":  # "Login with Google" keeps its token file in ~/.gemini
            source = user_gemini_dir(self.env)
            for name in OAUTH_FILES:
                original = source / name
                if original.is_file():
                    shutil.copyfile(original, config / name)
                    (config / name).chmod(0o600)
        system = request.system_text
        if request.json_schema is not None:
            system = (
                f"{system}\n\nReply with only a JSON value (no prose, no code fence) matching "
                f"this JSON Schema:\n{json.dumps(request.json_schema)}"
            )
        path = home / "system.md"
        path.write_text(system, encoding="utf-8")
        return path

    @staticmethod
    def _write_settings(home: Path, settings: dict[str, Any]) -> None:
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")

    async def _spawn(
        self,
        cli: str,
        call: io.ChildCall,
        stream: io.Stream,
        home: Path,
        system_md: Path,
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
                env=io.child_env(self.env, home=str(home), system_md=str(system_md)),
                cwd=str(home),  # the config home: no workspace layer, no GEMINI.md above it
                limit=LINE_LIMIT,
                start_new_session=True,  # so a timeout can kill the CLI and its MCP child
            )
        except OSError as exc:
            raise HostModelUnavailableError(f"cannot start the Gemini CLI: {exc}") from None
        limit = timeout or self.timeout
        try:
            async with asyncio.timeout(limit):
                await cli_child.drive(proc, call.prompt, stream, stop, noise=STDERR_NOISE)
        except TimeoutError:
            raise HostModelUnavailableError(
                f"the Gemini CLI did not answer within {limit:g}s"
            ) from None
        except (OSError, ValueError) as exc:  # a broken pipe, an unreadable stream
            raise HostModelUnavailableError(f"reading the Gemini CLI failed: {exc}") from None
        finally:
            await cli_child.end(proc)

    def _record(
        self, stream: io.Stream, started: float, prompt: str | None, *, error: str | None
    ) -> float:
        """Book one call; returns its estimated cost. ``prompt`` is None when no child ran."""
        usage = stream.usage
        by_model = dict(stream.by_model)
        estimated_usage = usage is None and prompt is not None
        if usage is None:
            guess = max(estimate_tokens(prompt), 1) if prompt is not None else 0
            usage = Usage(input_tokens=guess)
            by_model = {self.model_label: usage}
        dollars = cost.estimate_cost(by_model)
        return self._book(
            usage, dollars, turns=stream.turns, started=started, estimated=estimated_usage,
            error=error,
        )  # fmt: skip


__all__ = [
    "DEFAULT_TIMEOUT",
    "HostCliProvider",
    "find_cli",
    "model_words",
    "user_auth_type",
]
