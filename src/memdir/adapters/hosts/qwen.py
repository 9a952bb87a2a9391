"""Qwen Code's dialect: Claude Code's hook format in ``settings.json``, Gemini's message parts.

Facts (``docs/hosts.md``, checked in the real CLI 0.24 by ``tests/realhost``):
- hooks are Claude Code's (``SessionStart``, ``UserPromptSubmit``, ``Stop``, ``PreCompact``,
  ``SessionEnd``; snake_case input; ``hookSpecificOutput.additionalContext`` back), listed in
  ``settings.json`` (user ``$QWEN_HOME`` or ``~/.qwen``, project ``<repo>/.qwen``) beside
  ``mcpServers``; timeouts are milliseconds;
- ``UserPromptSubmit`` adds ``prompt_id`` and fires again, with the same id and an empty
  prompt, for each tool-result continuation of that prompt: memdir answers an id once
  (:attr:`~memdir.adapters.hooks.hookio.HookInput.turn`). Its context becomes a
  ``<qwen:user-prompt-submit-context>`` part of the user message, kept and resent on ``-c``;
- ``SessionStart`` context goes into the system prompt of the running process only: a resumed
  process (``qwen -c``) starts without it, so every session start is a new context
  (``start_kept``). After a compression the CLI fires ``SessionStart`` with ``source:
  compact`` and applies its context, as Claude Code does;
- the transcript (``<qwen home>/projects/<sanitised cwd>/chats/<session>.jsonl``) is a chain of
  ``{"uuid", "parentUuid", "type", "timestamp", "cwd", "message": {"role", "parts"}}``
  records: ``user``, ``assistant`` (text, ``thought`` and ``functionCall`` parts),
  ``tool_result`` (``functionResponse`` parts) and ``system`` (telemetry, snapshots);
- its own auto memory (on by default) keeps ``MEMORY.md`` and one file per memory under
  ``<qwen home>/projects/<slug>/memory/``: memdir coexists with it, and says how to switch it
  off (``memory.enableManagedAutoMemory``).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Target, hook_command
from memdir.adapters.hooks.hookio import HookInput, optional_str, standard_input
from memdir.adapters.hosts.claude_code.dialect import context_output
from memdir.adapters.hosts.host_files import entry, jsonl_records

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect, Locations
    from memdir.transcripts import Entry

EVENTS: dict[str, str] = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
HOOK_TIMEOUTS_MS = {
    "session-start": 30_000,
    "user-prompt-submit": 15_000,
    "stop": 15_000,
    "pre-compact": 60_000,
    "session-end": 15_000,
}
_MATCHED = ("SessionStart", "PreCompact", "SessionEnd")
_HOOK_PART = re.compile(r"^\s*<qwen:[a-z-]+-context>.*</qwen:[a-z-]+-context>\s*$", re.DOTALL)


def qwen_home(env: Mapping[str, str]) -> Path:
    """``$QWEN_HOME`` (the ``.qwen`` dir itself) when set, else ``~/.qwen``."""
    custom = env.get("QWEN_HOME")
    if custom:
        return Path(custom)
    return Path(env.get("HOME") or Path.home()) / ".qwen"


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    turn = optional_str(dict(body), "prompt_id") if event == "user-prompt-submit" else None
    return standard_input(event, body, EVENTS, turn=turn or None)


# -- transcripts --------------------------------------------------------------------------------


def _parts(message: Any) -> list[dict[str, Any]]:
    parts = message.get("parts") if isinstance(message, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _text(part: Mapping[str, Any]) -> str | None:
    text = part.get("text")
    if not isinstance(text, str) or part.get("thought") or _HOOK_PART.match(text):
        return None  # a hook's context (memdir's own) is never read back as the user's words
    return text.strip() or None


def _output(response: Any) -> str:
    reply = response.get("response") if isinstance(response, dict) else None
    if isinstance(reply, dict):
        value = reply.get("output", reply.get("error", reply))
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return ""


def _blocks(kind: str, ident: str, parts: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for n, part in enumerate(parts):
        text = _text(part)
        call, response = part.get("functionCall"), part.get("functionResponse")
        if text is not None:
            blocks.append({"type": "text", "text": text})
        elif kind == "assistant" and isinstance(call, dict):
            args = call.get("args")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(call.get("id") or f"{ident}-call-{n}"),
                    "name": str(call.get("name") or ""),
                    "input": args if isinstance(args, dict) else {},
                }
            )
        elif kind == "user" and isinstance(response, dict):
            reply = response.get("response")
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": str(response.get("id") or f"{ident}-result-{n}"),
                    "content": _output(response),
                    **({"is_error": True} if isinstance(reply, dict) and "error" in reply else {}),
                }
            )
    return blocks


def read_chat(path: Path) -> list[Entry]:
    """A Qwen Code chat file as memdir's entries ([] when unreadable or empty)."""
    out: list[Entry] = []
    for record in jsonl_records(path):
        kind = {"user": "user", "tool_result": "user", "assistant": "assistant"}.get(
            str(record.get("type"))
        )
        ident = record.get("uuid")
        if kind is None or not isinstance(ident, str):
            continue
        blocks = _blocks(kind, ident, _parts(record.get("message")))
        if blocks:
            out.append(entry(kind, ident, record.get("timestamp"), blocks))
    return out


# -- the dialect --------------------------------------------------------------------------------


class Qwen:
    name = "qwen"
    title = "Qwen Code"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = "qwen"
    model_provider: str | None = "qwen"  # memdir.llm.qwen_cli
    start_kept = False  # SessionStart context lives in one process's system prompt

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return context_output(event, context, system_message=notice) if context else ""

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [qwen_home(env) / "projects"]

    def unattended(self, env: Mapping[str, str]) -> bool:
        return False  # a hook is told nothing about a headless run

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return read_chat(path)

    def project_transcripts(self, env: Mapping[str, str], project_root: Path) -> list[Path]:
        from memdir.adapters.hosts.sessions import claude_code_transcripts

        return claude_code_transcripts(qwen_home(env) / "projects", project_root, within="chats")

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        if scope == "project":
            path = loc.project_root / ".qwen" / "settings.json"
        else:
            custom = loc.env.get("QWEN_HOME")
            path = (Path(custom) if custom else loc.home / ".qwen") / "settings.json"
        return [
            Target(path, "hooks"),
            Target(path, "mcp", ("mcpServers",), server={"trust": True}),
        ]

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        prefix = shlex.join(command)
        return [
            HookSpec(
                host_name,
                hook_command(prefix, self.name, word),
                HOOK_TIMEOUTS_MS[word],
                matcher="" if host_name in _MATCHED else None,
                name=f"memdir-{word}",
            )
            for word, host_name in EVENTS.items()
        ]

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        return []  # folder trust is off by default; settings hooks run without a review

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        return [
            "Qwen Code's own auto memory is on by default and keeps a MEMORY.md of its own "
            "beside memdir's: both reach the model. To keep one memory, switch Qwen's off with "
            '"memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false} in '
            "settings.json; `memdir import qwen` brings what it saved into memdir.",
            "The memdir MCP server is installed with `trust: true`: Qwen calls memdir's memory "
            "tools without asking each time; remove `trust` from mcpServers.memdir to be asked.",
        ]


DIALECT: Dialect = Qwen()  # mypy checks the class against the protocol

__all__ = ["DIALECT", "EVENTS", "HOOK_TIMEOUTS_MS", "Qwen", "parse", "qwen_home", "read_chat"]
