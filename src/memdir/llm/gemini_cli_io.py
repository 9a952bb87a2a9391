"""What memdir says to ``gemini -p`` and how it reads the answer (pure; no processes).

The child is Gemini CLI 0.61 headless, ``gemini -p "" -o stream-json -e none`` with the prompt on
stdin, in a **private config home** (``GEMINI_CLI_HOME=<empty private dir>``, which is also its
working directory): the user's settings, hooks, MCP servers, extensions, skills and
``GEMINI.md`` files are never read, and the child's session file lands in that dir and is
deleted with it. Its ``settings.json`` (:func:`child_settings`) is memdir's alone (each switch
verified against 0.61, docs/hosts-gemini-findings.md §6):

* **No built-in tools**: ``tools.core`` is an allowlist *and* a rule denying every other tool, so
  ``["mcp_memdir_*"]`` offers only memdir's relayed tools and ``[]`` offers none at all (shell,
  file edits, web fetch, memory, subagents are never registered, even under ``yolo``). memdir's
  sandboxed tools, when a request has tools, come from the relay (:data:`RELAY_SERVER`) as the
  one MCP server, ``trust: true`` (headless cannot ask anyone) and named in ``mcp.allowed`` and
  ``--allowed-mcp-server-names``.
* **No hooks, no recursion**: ``hooksConfig.enabled: false`` (no hook system at all) and
  ``MEMDIR_CHILD=1`` in the environment for any hook a system-wide settings file still adds.
* **Only memdir's prompt**: ``GEMINI_SYSTEM_MD`` replaces Gemini's whole system prompt with
  memdir's; no directory tree; the working dir has no ``GEMINI.md`` anywhere above it that the
  CLI reads (it is the config home). The CLI's own ``<session_context>`` (date, OS) stays.
* **No other traffic**: usage statistics, telemetry, auto-update and IDE off; a concrete model
  name, so no routing request; ``general.maxAttempts`` 3, so an outage falls back in seconds.
* **Bounded**: ``model.maxSessionTurns`` (the CLI stops the run with ``FatalTurnLimitedError``).

``-o stream-json`` prints one event a line: ``init``, ``message`` (``role: assistant`` text in
``delta`` chunks), ``tool_use`` / ``tool_result``, ``error`` (``severity`` warning|error) and a
final ``result`` with ``status`` and ``stats`` (per model: ``input_tokens`` = prompt including
``cached``, ``input`` = uncached, ``output_tokens`` = candidates, ``total_tokens`` including the
thinking tokens, which are billed as output).

Cost: Gemini CLI reports tokens, never dollars. memdir prices them
(:mod:`~memdir.llm.gemini_cli_cost`) so the daily ``hostModelBudgetUsd`` still caps the
background work; the figure is an **estimate**.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memdir.config import CHILD_ENV_FLAG
from memdir.errors import HostModelUnavailableError
from memdir.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from memdir.llm.cli_call import ChildCall, RelayServer
from memdir.llm.gemini_cli_cost import usage_by_model

RELAY_SERVER = "memdir"  # Gemini names its tools mcp_<server>_<tool>; aliases must avoid "_"
TOOL_PREFIX = f"mcp_{RELAY_SERVER}_"
NOT_LOGGED_IN = "not logged in"
TURN_LIMIT_ERROR = "FatalTurnLimitedError"
MAX_ATTEMPTS = 3

# Set for the child; a parent Gemini session's markers (a hook's environment) would only
# confuse it, a user's GEMINI_SYSTEM_MD / GEMINI_CLI_HOME are replaced by memdir's, and
# GEMINI_MODEL would override the model memdir chose (it outranks settings' model.name).
DROPPED_ENV = (
    "GEMINI_MODEL",
    "GEMINI_SESSION_ID",
    "GEMINI_PROJECT_DIR",
    "GEMINI_CWD",
    "GEMINI_PLANS_DIR",
    "CLAUDE_PROJECT_DIR",
    "GEMINI_WRITE_SYSTEM_MD",
    "GEMINI_CLI_IDE_SERVER_PORT",
    "GEMINI_CLI_IDE_WORKSPACE_PATH",
    "GEMINI_CLI_IDE_PID",
    "GEMINI_CLI_IDE_SERVER_STDIO_COMMAND",
    # a container sandbox would not see the relay's socket; the child has no built-ins to jail
    "GEMINI_SANDBOX",
)


def child_settings(
    *,
    model: str,
    max_turns: int,
    auth_type: str | None = None,
    relay: RelayServer | None = None,
) -> dict[str, Any]:
    """The child's whole ``settings.json`` (its private home's only settings layer)."""
    security: dict[str, Any] = {"folderTrust": {"enabled": False}}
    if auth_type:
        security["auth"] = {"selectedType": auth_type}
    settings: dict[str, Any] = {
        "security": security,
        "general": {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "maxAttempts": MAX_ATTEMPTS,
        },
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ide": {"enabled": False},
        "hooksConfig": {"enabled": False},
        "skills": {"enabled": False},
        "context": {"includeDirectoryTree": False},
        "model": {"name": model, "maxSessionTurns": max(max_turns, 1)},
        "tools": {"core": [f"{TOOL_PREFIX}*"] if relay is not None else []},
    }
    if relay is not None:
        settings["mcp"] = {"allowed": [RELAY_SERVER]}
        settings["mcpServers"] = {
            RELAY_SERVER: {
                "command": relay.python,
                "args": ["-m", "memdir.llm.relay_mcp", relay.socket],
                "env": {"PYTHONPATH": relay.pythonpath, CHILD_ENV_FLAG: "1"},
                "trust": True,
                "timeout": 300_000,
            }
        }
    return settings


def build_call(prompt: str, *, relay: bool) -> ChildCall:
    """The ``gemini`` argv for one call; the prompt goes on stdin (``-p ""`` is appended)."""
    args = ["-p", "", "--output-format", "stream-json", "--extensions", "none"]
    args += ["--approval-mode", "default"]
    if relay:
        args += ["--allowed-mcp-server-names", RELAY_SERVER]
    return ChildCall(args, prompt)


def child_env(env: Mapping[str, str], *, home: str, system_md: str) -> dict[str, str]:
    """The child's environment: the caller's (so auth works as the host has it), its private
    home and system prompt, and the guard every memdir hook checks."""
    out = {k: v for k, v in env.items() if k not in DROPPED_ENV}
    out.update(
        {
            "GEMINI_CLI_HOME": home,
            "GEMINI_SYSTEM_MD": system_md,
            "GEMINI_CLI_NO_RELAUNCH": "true",  # one node process, not two (~0.9 s less)
            "GEMINI_CLI_TRUST_WORKSPACE": "true",  # the private dir, if a system file wants trust
            CHILD_ENV_FLAG: "1",
            "NO_COLOR": "1",
        }
    )
    return out


# -- reading the stream ---------------------------------------------------------------------


def failure_from(message: str) -> HostModelUnavailableError:
    """One error for a failed run; auth problems say "not logged in" (the user's cue)."""
    text = " ".join(message.split())[:300]
    lowered = text.lower()
    auth = (
        "401",
        "403",
        "api key not valid",
        "api_key_invalid",
        "unauthenticated",
        "permission_denied",
        "must specify the gemini_api_key",
        "please set an auth method",
        "login",
    )
    if any(marker in lowered for marker in auth):
        return HostModelUnavailableError(
            f"{NOT_LOGGED_IN}: Gemini CLI could not authenticate ({text})"
        )
    return HostModelUnavailableError(f"the Gemini CLI failed: {text}")


def is_auth_error(message: str) -> bool:
    return str(failure_from(message)).startswith(NOT_LOGGED_IN)


def memdir_name(tool: str) -> str:
    """memdir's name for a tool the child called (``mcp_memdir_Write`` → ``Write``)."""
    return tool.removeprefix(TOOL_PREFIX)


@dataclass
class Stream:
    """The child's ``stream-json`` events, folded as they arrive.

    Text deltas join the current assistant message; tool calls join it too (the CLI prints a
    response's calls as it streams and runs them after it ends); results form a user message;
    text or a call after a result starts a new assistant message, so there is one assistant
    message per model turn."""

    messages: list[Message] = field(default_factory=list)
    session_id: str | None = None
    model: str | None = None
    by_model: dict[str, Usage] = field(default_factory=dict)
    status: str | None = None
    failure: HostModelUnavailableError | None = None
    turn_limited: bool = False
    last_error: str | None = None
    stderr: str = ""
    tool_items: int = 0
    text_after_tools: bool = False

    @property
    def done(self) -> bool:
        return self.status is not None

    @property
    def failed(self) -> bool:
        return self.failure is not None

    @property
    def usage(self) -> Usage | None:
        if not self.done:
            return None
        used = self.by_model.values()
        return Usage(
            input_tokens=sum(u.input_tokens for u in used),
            output_tokens=sum(u.output_tokens for u in used),
            cache_read_tokens=sum(u.cache_read_tokens for u in used),
        )

    @property
    def turns(self) -> int:
        return sum(1 for m in self.messages if m.role == "assistant")

    @property
    def final_text(self) -> str:
        last = self.messages[-1] if self.messages else None
        if last is None or last.role != "assistant":
            return ""
        return "".join(b.text for b in last.blocks if isinstance(b, TextBlock))

    def feed(self, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return  # stdout is JSON lines; anything else is noise
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "init":
            self.session_id = str(event.get("session_id") or "") or None
            self.model = str(event.get("model") or "") or None
        elif kind == "message" and event.get("role") == "assistant":
            self._text(str(event.get("content") or ""))
        elif kind == "tool_use":
            self._tool_use(event)
        elif kind == "tool_result":
            self._tool_result(event)
        elif kind == "error":
            message = str(event.get("message") or "")
            if event.get("severity") == "error":
                self.last_error = message
            if is_auth_error(message):  # no retry fixes a refused key: stop waiting now
                self.failure = failure_from(message)
        elif kind == "result":
            self._result(event)

    def _result(self, event: Mapping[str, Any]) -> None:
        self.status = str(event.get("status") or "error")
        self.by_model = usage_by_model(event.get("stats"))
        if self.status == "success":
            return
        error = event.get("error")
        kind = error.get("type") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if kind == TURN_LIMIT_ERROR:
            self.turn_limited = True
            return
        self.failure = failure_from(str(message or self.last_error or "the run failed"))

    def _text(self, text: str) -> None:
        if not text:
            return
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "assistant":
            blocks = list(last.blocks)
            if blocks and isinstance(blocks[-1], TextBlock):
                blocks[-1] = TextBlock(blocks[-1].text + text)
            else:
                blocks.append(TextBlock(text))
            self.messages[-1] = Message("assistant", blocks)
            return
        if self.tool_items:
            self.text_after_tools = True
        self.messages.append(Message("assistant", [TextBlock(text)]))

    def _tool_use(self, event: Mapping[str, Any]) -> None:
        self.tool_items += 1
        params = event.get("parameters")
        use = ToolUseBlock(
            id=str(event.get("tool_id") or ""),
            name=memdir_name(str(event.get("tool_name") or "")),
            input=dict(params) if isinstance(params, dict) else {},
        )
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "assistant":
            self.messages[-1] = Message("assistant", [*last.blocks, use])
        else:  # the CLI runs a response's calls after it ends: a call after results is a new turn
            self.messages.append(Message("assistant", [use]))

    def _tool_result(self, event: Mapping[str, Any]) -> None:
        error = event.get("error")
        failed = event.get("status") != "success"
        content = event.get("output")
        if isinstance(error, dict) and error.get("message"):
            content = error["message"]
        result = ToolResultBlock(str(event.get("tool_id") or ""), str(content or ""), failed)
        last = self.messages[-1] if self.messages else None
        if last is not None and last.role == "user":
            self.messages[-1] = Message("user", [*last.blocks, result])
        else:
            self.messages.append(Message("user", [result]))


__all__ = [
    "RELAY_SERVER",
    "ChildCall",
    "RelayServer",
    "Stream",
    "build_call",
    "child_env",
    "child_settings",
    "failure_from",
]
