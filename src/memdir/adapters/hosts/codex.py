"""Codex CLI's dialect (``@openai/codex`` 0.171): its hook JSON, rollout transcripts and config.

Facts, each checked in the real CLI (``docs/hosts-codex-findings.md``, ``tests/realhost``):
- hooks live in ``hooks.json`` (``$CODEX_HOME`` or ``~/.codex``; a project's ``.codex/``, read
  only once the project is trusted) with Claude Code's nesting; timeouts are seconds, default
  600, SessionEnd's at most 3; every hook input and output schema is closed
  (``additionalProperties: false``), so an answer carries nothing but
  ``hookSpecificOutput.{hookEventName, additionalContext}`` (and ``systemMessage``);
- context from SessionStart and UserPromptSubmit reaches the model as a ``developer`` message;
  PreCompact cannot add any; a compaction drops earlier hook context and is followed by
  SessionStart with ``source: "compact"``, where memdir puts the notes back;
- a hook runs only after the user trusted it (``/hooks`` in the TUI), and ``codex exec`` skips
  untrusted ones silently: :mod:`.codex_trust` says which of memdir's are not trusted yet;
- MCP servers live in ``config.toml`` ``[mcp_servers.<name>]`` and get only HOME, LANG, PATH and
  TMPDIR of Codex's environment; ``codex exec`` runs a tool that writes only when the server's
  ``default_tools_approval_mode`` is ``approve``;
- the transcript is the rollout JSONL ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``
  (``transcript_path`` in every hook input; null with ``--ephemeral``), read here into memdir's
  entries: the user's own prompts (``content_item_kinds`` ``user.text``), the model's messages,
  its tool calls and their outputs — never Codex's harness text nor hook context (memdir's own
  injections must not come back as things the user said).
"""

from __future__ import annotations

import json
import os
import shlex
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Locations, Target, hook_command
from memdir.adapters.hooks.hookio import (
    HookInput,
    clip,
    standard_input,
)

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect
    from memdir.transcripts import Entry

EVENTS: dict[str, str] = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
HOOK_TIMEOUTS = {  # seconds; Codex clamps SessionEnd to 3 (memdir's answers at once)
    "session-start": 30,
    "user-prompt-submit": 15,
    "stop": 15,
    "pre-compact": 60,
    "session-end": 3,
}
_INJECTS = ("session-start", "user-prompt-submit")
MAX_READ_BYTES = 50 * 1024 * 1024
# memdir's tools write only inside the memory dir, through the store; without this `codex exec`
# refuses memory_save ("requires approval, but approval policy is never")
SERVER_EXTRA = {"default_tools_approval_mode": "approve", "startup_timeout_sec": 30}
_NAMESPACE = uuid.UUID("5f2b8f5e-7c1a-4a51-9d55-6b0c3d2e1a47")  # memdir's: stable entry uuids


def codex_home(env: Mapping[str, str], home: Path | None = None) -> Path:
    """``$CODEX_HOME``, else ``~/.codex``."""
    explicit = env.get("CODEX_HOME", "").strip()
    if explicit:
        return Path(explicit)
    return (home or Path(env.get("HOME") or Path.home())) / ".codex"


# how Codex's /hooks review and its spinner name each hook (it has no "name" field)
STATUS = {
    "session-start": "memdir: memory index",
    "user-prompt-submit": "memdir: recalling memories",
    "stop": "memdir: saving what the turn taught",
    "pre-compact": "memdir: session notes",
    "session-end": "memdir: session end",
}


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    return standard_input(event, body, EVENTS)


def render(event: str, context: str, notice: str | None) -> str:
    """Codex's closed output schema: only these keys, or the whole answer is a failure."""
    payload: dict[str, Any] = {}
    if context and event in _INJECTS:
        payload["hookSpecificOutput"] = {
            "hookEventName": EVENTS[event],
            "additionalContext": clip(context),
        }
    if notice:
        payload["systemMessage"] = notice
    return json.dumps(payload, ensure_ascii=False) if payload else ""


# -- the rollout ------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


def _kinds(payload: Mapping[str, Any]) -> list[str]:
    meta = payload.get("internal_chat_message_metadata_passthrough")
    kinds = meta.get("content_item_kinds") if isinstance(meta, Mapping) else None
    return [k for k in kinds if isinstance(k, str)] if isinstance(kinds, list) else []


def _user_text(payload: Mapping[str, Any]) -> str | None:
    """The text of a message the user typed, or None for Codex's own user-role text."""
    kinds = _kinds(payload)
    text = _text_of(payload.get("content"))
    if kinds:
        return text if all(k == "user.text" for k in kinds) else None
    # an older rollout without kinds: Codex's harness text is tagged
    stripped = text.lstrip()
    return None if stripped.startswith(("<environment_context>", "<user_instructions>")) else text


