"""What memdir says to ``codex exec`` and how it reads the answer (pure; no processes).

The child is ``codex exec --json`` with everything Codex would add beside memdir's own prompt
and tools switched off (each switch verified against Codex 0.171, docs/hosts-codex-findings.md
§10):

* **No built-in tools**: ``--disable shell_tool unified_exec multi_agent goals view_image
  plugins`` and ``web_search="disabled"``, ``tools.experimental_request_user_input.enabled=false``
  (the verified set), plus ``features.<f>=false`` for the ChatGPT-login-only tools (apps, image
  generation, browser/computer use, tool suggestions, sleep) as a second line. ``--sandbox
  read-only`` covers any tool a later Codex adds. memdir's sandboxed tools, when a request has
  tools, are the relay as the one enabled MCP server (:data:`RELAY_SERVER`), approved for that
  server only (``default_tools_approval_mode = "approve"``: exec cannot ask anyone). Codex adds
  its three MCP *resource* helpers whenever an MCP server is on; they reach only MCP servers,
  and the relay serves no resources.
* **None of the user's MCP servers**: ``mcp_servers.<name>.enabled=false`` for every name the
  user's config defines (the caller lists them with ``codex mcp list --json``; ``-c`` on a name
  that does not exist is a config error, so the names must be the real ones).
* **No hooks, no recursion**: ``--disable hooks`` (stops every hook, even with hook trust
  bypassed) and ``MEMDIR_CHILD=1`` in the environment, which hooks inherit.
* **No trace in the user's sessions**: ``--ephemeral`` (no rollout file).
* **Only memdir's prompt**: ``model_instructions_file`` replaces Codex's system prompt, and the
  skills list, permissions/apps notes, ``<environment_context>`` and project ``AGENTS.md``
  (``project_doc_max_bytes=0``) are left out. The child's working directory is an empty private
  dir, so no project ``.codex/`` layer is read either.

``--json`` prints one event a line: ``thread.started``, ``turn.started``, ``item.started`` /
``item.completed`` (``agent_message``, ``mcp_tool_call``, ``reasoning``, and ``error`` items,
which are warnings), top-level ``error`` and ``turn.failed`` on failure, and ``turn.completed``
with ``usage`` (``input_tokens`` including ``cached_input_tokens``, ``output_tokens`` including
``reasoning_output_tokens``).

Cost: Codex reports tokens, never dollars (a ChatGPT-plan login is not billed per token at
all). memdir prices the tokens with :data:`PRICES` so the daily ``hostModelBudgetUsd`` still caps
how much background work runs; the figure is an **estimate** and is recorded as one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memdir.config import CHILD_ENV_FLAG
from memdir.errors import HostModelUnavailableError
from memdir.llm import cli_call
from memdir.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from memdir.llm.cli_call import ChildCall, RelayServer

RELAY_SERVER = "memdir_relay"  # not "memdir": the user's own memdir MCP server keeps that name
NOT_LOGGED_IN = "not logged in"

# Verified in 0.171 to be accepted and to remove the tool (findings §10). ``--disable`` fails
# on a name Codex does not know, so only names that exist go here.
DISABLED_FEATURES = (
    "hooks",
    "shell_tool",
    "unified_exec",
    "multi_agent",
    "goals",
    "view_image",
    "plugins",
)
# Tools only a ChatGPT login brings (not reproducible against a fake API): switched off with
# ``-c features.<f>=false``, which a later Codex that drops a name ignores instead of failing.
EXTRA_FEATURES_OFF = (
    "apps",
    "image_generation",
    "browser_use",
    "computer_use",
    "in_app_browser",
    "tool_suggest",
    "sleep_tool",
    "memories",
)
CHILD_CONFIG = (
    'web_search="disabled"',
    "tools.experimental_request_user_input.enabled=false",
    "skills.include_instructions=false",
    "skills.bundled.enabled=false",
    "include_environment_context=false",
    "include_permissions_instructions=false",
    "include_apps_instructions=false",
    "project_doc_max_bytes=0",
    "check_for_update_on_startup=false",
    "analytics.enabled=false",
    "feedback.enabled=false",
)
# Set for the child; a parent Codex session's own markers would only confuse it.
CHILD_ENV = {CHILD_ENV_FLAG: "1", "NO_COLOR": "1"}
DROPPED_ENV = ("CODEX_THREAD_ID", "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED")
# Names memdir's hostModel setting uses for Claude models: for Codex they mean "the model the
# user configured in Codex" (no ``-m``).
DEFAULT_MODEL_NAMES = frozenset({"", "default", "haiku", "sonnet", "opus"})
DEFAULT_MODEL_LABEL = "codex-default"

# USD per million tokens: (input, cached input, output), OpenAI's list prices for the models
# Codex runs (2025). Longest matching prefix wins; anything else, including the user's default
# model whose name memdir does not see, is priced as gpt-5 (the Codex default family).
PRICES: dict[str, tuple[float, float, float]] = {
    "gpt-5": (1.25, 0.125, 10.0),
    "gpt-5-codex": (1.25, 0.125, 10.0),
    "gpt-5-mini": (0.25, 0.025, 2.0),
    "gpt-5-nano": (0.05, 0.005, 0.40),
    "gpt-5.1-codex-mini": (0.25, 0.025, 2.0),
    "codex-mini": (1.50, 0.375, 6.0),
    "o4-mini": (1.10, 0.275, 4.40),
    "o3": (2.0, 0.50, 8.0),
    "gpt-4.1": (2.0, 0.50, 8.0),
    "gpt-4.1-mini": (0.40, 0.10, 1.60),
}
FALLBACK_PRICE = PRICES["gpt-5"]


def is_default_model(model: str) -> bool:
    """True when ``model`` means "whatever Codex is configured with" (memdir's Claude aliases)."""
    name = model.strip().lower()
    return name in DEFAULT_MODEL_NAMES or name.startswith("claude")


def price_of(model: str) -> tuple[float, float, float]:
    return cli_call.price_of(PRICES, model, FALLBACK_PRICE)


def estimate_cost(model: str, usage: Usage) -> float:
    """Dollars for ``usage`` at :data:`PRICES` (an estimate: Codex reports no cost)."""
    return cli_call.dollars(usage, price_of(model))


def toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are a subset TOML accepts)."""
    return json.dumps(value, ensure_ascii=False)


def relay_config(relay: RelayServer) -> list[str]:
    """The ``-c`` overrides that define the relay as an approved stdio MCP server."""
    key = f"mcp_servers.{RELAY_SERVER}"
    args = "[" + ", ".join(toml_string(a) for a in ("-m", "memdir.llm.relay_mcp", relay.socket))
    return [
        f"{key}.command={toml_string(relay.python)}",
        f"{key}.args={args}]",
        f"{key}.env={{ PYTHONPATH = {toml_string(relay.pythonpath)} }}",
        f'{key}.default_tools_approval_mode="approve"',
        f"{key}.startup_timeout_sec=30",
        f"{key}.tool_timeout_sec=300",
    ]


def build_call(
    prompt: str,
    *,
    model: str,
    instructions_file: str,
    schema_file: str | None = None,
    relay: RelayServer | None = None,
    user_servers: Sequence[str] = (),
) -> ChildCall:
    """The ``codex exec`` argv for one call; the prompt goes on stdin (the ``-`` argument)."""
    args = ["exec", "--json", "--ephemeral", "--skip-git-repo-check", "--sandbox", "read-only"]
    args += ["--color", "never"]
    for feature in DISABLED_FEATURES:
        args += ["--disable", feature]
    overrides = [*CHILD_CONFIG, *(f"features.{f}=false" for f in EXTRA_FEATURES_OFF)]
    overrides.append(f"model_instructions_file={toml_string(instructions_file)}")
    overrides += [f"mcp_servers.{n}.enabled=false" for n in user_servers if n != RELAY_SERVER]
    if relay is not None:
        overrides += relay_config(relay)
    for override in overrides:
        args += ["-c", override]
    if not is_default_model(model):
        args += ["-m", model]
    if schema_file is not None:
        args += ["--output-schema", schema_file]
    args.append("-")
    return ChildCall(args, prompt)


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: the caller's (so auth works as the host has it) plus the guard."""
    out = {k: v for k, v in env.items() if k not in DROPPED_ENV}
    out.update(CHILD_ENV)
    return out


