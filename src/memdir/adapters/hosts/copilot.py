"""GitHub Copilot CLI's dialect: camelCase hook JSON, top-level context, an event-log transcript.

Facts (``docs/hosts.md``, checked in the real CLI 1.0.102 by ``tests/realhost``):
- command hooks are ``{"type": "command", "bash": "…", "timeoutSec": n}`` listed under the event
  (no group): in ``<repo>/.github/hooks/*.json`` (``{"version": 1, "hooks": {…}}``; run only in
  a trusted folder) or under ``hooks`` in ``<copilot home>/settings.json`` (``$COPILOT_HOME``,
  else ``~/.copilot``; no trust step). MCP servers: ``<copilot home>/mcp-config.json`` and
  the project's ``.github/mcp.json`` (``{"mcpServers": {name: {"type": "local", …}}}``);
- the input is camelCase: ``sessionId``, ``timestamp`` (epoch milliseconds), ``cwd``, and per
  event ``source`` (``sessionStart``: new | resume | startup), ``prompt``
  (``userPromptSubmitted``), ``transcriptPath`` (``agentStop``, ``preCompact`` only),
  ``reason`` (``sessionEnd``);
- context reaches the model only as a **top-level** ``{"additionalContext": "…"}`` (Claude
  Code's ``hookSpecificOutput`` is dropped without a word): a prompt's becomes a
  ``<system_reminder>`` in the stored user message; a session start's is a user message at the
  head of the running process's context only, so a ``--continue`` starts without it
  (``start_kept``);
- ``agentStop`` ends each turn; ``copilot -p`` also fires ``sessionEnd`` per run;
  ``preCompact`` can only be told of a compaction, nothing follows it: the session's
  ``events.jsonl`` records ``session.compaction_complete``, which the next prompt reads
  (:func:`compactions`);
- the transcript is ``<copilot home>/session-state/<sessionId>/events.jsonl``: ``user.message``
  (``content``), ``assistant.message`` (``content``, ``toolRequests``),
  ``tool.execution_complete`` (``toolCallId``, ``success``, ``result.content``) among hook,
  usage and model records.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Target, hook_command
from memdir.adapters.hooks.hookio import (
    HookInput,
    check_event_name,
    clip,
    optional_str,
    session_id,
)
from memdir.adapters.hosts.host_files import entry, jsonl_records

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect, Locations
    from memdir.transcripts import Entry

EVENTS: dict[str, str] = {
    "session-start": "sessionStart",
    "user-prompt-submit": "userPromptSubmitted",
    "stop": "agentStop",
    "pre-compact": "preCompact",
    "session-end": "sessionEnd",
}
HOOK_TIMEOUTS = {  # seconds
    "session-start": 30,
    "user-prompt-submit": 15,
    "stop": 15,
    "pre-compact": 60,
    "session-end": 15,
}
_CONTEXT_EVENTS = ("session-start", "user-prompt-submit")
_SOURCES = {"new": "startup", "startup": "startup", "resume": "resume"}


def copilot_home(env: Mapping[str, str], home: Path | None = None) -> Path:
    """``$COPILOT_HOME`` when set, else ``~/.copilot``."""
    custom = env.get("COPILOT_HOME")
    if custom:
        return Path(custom)
    return (home or Path(env.get("HOME") or Path.home())) / ".copilot"


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    obj = dict(body)
    check_event_name(obj, event, EVENTS.get(event))
    stamp = obj.get("timestamp")
    source = optional_str(obj, "source")
    return HookInput(
        event=event,
        session_id=session_id(obj, "sessionId"),
        transcript_path=optional_str(obj, "transcriptPath"),
        cwd=optional_str(obj, "cwd"),
        prompt=optional_str(obj, "prompt"),
        source=_SOURCES.get(source, source) if source is not None else None,
        trigger=optional_str(obj, "trigger"),
        reason=optional_str(obj, "reason"),
        timestamp=str(stamp)[:64] if isinstance(stamp, (int, str)) else None,
    )


def render(event: str, context: str) -> str:
    if not context or event not in _CONTEXT_EVENTS:
        return ""
    return json.dumps({"additionalContext": clip(context)}, ensure_ascii=False)


# -- transcripts --------------------------------------------------------------------------------


def _convert(record: Mapping[str, Any]) -> Entry | None:
    kind, data, ident = record.get("type"), record.get("data"), record.get("id")
    if not isinstance(data, dict) or not isinstance(ident, str):
        return None
    stamp = record.get("timestamp")
    if kind == "user.message":
        text = data.get("content")  # the user's words; transformedContent adds hooks' context
        if isinstance(text, str) and text.strip():
            return entry("user", ident, stamp, [{"type": "text", "text": text.strip()}])
    elif kind == "assistant.message":
        blocks: list[dict[str, Any]] = []
        text = data.get("content")
        if isinstance(text, str) and text.strip():
            blocks.append({"type": "text", "text": text.strip()})
        calls = data.get("toolRequests")
        for n, call in enumerate(calls if isinstance(calls, list) else []):
            if isinstance(call, dict):
                args = call.get("arguments")
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": str(call.get("toolCallId") or f"{ident}-call-{n}"),
                        "name": str(call.get("name") or ""),
                        "input": args if isinstance(args, dict) else {},
                    }
                )
        if blocks:
            return entry("assistant", ident, stamp, blocks)
    elif kind == "tool.execution_complete":
        result = data.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": str(data.get("toolCallId") or ident),
            "content": content if isinstance(content, str) else json.dumps(content),
        }
        if data.get("success") is False:
            block["is_error"] = True
        return entry("user", ident, stamp, [block])
    return None


def read_events(path: Path) -> list[Entry]:
    """A Copilot CLI ``events.jsonl`` as memdir's entries ([] when unreadable or empty)."""
    return [e for e in map(_convert, jsonl_records(path)) if e is not None]


