"""A host's agent CLI run headless as a plain completer: memdir's background model for the hosts
whose CLI can take a system prompt and print a reply, but cannot be given memdir's tools
(``pi -p``, ``copilot -p``, ``qwen``).

Each call is one child with no tools of its own, no hooks, no extensions and no saved session,
in a private working directory; the host's own login and provider settings are used as the
user has them. The request's tools travel as JSON in text (:mod:`memdir.llm.text_tools`): a
reply naming a tool comes back as ``tool_calls``, and memdir's agent loop runs them itself
(``AgentRunner`` with ``complete``), so the child never touches a file.

A host gives only what differs (:class:`CliDialect` in its own module): how to find the CLI,
the child's argv, environment and private config, and how to read what it printed. Everything
else is here: the daily budget (checked before a child starts), the time limit (the child's
whole process group is killed), one cost-ledger row per call (the CLI's own cost where it
reports one, else an estimate from its tokens, else from the prompt's length), and the errors
that send the caller offline (:class:`~memdir.errors.HostModelUnavailableError`).
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.errors import HostModelUnavailableError, ProviderError
from memdir.llm import cli_child
from memdir.llm.base import Completion, CompletionRequest, Usage, estimate_tokens
from memdir.llm.cli_call import Price, dollars
from memdir.llm.cli_provider import CliProviderBase
from memdir.llm.text_tools import completion_from_text, schema_prompt, tools_prompt, transcript

# What an unknown model's tokens are priced at when the CLI reports no cost: a mid tier, so
# the daily budget errs towards stopping early (USD per million: input, cached, output).
FALLBACK_PRICE: Price = (3.0, 0.3, 15.0)
CLAUDE_ALIASES = ("haiku", "sonnet", "opus", "default", "")
MAX_OUTPUT = 16 * 1024 * 1024  # a reply, events and usage: far below; a runaway child: cut


@dataclass(frozen=True)
class Invocation:
    """One child: argv after the executable, its environment, and the prompt for stdin."""

    args: list[str]
    env: dict[str, str]
    stdin: str


@dataclass
class Answer:
    """What one child printed, read by its host: the reply, and what the call cost."""

    text: str = ""
    usage: Usage | None = None  # tokens, where the CLI reports them
    cost_usd: float | None = None  # dollars, where the CLI reports them
    error: str | None = None  # the CLI's own words for a failed run
    models: dict[str, Usage] = field(default_factory=dict)


def find_executable(env: Mapping[str, str], override: str, name: str) -> str | None:
    """``env[override]`` when set (and a file), else ``name`` on the env's PATH."""
    explicit = env.get(override, "").strip()
    if explicit:
        return explicit if Path(explicit).is_file() else None
    return shutil.which(name, path=env.get("PATH") or os.defpath)


def config_home(env: Mapping[str, str], variable: str, dotdir: str) -> Path:
    """A CLI's own config dir: ``env[variable]`` when set, else ``~/<dotdir>``."""
    custom = env.get(variable, "").strip()
    return Path(custom) if custom else Path(env.get("HOME") or Path.home()) / dotdir


