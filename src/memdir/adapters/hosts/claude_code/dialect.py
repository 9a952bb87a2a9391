"""Claude Code's dialect: its hook JSON, its transcripts (memdir's own shape), its settings files.

Facts (``shared/spec/claude-code-hooks.md``, checked in the real CLI by ``tests/realhost``):
- every hook gets ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name`` on stdin;
  ``SessionStart`` adds ``source`` (startup | resume | clear | compact), ``PreCompact``
  ``trigger``, ``SessionEnd`` ``reason``, a sub-agent's hooks ``agent_id``;
- context reaches the model only inside ``hookSpecificOutput.additionalContext`` (the host
  ignores it at the top level) and is cut at 10,000 characters; ``systemMessage`` is shown to
  the user;
- hooks live in ``settings.json`` (user: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``; project:
  ``<project>/.claude``), MCP servers in ``~/.claude.json`` or ``<project>/.mcp.json``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Target, hook_command
from memdir.adapters.hooks.hookio import (
    HookInput,
    clip,
    standard_input,
)

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
HOOK_TIMEOUTS = {  # seconds
    "session-start": 30,
    "user-prompt-submit": 15,
    "stop": 15,
    "pre-compact": 60,
    "session-end": 15,
}
# No hook is installed ``async``: in ``claude -p`` the host kills an async hook still running
# when the session ends and then waits ~1.5 s, longer than memdir's hooks take. ``stop`` and
# ``session-end`` answer at once instead: their work runs in detached workers.
_MATCHED = ("SessionStart", "PreCompact", "SessionEnd")


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    return standard_input(event, body, EVENTS)


def context_output(event: str, context: str, *, system_message: str | None = None) -> str:
    """The JSON line that adds ``context`` to the model's context (and shows a notice)."""
    payload: dict[str, Any] = {}
    if context:
        payload["hookSpecificOutput"] = {
            "hookEventName": EVENTS[event],
            "additionalContext": clip(context),
        }
    if system_message:
        payload["systemMessage"] = system_message
    return json.dumps(payload, ensure_ascii=False) if payload else ""


def projects_dir(env: Mapping[str, str]) -> Path:
    """The host's transcripts: ``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude/projects``."""
    config = env.get("CLAUDE_CONFIG_DIR")
    base = Path(config) if config else Path(env.get("HOME") or Path.home()) / ".claude"
    return base / "projects"


class ClaudeCode:
    name = "claude-code"
    title = "Claude Code"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = "claude -p"
    model_provider: str | None = "claude-code"

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return context_output(event, context, system_message=notice)

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [projects_dir(env)]

    def unattended(self, env: Mapping[str, str]) -> bool:
        return env.get("CLAUDE_CODE_SESSION_ATTENDED", "").strip() == "0"  # -p and the SDK

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return None  # memdir's transcript shape is Claude Code's

    def project_transcripts(self, env: Mapping[str, str], project_root: Path) -> list[Path]:
        from memdir.adapters.hosts.sessions import claude_code_transcripts

        return claude_code_transcripts(projects_dir(env), project_root)

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        if scope == "project":
            return [
                Target(loc.project_root / ".claude" / "settings.json", "hooks"),
                Target(loc.project_root / ".mcp.json", "mcp", ("mcpServers",)),
            ]
        # Claude Code keeps user MCP servers in ~/.claude.json (inside CLAUDE_CONFIG_DIR if set)
        default = loc.claude_config_dir == loc.home / ".claude"
        user_json = loc.home / ".claude.json" if default else loc.claude_config_dir / ".claude.json"
        return [
            Target(loc.claude_config_dir / "settings.json", "hooks"),
            Target(user_json, "mcp", ("mcpServers",)),
        ]

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        prefix = shlex.join(command)
        return [
            HookSpec(
                host_name,
                hook_command(prefix, self.name, word),
                HOOK_TIMEOUTS[word],
                matcher="" if host_name in _MATCHED else None,
            )
            for word, host_name in EVENTS.items()
        ]

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        return []  # memdir doctor's plugin checks (.duplicates) run for every user

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        if scope == "project":
            return [
                "Claude Code asks once to approve the project's .mcp.json servers; hooks in "
                ".claude/settings.json run without a prompt."
            ]
        return []


DIALECT: Dialect = ClaudeCode()  # mypy checks the class against the protocol

__all__ = ["DIALECT", "EVENTS", "HOOK_TIMEOUTS", "ClaudeCode", "context_output", "parse"]
