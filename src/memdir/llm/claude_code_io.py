"""What memdir says to the host's headless CLI and how it reads the answer (pure; no processes).

The child is started as ``claude -p --output-format stream-json --verbose`` with:

* ``--tools ""``: none of the host's built-in tools (no Bash, no Edit, no WebFetch). memdir's
  own sandboxed tools, when a request has tools, come through the relay as the only MCP server
  (``--strict-mcp-config --mcp-config <relay>``) and are pre-approved by name (``--allowedTools``)
  because a headless child cannot ask anyone.
* ``--setting-sources ""``: no user, project or local settings, so no hooks (memdir's or anyone's),
  no plugins' hooks, no permission rules from the user's files; ``MEMDIR_CHILD=1`` in its
  environment additionally makes every memdir hook exit 0 silently.
* ``--no-session-persistence``: no transcript in the user's session list, nothing for
  ``--continue`` to pick up.
* ``--system-prompt``: memdir's prompt replaces Claude Code's coding-agent prompt.
* ``--max-turns``, ``--max-budget-usd``: the run's bounds, enforced by the CLI as well as here.

The stream is one JSON object per line: ``system``/``init``, ``assistant`` and ``user`` messages,
``system``/``api_retry`` while the CLI retries, and a final ``result`` with ``usage`` and
``total_cost_usd``. Auth is whatever the CLI already uses (OAuth login or API key).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memdir.config import CHILD_ENV_FLAG
from memdir.errors import HostModelUnavailableError, InvalidOutputError, ProviderError
from memdir.llm.base import (
    Block,
    Completion,
    CompletionRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from memdir.llm.cli_call import ChildCall
from memdir.llm.tool_relay import SERVER_NAME, host_tool_name, memdir_tool_name

# Set for the child: no telemetry, update checks or error reports; few CLI-side retries (a
# background memory task would rather fall back offline than wait out ten backoffs).
CHILD_ENV = {
    CHILD_ENV_FLAG: "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_MAX_RETRIES": "2",
}
# Inherited from a host session, these would make the child think it is a nested agent.
DROPPED_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT")
AUTH_STATUSES = (401, 403)
NOT_LOGGED_IN = "not logged in"


def render_prompt(messages: Sequence[Message]) -> str:
    """The messages as one prompt: a lone user message is sent as is; a longer conversation
    becomes a labelled transcript (``-p`` takes one user turn), tool traffic as short lines."""
    if len(messages) == 1 and messages[0].role == "user":
        return _render_blocks(messages[0].blocks)
    parts = [f"[{m.role}]\n{_render_blocks(m.blocks)}" for m in messages]
    return "\n\n".join(parts) + "\n\n[assistant]\n"


def _render_blocks(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, TextBlock):
            out.append(b.text)
        elif isinstance(b, ToolUseBlock):
            out.append(f"(called {b.name} {json.dumps(b.input, ensure_ascii=False)})")
        else:
            label = "error" if b.is_error else "result"
            out.append(f"(tool {label}: {b.content})")
    return "\n".join(out)


def mcp_config(python: str, socket: str) -> str:
    """The ``--mcp-config`` JSON naming the relay as the one stdio MCP server."""
    server = {"type": "stdio", "command": python, "args": ["-m", "memdir.llm.relay_mcp", socket]}
    return json.dumps({"mcpServers": {SERVER_NAME: server}})


def build_call(
    request: CompletionRequest,
    *,
    model: str,
    max_turns: int,
    budget_usd: float | None = None,
    relay: str | None = None,
    tools: Sequence[ToolSpec] = (),
) -> ChildCall:
    """The child invocation for ``request``; ``relay`` is the ``--mcp-config`` JSON when the
    request's ``tools`` are served by the relay."""
    args = ["-p", "--output-format", "stream-json", "--verbose", "--model", model]
    args += ["--tools", "", "--setting-sources", "", "--strict-mcp-config"]
    args += ["--no-session-persistence", "--max-turns", str(max_turns)]
    args += ["--system-prompt", request.system_text]
    if relay is not None and tools:
        args += ["--mcp-config", relay]
        args += ["--allowedTools", ",".join(host_tool_name(t.name) for t in tools)]
    if request.json_schema is not None:
        args += ["--json-schema", json.dumps(request.json_schema)]
    if budget_usd is not None:
        args += ["--max-budget-usd", f"{max(budget_usd, 0.0):.4f}"]
    return ChildCall(args, render_prompt(request.messages))


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: the caller's (so auth works as the host has it) plus the guard."""
    out = {k: v for k, v in env.items() if k not in DROPPED_ENV}
    out.update(CHILD_ENV)
    return out