def json_lines(stdout: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of a CLI's one-event-a-line output; any other line is passed over."""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def count(value: object) -> int:
    """A token count as a CLI printed it: a positive int, else 0 (a budget never goes down)."""
    return value if isinstance(value, int) and value > 0 else 0


def model_words(cli: str, host_model: str) -> str:
    """What ``hostModel`` means for ``cli`` in plain words (``memdir install`` says it)."""
    name = chosen_model(host_model)
    return f"{cli}'s {name}" if name else f"the model your {cli} uses"


def chosen_model(model: str) -> str | None:
    """The model to ask the CLI for; None for "the one the user set up in it" (a Claude
    alias means a tier of Claude's, which another host's login may not offer)."""
    name = model.strip()
    return None if name.lower() in CLAUDE_ALIASES else name


class TextCliProvider(CliProviderBase, abc.ABC):
    """``Provider`` over one headless child per call; a host gives ``HOST`` (also the name of
    its executable), ``TITLE`` and the two methods below."""

    TITLE = ""  # the CLI's name in messages, e.g. "the pi CLI"
    NOISE: tuple[str, ...] = ()  # stderr start-up chatter, never the reason a run failed

    def find_cli(self) -> str | None:
        """``MEMDIR_<HOST>_CLI`` when set, else the host's executable on the env's PATH."""
        return find_executable(self.env, f"MEMDIR_{self.HOST.upper()}_CLI", self.HOST)

    @abc.abstractmethod
    def invocation(self, system: str, prompt: str, home: Path) -> Invocation:
        """The child for one call; ``home`` is a private empty dir (its cwd), removed after."""

    @abc.abstractmethod
    def read(self, stdout: str, stderr: str, returncode: int) -> Answer:
        """What the child printed, as an :class:`Answer`."""

    def price(self, model: str) -> Price:
        """USD per million tokens for a model whose cost the CLI does not report."""
        return FALLBACK_PRICE

    @property
    def model_label(self) -> str:
        return chosen_model(self.model) or "default"

    # -- the Provider protocol ------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> Completion:
        if self.ledger is not None:
            self.ledger.check()
        cli = self.find_cli()
        if cli is None:
            raise HostModelUnavailableError(f"{self.TITLE} is not installed or not on PATH")
        system = request.system_text
        if request.tools:
            answer_schema = request.json_schema
            system = f"{system}\n\n{tools_prompt(request.tools, several=True)}"
            if answer_schema is not None:
                system += f"\nThe answer must match this JSON Schema: {json.dumps(answer_schema)}"
        elif request.json_schema is not None:
            system = f"{system}\n\n{schema_prompt(request.json_schema)}"
        prompt = transcript(request.messages)
        started = time.monotonic()
        try:
            home = Path(tempfile.mkdtemp(prefix=f"memdir-{self.HOST}-"))
        except OSError as exc:
            raise HostModelUnavailableError(
                f"cannot make {self.TITLE}'s private dir: {exc}"
            ) from None
        answer = Answer()
        try:
            home.chmod(0o700)
            try:
                call = self.invocation(system, prompt, home)
            except OSError as exc:  # a full disk, an unreadable login file: offline, not a crash
                raise HostModelUnavailableError(
                    f"cannot prepare {self.TITLE}'s private dir: {exc}"
                ) from None
            answer = await self._run(cli, call, home, request.timeout)
        except ProviderError as exc:
            self._record(answer, started, f"{system}\n\n{prompt}", error=str(exc))
            raise
        finally:
            shutil.rmtree(home, ignore_errors=True)
        self._record(answer, started, f"{system}\n\n{prompt}", error=answer.error)
        if answer.error is not None:
            raise HostModelUnavailableError(f"{self.TITLE} failed: {answer.error}")
        usage = answer.usage or Usage()
        return completion_from_text(answer.text, request, usage=usage)

    async def _run(self, cli: str, call: Invocation, home: Path, timeout: float | None) -> Answer:
        try:
            proc = await asyncio.create_subprocess_exec(
                cli,
                *call.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=call.env,
                cwd=str(home),  # no project files, instructions or settings above it
                start_new_session=True,  # so a timeout can kill the CLI and all it started
                limit=MAX_OUTPUT,
            )
        except OSError as exc:
            raise HostModelUnavailableError(f"cannot start {self.TITLE}: {exc}") from None
        limit = timeout or self.timeout
        try:
            async with asyncio.timeout(limit):
                out, err = await _exchange(proc, call.stdin.encode("utf-8"))
        except TimeoutError:
            raise HostModelUnavailableError(
                f"{self.TITLE} did not answer within {limit:g}s"
            ) from None
        except (OSError, ValueError) as exc:  # a broken pipe
            raise HostModelUnavailableError(f"reading {self.TITLE} failed: {exc}") from None
        finally:
            await cli_child.end(proc)
        stderr = cli_child.tail(err, self.NOISE)
        answer = self.read(out.decode("utf-8", "replace"), stderr, proc.returncode or 0)
        if answer.error is None and proc.returncode:
            answer.error = stderr or f"exit code {proc.returncode}"
        return answer

    def _record(self, answer: Answer, started: float, sent: str, *, error: str | None) -> None:
        """Book one call: the CLI's own cost where it said, else its tokens at a list price,
        else the prompt's estimated tokens (a killed child still counts against the budget)."""
        usage = answer.usage
        if error is not None and usage is not None and not usage.input_tokens + usage.output_tokens:
            usage = None  # a failed call's zero: whether it reached the API is unknown
        estimated = usage is None
        if usage is None:
            usage = Usage(input_tokens=max(estimate_tokens(sent), 1))
        if answer.cost_usd is not None:
            cost, cost_estimated = answer.cost_usd, False
        else:
            models = answer.models or {self.model_label: usage}
            cost = sum(dollars(u, self.price(name)) for name, u in models.items())
            cost_estimated = True
        self._book(
            usage, cost, turns=1, started=started, estimated=estimated, error=error,
            cost_estimated=cost_estimated,
        )  # fmt: skip


async def _exchange(proc: asyncio.subprocess.Process, data: bytes) -> tuple[bytes, bytes]:
    """Send ``data``, then read stdout and stderr to their ends, each at most
    :data:`MAX_OUTPUT` bytes (a child printing without end is killed, not buffered)."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    async def send() -> None:
        with contextlib.suppress(ConnectionError):
            proc.stdin.write(data)  # type: ignore[union-attr]
            await proc.stdin.drain()  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]

    async def drain(stream: asyncio.StreamReader) -> bytes:
        chunks, size = [], 0
        while chunk := await stream.read(64 * 1024):
            size += len(chunk)
            if size > MAX_OUTPUT:
                await cli_child.end(proc)  # at once: the other pipe then ends too
                raise HostModelUnavailableError(
                    f"the CLI printed more than {MAX_OUTPUT // (1024 * 1024)} MB; stopped"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    results = await asyncio.gather(
        send(), drain(proc.stdout), drain(proc.stderr), return_exceptions=True
    )
    for result in results:  # every part ran to its end: no task is left with an error unread
        if isinstance(result, BaseException):
            raise result
    await proc.wait()
    _, out, err = results
    assert isinstance(out, bytes) and isinstance(err, bytes)
    return out, err


__all__ = [
    "CLAUDE_ALIASES",
    "FALLBACK_PRICE",
    "Answer",
    "Invocation",
    "TextCliProvider",
    "chosen_model",
    "config_home",
    "count",
    "find_executable",
    "json_lines",
    "model_words",
]
