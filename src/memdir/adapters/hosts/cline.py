"""Cline CLI's dialect: an SDK plugin (its file hooks cannot add context), its message files.

Facts (``docs/hosts.md``, checked in the real CLI 3.0.65 by ``tests/realhost``):
- file hooks (``.clinerules/hooks/<Event>``) do not inject in 3.0: headless, only ``TaskStart``
  and ``TaskComplete`` fire, detached, their output ignored; ``UserPromptSubmit`` never fires.
  An SDK plugin does: ``.cline/plugins/<name>.js`` (project) or ``<cline dir>/plugins/``
  (``$CLINE_DIR``, else ``~/.cline``) exporting ``{name, manifest: {capabilities: ["hooks"]},
  hooks: {beforeRun, afterRun}}``. ``beforeRun``'s ``{appendContext}`` arrives once per run as a
  ``<hook_context source="RunStart">`` user message, kept in the session. memdir writes one plugin
  it owns whole (:mod:`.cline_plugin`); no trust prompt;
- a plugin's context is the run's ``snapshot`` (``conversationId``, ``messages``: ``{id, role,
  content: [parts]}`` with ``text``, ``reasoning``, ``tool-call`` and ``tool-result`` parts;
  the user's words inside ``<user_input mode="act">``); the plugin writes them to
  ``<memdir home>/cline/sessions/<conversation>.json``, which memdir reads;
- nothing is told to a plugin at a compaction or at a session's end; continuing a session
  needs a TTY (headless, every ``cline "…"`` is a new session). Cline's MCP servers are set in
  its own settings UI: memdir adds none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Target
from memdir.adapters.hooks.hookio import HookInput, clip, standard_input
from memdir.adapters.hosts.host_files import entry, refuse_second_scope
from memdir.errors import MemdirError

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect, Locations
    from memdir.transcripts import Entry

EVENTS: dict[str, str] = {
    "session-start": "sessionStart",
    "user-prompt-submit": "beforeRun",
    "stop": "afterRun",
}
_CONTEXT_EVENTS = ("session-start", "user-prompt-submit")
_USER_INPUT = re.compile(r"^\s*<user_input[^>]*>(.*)</user_input>\s*$", re.DOTALL)
MAX_SESSION_BYTES = 50 * 1024 * 1024


def cline_dir(env: Mapping[str, str], home: Path | None = None) -> Path:
    """``$CLINE_DIR`` when set, else ``~/.cline``."""
    custom = env.get("CLINE_DIR")
    if custom:
        return Path(custom)
    return (home or Path(env.get("HOME") or Path.home())) / ".cline"


def transcript_dir(env: Mapping[str, str]) -> Path:
    """Where the plugin writes each conversation's messages."""
    from memdir.config import memdir_home_from_env

    return memdir_home_from_env(env) / "cline" / "sessions"


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    return standard_input(event, body, EVENTS)


def render(event: str, context: str) -> str:
    if not context or event not in _CONTEXT_EVENTS:
        return ""
    return json.dumps({"additionalContext": clip(context)}, ensure_ascii=False)


# -- the messages -------------------------------------------------------------------------------


def _text(part: Mapping[str, Any]) -> str | None:
    text = part.get("text")
    if part.get("type") != "text" or not isinstance(text, str):
        return None
    if text.lstrip().startswith("<hook_context"):
        return None  # a plugin's context (memdir's own) is never the user's words
    found = _USER_INPUT.match(text)
    return (found.group(1) if found else text).strip() or None


def _output(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _convert(message: Mapping[str, Any], n: int) -> Entry | None:
    role, ident = message.get("role"), str(message.get("id") or f"message-{n}")
    content = message.get("content")
    parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
    blocks: list[dict[str, Any]] = []
    for k, part in enumerate(parts):
        text = _text(part)
        if text is not None:
            blocks.append({"type": "text", "text": text})
        elif part.get("type") == "tool-call" and role == "assistant":
            args = part.get("input")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(part.get("toolCallId") or f"{ident}-call-{k}"),
                    "name": str(part.get("toolName") or ""),
                    "input": args if isinstance(args, dict) else {},
                }
            )
        elif part.get("type") == "tool-result":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(part.get("toolCallId") or f"{ident}-result-{k}"),
                "content": _output(part.get("output")),
            }
            if part.get("isError") is True:
                result["is_error"] = True
            blocks.append(result)
    if not blocks or role not in ("user", "assistant", "tool"):
        return None
    kind = "assistant" if role == "assistant" else "user"
    stamp = message.get("createdAt", message.get("ts"))
    return entry(kind, ident, str(stamp) if isinstance(stamp, (int, str)) else "", blocks)


def read_messages(path: Path) -> list[Entry]:
    """A ``{"messages": [...]}`` file (the plugin's, or Cline's own ``<id>.messages.json``) as
    memdir's entries ([] when unreadable)."""
    from memdir.pathsafe import read_regular

    try:
        value = json.loads(read_regular(path, limit=MAX_SESSION_BYTES).decode("utf-8"))
    except (MemdirError, OSError, ValueError, RecursionError):
        return []
    messages = value.get("messages") if isinstance(value, dict) else None
    listed = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    return [e for n, m in enumerate(listed) if (e := _convert(m, n)) is not None]


# -- the dialect --------------------------------------------------------------------------------


class Cline:
    name = "cline"
    title = "Cline CLI"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = "cline --json"
    model_provider: str | None = "cline"  # memdir.llm.cline_cli

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return render(event, context)

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [transcript_dir(env), cline_dir(env) / "data" / "sessions"]

    def unattended(self, env: Mapping[str, str]) -> bool:
        return False  # a plugin is told nothing about a headless run

    def project_transcripts(self, env: Mapping[str, str], project_root: Path) -> list[Path]:
        from memdir.adapters.hosts.sessions import cline_sessions

        return cline_sessions(cline_dir(env) / "data" / "sessions", project_root)

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return read_messages(path)

    def plugin_path(self, scope: str, loc: Locations) -> Path:
        base = loc.project_root / ".cline" if scope == "project" else cline_dir(loc.env, loc.home)
        return base / "plugins" / "memdir.js"

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        return [Target(self.plugin_path(scope, loc), "file")]

    def file_text(self, target: Target, command: Sequence[str], loc: Locations) -> str:
        from memdir.adapters.hosts.cline_plugin import render_plugin

        return render_plugin(command, EVENTS, transcript_dir(loc.env))

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        return []  # the plugin runs memdir; no config file lists hooks

    def check_install(self, scope: str, loc: Locations) -> None:
        """One plugin per Cline: with both, every run would be forwarded twice."""
        refuse_second_scope(self.title, self.name, scope, loc, self.plugin_path)

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        return []

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        return [
            "Cline's file hooks (.clinerules/hooks) cannot add context in Cline 3.0, so memdir "
            "installs an SDK plugin instead; Cline loads it at its next run, without a prompt.",
            "Cline tells a plugin nothing at a compaction or at a session's end: the session "
            "notes are not put back after Cline compacts, and `memdir dream` runs when you "
            "start it (or from another host's session end). memdir's MCP server is added in "
            "Cline's own MCP settings, if you want its tools.",
        ]


DIALECT: Dialect = Cline()  # mypy checks the class against the protocol

__all__ = ["DIALECT", "EVENTS", "Cline", "cline_dir", "parse", "read_messages", "transcript_dir"]