def _blocks(payload: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]] | None:
    """(role, content blocks) of one ``response_item``; None for what is not conversation."""
    kind = payload.get("type")
    if kind == "message":
        role = payload.get("role")
        if role == "user":
            text = _user_text(payload)
            return ("user", [{"type": "text", "text": text}]) if text else None
        if role == "assistant":
            text = _text_of(payload.get("content"))
            return ("assistant", [{"type": "text", "text": text}]) if text else None
        return None  # developer: Codex's instructions and every hook's context
    if kind in ("function_call", "custom_tool_call"):
        name = str(payload.get("name") or "tool")
        namespace = payload.get("namespace")
        if isinstance(namespace, str) and namespace:
            name = f"{namespace}__{name}"  # mcp__memdir + memory_save, as Claude Code names it
        raw = payload.get("arguments", payload.get("input"))
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            args = {"input": raw}
        block = {
            "type": "tool_use",
            "id": str(payload.get("call_id") or payload.get("id") or ""),
            "name": name,
            "input": args if isinstance(args, dict) else {"input": args},
        }
        return "assistant", [block]
    if kind in ("function_call_output", "custom_tool_call_output"):
        result = {
            "type": "tool_result",
            "tool_use_id": str(payload.get("call_id") or ""),
            "content": _text_of(payload.get("output")),
        }
        return "user", [result]
    return None  # reasoning, web search, ... carry nothing memdir keeps


def read_rollout(path: Path, *, tail_bytes: int | None = None) -> list[Entry]:
    """memdir's entries from a Codex rollout (the newest ``tail_bytes`` only, when given)."""
    from memdir.pathsafe import open_regular

    limit = min(tail_bytes or MAX_READ_BYTES, MAX_READ_BYTES)
    with open(open_regular(path), "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        start = max(0, size - limit)
        fh.seek(start)
        data = fh.read(limit)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # cut mid-line
    entries: list[Entry] = []
    session = path.name
    for number, raw in enumerate(lines):
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # a torn last line, or junk: skipped as memdir's own reader does
        if not isinstance(line, dict) or line.get("type") != "response_item":
            continue
        payload = line.get("payload")
        parsed = _blocks(payload) if isinstance(payload, Mapping) else None
        if parsed is None:
            continue
        role, content = parsed
        ordinal = line.get("ordinal")
        key = f"{session}:{ordinal if isinstance(ordinal, int) else f'@{start}:{number}'}"
        entry: Entry = {
            "type": role,
            "uuid": str(uuid.uuid5(_NAMESPACE, key)),
            "timestamp": str(line.get("timestamp") or ""),
            "message": {"role": role, "content": content},
        }
        meta = line.get("metadata")
        if isinstance(meta, Mapping) and meta.get("compaction_output"):
            entry["isCompactSummary"] = True  # the compaction's summary, not a model turn
        entries.append(entry)
    return entries


# -- the dialect ------------------------------------------------------------------------------


class Codex:
    name = "codex"
    title = "Codex CLI"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = "codex exec"
    model_provider: str | None = "codex"  # memdir.llm.codex_cli

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return render(event, context, notice)

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [codex_home(env) / "sessions"]

    def unattended(self, env: Mapping[str, str]) -> bool:
        return False  # nothing in a hook's input or environment tells `codex exec` apart

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return read_rollout(path, tail_bytes=tail_bytes)

    def project_transcripts(self, env: Mapping[str, str], project_root: Path) -> list[Path]:
        from memdir.adapters.hosts.sessions import codex_rollouts

        return codex_rollouts(codex_home(env) / "sessions", project_root)

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        base = loc.project_root / ".codex" if scope == "project" else codex_home(loc.env, loc.home)
        return [
            Target(base / "hooks.json", "hooks"),
            Target(base / "config.toml", "mcp-toml", ("mcp_servers",), SERVER_EXTRA),
        ]

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        prefix = shlex.join(command)
        return [
            HookSpec(
                host_name,
                hook_command(prefix, self.name, word),
                HOOK_TIMEOUTS[word],
                status=STATUS[word],
            )
            for word, host_name in EVENTS.items()
        ]

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        notes = [
            "Codex runs a hook only after you trust it: open `codex` here, type /hooks and "
            "trust the five memdir hooks (SessionStart, UserPromptSubmit, Stop, PreCompact, "
            "SessionEnd). Until then `codex exec` skips them without a word; `memdir doctor` "
            "says which are not trusted yet.",
        ]
        if scope == "project":
            notes.append(
                "Codex reads a project's .codex/ only once the project is trusted (the folder "
                "prompt when you first open `codex` here, or `codex exec --trust`)."
            )
        notes.append(
            "The MCP server is set to run memdir's tools without asking "
            "(default_tools_approval_mode = approve): they write only inside the memory dir."
        )
        return notes

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        from memdir.adapters.hosts.codex_trust import untrusted

        return untrusted(self, loc, codex_home(loc.env, loc.home))


DIALECT: Dialect = Codex()  # mypy checks the class against the protocol

__all__ = ["DIALECT", "EVENTS", "HOOK_TIMEOUTS", "Codex", "codex_home", "parse", "read_rollout"]