def server_names(listing: str) -> list[str]:
    """The names in ``codex mcp list --json`` output (a JSON array of ``{"name": ...}``)."""
    parsed = json.loads(listing)
    if not isinstance(parsed, list):
        raise ValueError("codex mcp list --json did not print a list")
    return [
        str(s["name"]) for s in parsed if isinstance(s, dict) and isinstance(s.get("name"), str)
    ]


# -- reading the stream ---------------------------------------------------------------------


def usage_from(raw: Any) -> Usage:
    """``turn.completed``'s usage as memdir's (input without the cached part, as Anthropic's)."""
    if not isinstance(raw, dict):
        return Usage()

    def n(key: str) -> int:
        value = raw.get(key)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    cached = n("cached_input_tokens")
    return Usage(
        input_tokens=max(n("input_tokens") - cached, 0),
        output_tokens=n("output_tokens"),
        cache_read_tokens=cached,
        cache_write_tokens=n("cache_write_input_tokens"),
    )


def failure_from(message: str) -> HostModelUnavailableError:
    """One error for a failed turn; auth problems say "not logged in" (the user's cue)."""
    text = " ".join(message.split())[:300]
    lowered = text.lower()
    auth = ("401", "403", "unauthorized", "missing environment variable", "not logged in", "log in")
    if any(marker in lowered for marker in auth):
        return HostModelUnavailableError(f"{NOT_LOGGED_IN}: Codex could not authenticate ({text})")
    return HostModelUnavailableError(f"the Codex CLI failed: {text}")