def compactions(path: Path) -> int:
    """How many compactions the session's event log records as applied."""
    count = 0
    for record in jsonl_records(path):
        data = record.get("data")
        if record.get("type") == "session.compaction_complete" and isinstance(data, dict):
            count += data.get("success") is not False
    return count


def trusted(project_root: Path, home: Path) -> bool:
    """Whether ``trustedFolders`` in Copilot CLI's ``config.json`` holds the project or a
    directory above it. The CLI writes ``//`` comment lines above the JSON."""
    try:
        text = (home / "config.json").read_text("utf-8")
        lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
        value = json.loads("\n".join(lines))
    except (OSError, ValueError, RecursionError):
        return False
    folders = value.get("trustedFolders") if isinstance(value, dict) else None
    root = os.path.realpath(project_root)
    for folder in folders if isinstance(folders, list) else []:
        if isinstance(folder, str) and folder:
            real = os.path.realpath(folder)
            if root == real or root.startswith(real.rstrip(os.sep) + os.sep):
                return True
    return False


# -- the dialect --------------------------------------------------------------------------------


class Copilot:
    name = "copilot"
    title = "GitHub Copilot CLI"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = "copilot -p"
    model_provider: str | None = "copilot"  # memdir.llm.copilot_cli
    model_note = (
        "Note: Copilot CLI gives its hooks neither COPILOT_PROVIDER_* nor API keys, so memdir's "
        "model runs on your GitHub login (or GH_TOKEN); with only a BYOK provider in the "
        "environment it falls back offline (`memdir hook log` says why)."
    )
    start_kept = False  # a session start's context lives in one process's context

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return render(event, context)

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [copilot_home(env) / "session-state"]

    def session_transcript(self, session: str, env: Mapping[str, str]) -> Path | None:
        """Where the session's events are: prompt hooks are not told (``agentStop`` is)."""
        path = copilot_home(env) / "session-state" / session / "events.jsonl"
        return path if path.is_file() else None

    def unattended(self, env: Mapping[str, str]) -> bool:
        return False  # a hook is told nothing about a headless run

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return read_events(path)

    def compactions(self, path: Path) -> int:
        return compactions(path)

    def project_transcripts(self, env: Mapping[str, str], project_root: Path) -> list[Path]:
        from memdir.adapters.hosts.sessions import copilot_sessions

        return copilot_sessions(copilot_home(env) / "session-state", project_root)

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        if scope == "project":
            return [
                Target(
                    loc.project_root / ".github" / "hooks" / "memdir.json",
                    "hooks",
                    fields={"version": 1},
                ),
                Target(loc.project_root / ".github" / "mcp.json", "mcp", ("mcpServers",)),
            ]
        home = copilot_home(loc.env, loc.home)
        return [
            Target(home / "settings.json", "hooks"),
            Target(home / "mcp-config.json", "mcp", ("mcpServers",)),
        ]

    def mcp_entry(self, command: Sequence[str]) -> dict[str, Any]:
        return {
            "type": "local",
            "command": command[0],
            "args": [*command[1:], "mcp"],
            "tools": ["*"],
        }

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        prefix = shlex.join(command)
        return [
            HookSpec(
                host_name,
                hook_command(prefix, self.name, word),
                HOOK_TIMEOUTS[word],
                flat=True,
                keys=("bash", "timeoutSec"),
            )
            for word, host_name in EVENTS.items()
        ]

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        hooks_file = self.install_targets("project", loc)[0].path
        if not hooks_file.is_file() or trusted(loc.project_root, copilot_home(loc.env, loc.home)):
            return []
        return [
            {
                "kind": "copilot-folder-untrusted",
                "path": str(hooks_file),
                "detail": f"Copilot CLI runs {loc.project_root}/.github/hooks only in a trusted "
                "folder: start `copilot` there and trust the folder (or run it once with "
                "--trust-folder)",
            }
        ]

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        if scope == "project":
            return [
                "Copilot CLI runs a repository's .github/hooks and .github/mcp.json only in a "
                "trusted folder: trust the project when `copilot` asks (or start it once with "
                "--trust-folder); `memdir install copilot --user` needs no trust step."
            ]
        return []


DIALECT: Dialect = Copilot()  # mypy checks the class against the protocol

__all__ = ["DIALECT", "EVENTS", "Copilot", "compactions", "copilot_home", "parse", "read_events"]
