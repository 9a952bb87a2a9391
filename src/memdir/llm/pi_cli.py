"""The ``pi`` provider: memdir's background model through the user's own pi (``pi -p``).

Verified against pi 0.73: ``pi -p --mode json`` reads the prompt from stdin and prints one JSON
event a line; ``--system-prompt <file>`` replaces pi's whole system prompt with memdir's (pi
reads a path as the file's contents); ``--no-tools`` offers the model no tool at all;
``--no-extensions``/``--no-skills``/``--no-prompt-templates``/``--no-context-files`` keep the
user's extensions (memdir's own among them), skills and ``AGENTS.md`` out; ``--no-session``
saves nothing (so ``memdir backfill`` never reads memdir's own calls back); ``PI_OFFLINE=1``
skips the start-up network checks. The user's providers, keys and default model are pi's own
(``~/.pi/agent``), as they have them.

Each assistant message's ``usage`` carries pi's own cost in dollars (``cost.total``, from its
model registry): that is what the ledger books, not an estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memdir.config import CHILD_ENV_FLAG
from memdir.llm import text_cli
from memdir.llm.base import Usage
from memdir.llm.text_cli import (
    Answer,
    Invocation,
    TextCliProvider,
    chosen_model,
    count,
    find_executable,
    json_lines,
)

FLAGS = (
    "-p", "--mode", "json", "--no-session", "--no-tools", "--no-extensions", "--no-skills",
    "--no-prompt-templates", "--no-context-files", "--no-themes",
)  # fmt: skip
# a parent pi session's extension environment would only confuse the child
DROPPED_ENV = ("PI_SESSION_ID", "PI_SESSION_FILE")


def find_cli(env: Mapping[str, str]) -> str | None:
    """``MEMDIR_PI_CLI`` when set, else ``pi`` on the env's PATH."""
    return find_executable(env, "MEMDIR_PI_CLI", "pi")


def model_words(host_model: str) -> str:
    return text_cli.model_words("pi", host_model)


def _usage(raw: Any) -> tuple[Usage, float]:
    if not isinstance(raw, dict):
        return Usage(), 0.0
    cost = raw.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    return (
        Usage(
            input_tokens=count(raw.get("input")),
            output_tokens=count(raw.get("output")),
            cache_read_tokens=count(raw.get("cacheRead")),
            cache_write_tokens=count(raw.get("cacheWrite")),
        ),
        float(total) if isinstance(total, (int, float)) and total >= 0 else 0.0,
    )


def read_events(stdout: str) -> Answer:
    """The reply and cost of a ``--mode json`` run: every finished assistant message adds its
    usage; the last one's text is the reply; ``stopReason: error`` is a failure."""
    answer = Answer(usage=None, cost_usd=None)
    tokens, dollars = Usage(), 0.0
    seen = False
    for event in json_lines(stdout):
        if event.get("type") != "message_end":
            continue
        message = event.get("message")
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        seen = True
        usage, cost = _usage(message.get("usage"))
        tokens = Usage(
            input_tokens=tokens.input_tokens + usage.input_tokens,
            output_tokens=tokens.output_tokens + usage.output_tokens,
            cache_read_tokens=tokens.cache_read_tokens + usage.cache_read_tokens,
            cache_write_tokens=tokens.cache_write_tokens + usage.cache_write_tokens,
        )
        dollars += cost
        content = message.get("content")
        parts = content if isinstance(content, list) else []
        answer.text = "".join(
            str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
        )
        if message.get("stopReason") in ("error", "aborted"):
            answer.error = str(message.get("errorMessage") or f"request {message['stopReason']}")
        else:
            answer.error = None
    if seen:
        answer.usage, answer.cost_usd = tokens, dollars
    return answer


class HostCliProvider(TextCliProvider):
    """``Provider`` over ``pi -p``."""

    HOST = "pi"
    TITLE = "the pi CLI (`pi -p`)"

    def invocation(self, system: str, prompt: str, home: Path) -> Invocation:
        system_md = home / "system.md"
        system_md.write_text(system, encoding="utf-8")
        args = [*FLAGS, "--system-prompt", str(system_md)]
        model = chosen_model(self.model)
        if model is not None:
            args += ["--model", model]
        env = {k: v for k, v in self.env.items() if k not in DROPPED_ENV}
        env.update({CHILD_ENV_FLAG: "1", "PI_OFFLINE": "1", "NO_COLOR": "1"})
        return Invocation(args, env, prompt)

    def read(self, stdout: str, stderr: str, returncode: int) -> Answer:
        answer = read_events(stdout)
        if answer.usage is None and answer.error is None:
            answer.error = stderr or "pi printed no reply"
        return answer


__all__ = ["HostCliProvider", "find_cli", "model_words", "read_events"]