def is_auth_error(message: str) -> bool:
    return str(failure_from(message)).startswith(NOT_LOGGED_IN)


def _tool_result(item: Mapping[str, Any]) -> ToolResultBlock:
    error = item.get("error")
    result = item.get("result")
    parts: list[str] = []
    if isinstance(result, dict):
        for part in result.get("content") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
    if isinstance(error, dict) and error.get("message"):
        return ToolResultBlock(str(item.get("id", "")), str(error["message"]), is_error=True)
    failed = item.get("status") == "failed"
    return ToolResultBlock(str(item.get("id", "")), "".join(parts), is_error=failed)


@dataclass
class Stream:
    """The child's ``--json`` events, folded as they arrive.

    Codex does not mark where one model response ends and the next begins, so messages are
    rebuilt from the items: consecutive tool calls share one assistant message (and one user
    message of results); text after a tool result starts a new assistant message. ``turns``
    (assistant messages) is therefore a lower bound on the model requests made."""

    messages: list[Message] = field(default_factory=list)
    thread_id: str | None = None
    usage: Usage | None = None
    failure: HostModelUnavailableError | None = None
    final_text: str = ""
    stderr: str = ""
    tool_items: int = 0
    text_after_tools: bool = False

    @property
    def done(self) -> bool:
        return self.usage is not None

    @property
    def turn_limited(self) -> bool:
        return False  # `codex exec` has no turn bound of its own

    @property
    def failed(self) -> bool:
        return self.failure is not None

    @property
    def turns(self) -> int:
        return sum(1 for m in self.messages if m.role == "assistant")

    def feed(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return  # stdout is JSON lines; anything else is noise
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "thread.started":
            self.thread_id = str(event.get("thread_id") or "") or None
        elif kind == "turn.completed":
            self.usage = usage_from(event.get("usage"))
        elif kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            self.failure = failure_from(str(message or "the turn failed"))
        elif kind == "error":
            message = str(event.get("message") or "")
            if is_auth_error(message):  # no retry fixes a refused key: stop waiting now
                self.failure = failure_from(message)
        elif kind == "item.completed" and isinstance(event.get("item"), dict):
            self._item(event["item"])

    def _item(self, item: Mapping[str, Any]) -> None:
        kind = item.get("type")
        if kind == "agent_message":
            text = str(item.get("text") or "")
            self.final_text = text
            if self.tool_items:
                self.text_after_tools = True
            last = self.messages[-1] if self.messages else None
            if last is not None and last.role == "assistant" and not _has_tools(last):
                self.messages[-1] = Message("assistant", [*last.blocks, TextBlock(text)])
            else:
                self.messages.append(Message("assistant", [TextBlock(text)]))
        elif kind == "mcp_tool_call":
            self.tool_items += 1
            arguments = item.get("arguments")
            use = ToolUseBlock(
                id=str(item.get("id", "")),
                name=str(item.get("tool", "")),
                input=dict(arguments) if isinstance(arguments, dict) else {},
            )
            result = _tool_result(item)
            if len(self.messages) >= 2 and self.messages[-1].role == "user":
                ask, answer = self.messages[-2], self.messages[-1]
                self.messages[-2] = Message("assistant", [*ask.blocks, use])
                self.messages[-1] = Message("user", [*answer.blocks, result])
                return
            last = self.messages[-1] if self.messages else None
            if last is not None and last.role == "assistant":
                self.messages[-1] = Message("assistant", [*last.blocks, use])
            else:
                self.messages.append(Message("assistant", [use]))
            self.messages.append(Message("user", [result]))


def _has_tools(message: Message) -> bool:
    return any(isinstance(b, ToolUseBlock) for b in message.blocks)


__all__ = [
    "CHILD_ENV",
    "DEFAULT_MODEL_LABEL",
    "PRICES",
    "RELAY_SERVER",
    "ChildCall",
    "RelayServer",
    "Stream",
    "build_call",
    "child_env",
    "estimate_cost",
    "failure_from",
    "is_default_model",
    "price_of",
    "server_names",
    "usage_from",
]