# -- reading the stream ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallCost:
    """What one CLI call cost, as the CLI reported it."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    turns: int = 0
    duration_ms: float = 0.0


def _block(raw: Mapping[str, Any]) -> Block | None:
    kind = raw.get("type")
    if kind == "text":
        return TextBlock(str(raw.get("text", "")))
    if kind == "tool_use":
        args = raw.get("input")
        return ToolUseBlock(
            id=str(raw.get("id", "")),
            name=memdir_tool_name(str(raw.get("name", ""))),
            input=dict(args) if isinstance(args, dict) else {},
        )
    if kind == "tool_result":
        content = raw.get("content", "")
        if isinstance(content, list):
            content = "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        return ToolResultBlock(
            str(raw.get("tool_use_id", "")), str(content), bool(raw.get("is_error", False))
        )
    return None  # thinking and other blocks are the child's business


def message_from_event(event: Mapping[str, Any]) -> Message | None:
    """Our ``Message`` for an ``assistant``/``user`` stream event (None for anything else)."""
    role = event.get("type")
    body = event.get("message")
    if role not in ("assistant", "user") or not isinstance(body, dict):
        return None
    content = body.get("content")
    if isinstance(content, str):
        return Message(role, content)
    blocks = [b for raw in content or [] if isinstance(raw, dict) and (b := _block(raw))]
    return Message(role, blocks)


def usage_from(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()

    def n(key: str) -> int:
        value = raw.get(key)
        return int(value) if isinstance(value, int | float) else 0

    return Usage(
        input_tokens=n("input_tokens"),
        output_tokens=n("output_tokens"),
        cache_read_tokens=n("cache_read_input_tokens"),
        cache_write_tokens=n("cache_creation_input_tokens"),
    )


def cost_from(result: Mapping[str, Any]) -> CallCost:
    cost = result.get("total_cost_usd")
    duration = result.get("duration_ms")
    turns = result.get("num_turns")
    return CallCost(
        usage=usage_from(result.get("usage")),
        cost_usd=float(cost) if isinstance(cost, int | float) else 0.0,
        turns=int(turns) if isinstance(turns, int) else 0,
        duration_ms=float(duration) if isinstance(duration, int | float) else 0.0,
    )


def retry_failure(event: Mapping[str, Any]) -> HostModelUnavailableError | None:
    """An ``api_retry`` event that no retry can fix (auth): stop now instead of waiting."""
    if (
        event.get("type") == "system"
        and event.get("subtype") == "api_retry"
        and event.get("error_status") in AUTH_STATUSES
    ):
        return HostModelUnavailableError(
            f"{NOT_LOGGED_IN}: the host API refused the credentials "
            f"({event.get('error_status')} {event.get('error', '')})".strip()
        )
    return None


def result_error(result: Mapping[str, Any]) -> ProviderError | None:
    """The error a final ``result`` event reports, or None when it succeeded."""
    subtype = str(result.get("subtype", ""))
    if not result.get("is_error") and subtype == "success":
        return None
    text = " ".join(str(result.get("result") or "").split())[:200]
    if "not logged in" in text.lower() or "/login" in text:
        return HostModelUnavailableError(f"{NOT_LOGGED_IN} (run `claude` once and log in)")
    if subtype == "error_max_turns":
        return None  # the caller reads the turns it got; a bound is not a failure
    if subtype == "error_max_budget_usd":
        return HostModelUnavailableError("the call reached its --max-budget-usd bound")
    status = result.get("api_error_status")
    detail = f" (API status {status})" if status else ""
    return HostModelUnavailableError(f"the host CLI failed{detail}: {text or subtype}")


def completion_from(
    messages: Sequence[Message], result: Mapping[str, Any], request: CompletionRequest
) -> Completion:
    """The reply of a tool-less call: the final text, or the schema's structured output."""
    cost = cost_from(result)
    structured = result.get("structured_output")
    if request.json_schema is not None:
        if structured is None:
            raise InvalidOutputError("the host CLI returned no structured output for the schema")
        return Completion(text=json.dumps(structured), parsed_json=structured, usage=cost.usage)
    text = result.get("result")
    if not isinstance(text, str):
        text = next((m.text for m in reversed(messages) if m.role == "assistant"), "")
    return Completion(text=text, usage=cost.usage)


__all__ = [
    "CHILD_ENV",
    "CHILD_ENV_FLAG",
    "CallCost",
    "ChildCall",
    "build_call",
    "child_env",
    "completion_from",
    "cost_from",
    "mcp_config",
    "message_from_event",
    "render_prompt",
    "result_error",
    "retry_failure",
    "usage_from",
]
