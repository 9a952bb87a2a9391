"""Cursor's dialect (the IDE's agent and ``cursor-agent``): its hook JSON, its JSONL agent
transcripts, ``hooks.json`` and ``mcp.json``.

Facts, from Cursor's hooks documentation (no Cursor binary runs here: it is in no package
registry this project can install from; the tests use fixtures in the documented shapes):
- ``hooks.json`` (user ``~/.cursor``, project ``<repo>/.cursor``; both run, with enterprise and
  team ones) is ``{"version": 1, "hooks": {"<event>": [{"command", "timeout"}]}}``: the hook
  itself under the event, no group; ``timeout`` in seconds; exit 2 blocks, so memdir never
  exits 2 (:func:`~memdir.adapters.hooks.runner.run_event` always exits 0);
- every input carries ``conversation_id``, ``generation_id``, ``hook_event_name``,
  ``workspace_roots``, ``transcript_path`` (null when transcripts are off) and optionally
  ``model``, ``cursor_version``, ``user_email``; the hook's own cwd is not the workspace, so
  memdir's cwd is ``workspace_roots[0]``;
- ``sessionStart`` (``session_id``, ``is_background_agent``, ``composer_mode``) may answer
  ``additional_context``: the one place a hook adds context. ``beforeSubmitPrompt`` (``prompt``,
  ``attachments``) may only answer ``continue``/``user_message``, so there is **no recall per
  prompt**: memdir does not install it (a process per prompt for nothing). What stands in:
  memories relevant to the repository's current work at session start
  (:mod:`~memdir.adapters.hooks.work_recall`), the always-applied rules file
  (:mod:`.cursor_rules`) and the MCP server's ``memory_recall``;
- ``stop`` (``status``, ``loop_count``) ends each agent turn: extraction; ``preCompact``
  (``trigger``, ``context_usage_percent``, ...) can add nothing: the notes are updated;
  ``sessionEnd`` (``session_id``, ``reason``, ``duration_ms``) is fire-and-forget;
- the transcript (``~/.cursor/projects/<slug>/agent-transcripts/...jsonl``) has one
  ``{"role", "message": {"content": [blocks]}}`` per line, no ids nor times; the user's words
  are inside ``<user_query>`` tags, beside Cursor's own context (``<user_info>``, attached files).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Locations, Target, hook_command
from memdir.adapters.hooks.hookio import (
    HookInput,
    check_event_name,
    clip,
    optional_str,
    session_id,
)
from memdir.errors import HookInputError, InstallError

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect
    from memdir.adapters.hooks.handlers import HookContext
    from memdir.transcripts import Entry

EVENTS: dict[str, str] = {
    "session-start": "sessionStart",
    "stop": "stop",
    "pre-compact": "preCompact",
    "session-end": "sessionEnd",
}
HOOK_TIMEOUTS = {"session-start": 30, "stop": 15, "pre-compact": 60, "session-end": 15}  # s
MAX_READ_BYTES = 50 * 1024 * 1024
_NAMESPACE = uuid.UUID("0b7f6a52-3c1e-4d8b-9e0f-2a6c4d1b8e93")  # memdir's: stable entry uuids
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_TAGGED = re.compile(r"<([a-z_]+)>.*?</\1>\s*", re.DOTALL)  # Cursor's own context blocks


def cursor_home(env: Mapping[str, str], home: Path | None = None) -> Path:
    return (home or Path(env.get("HOME") or Path.home())) / ".cursor"


def _workspace(body: dict[str, Any]) -> str | None:
    roots = body.get("workspace_roots")
    if roots is None:
        return optional_str(body, "cwd")
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise HookInputError("'workspace_roots' must be a list of strings")
    return roots[0] if roots else optional_str(body, "cwd")


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    """memdir's event from Cursor's JSON; the conversation id names the session (every event
    carries it; ``session_id`` only some)."""
    obj = dict(body)
    if event not in EVENTS:
        raise HookInputError(f"Cursor has no hook memdir uses for {event!r}")
    check_event_name(obj, event, EVENTS[event])
    key = "conversation_id" if obj.get("conversation_id") is not None else "session_id"
    return HookInput(
        event=event,
        session_id=session_id(obj, key),
        transcript_path=optional_str(obj, "transcript_path"),
        cwd=_workspace(obj),
        source="startup" if event == "session-start" else None,  # Cursor sends no source
        trigger=optional_str(obj, "trigger"),
        reason=optional_str(obj, "reason"),
    )


def render(event: str, context: str) -> str:
    """``{"additional_context": ...}`` at session start; nothing else reaches the model."""
    if not context or event != "session-start":
        return ""
    return json.dumps({"additional_context": clip(context)}, ensure_ascii=False)


# -- the transcript ---------------------------------------------------------------------------


def _user_text(text: str) -> str:
    """The user's own words: inside ``<user_query>``, else the text without Cursor's blocks."""
    asked = _QUERY.findall(text)
    return "\n".join(asked) if asked else _TAGGED.sub("", text).strip()


def _blocks(role: str, content: Any, key: str) -> list[dict[str, Any]]:
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
    out: list[dict[str, Any]] = []
    for n, part in enumerate(parts if isinstance(parts, list) else []):
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            text = _user_text(part["text"]) if role == "user" else part["text"].strip()
            if text:
                out.append({"type": "text", "text": text})
        elif kind == "tool_use" and role == "assistant":
            args = part.get("input")
            out.append(
                {
                    "type": "tool_use",
                    "id": str(part.get("id") or f"{key}-{n}"),
                    "name": str(part.get("name") or "tool"),
                    "input": args if isinstance(args, dict) else {"input": args},
                }
            )
        elif kind == "tool_result":
            result = part.get("content")
            out.append(
                {
                    "type": "tool_result",
                    "tool_use_id": str(part.get("tool_use_id") or ""),
                    "content": result if isinstance(result, str) else json.dumps(result),
                }
            )
    return out  # thinking and anything newer carry nothing memdir keeps


def read_transcript(path: Path, *, tail_bytes: int | None = None) -> list[Entry]:
    """memdir's entries from a Cursor transcript (the newest ``tail_bytes`` only, when given).
    A line's uuid comes from its byte offset: the file is only appended to, so the offset is
    the same whether it was read whole or from a tail."""
    from memdir.pathsafe import open_regular

    limit = min(tail_bytes or MAX_READ_BYTES, MAX_READ_BYTES)
    with open(open_regular(path), "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        start = max(0, size - limit)
        fh.seek(start)
        data = fh.read(limit)
    offset = start
    lines = data.split(b"\n")
    entries: list[Entry] = []
    for number, raw in enumerate(lines):
        at, offset = offset, offset + len(raw) + 1
        if number == 0 and start > 0:
            continue  # cut mid-line
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # a torn last line, or junk: skipped as memdir's own reader does
        if not isinstance(line, dict) or line.get("role") not in ("user", "assistant"):
            continue
        role = str(line["role"])
        message = line.get("message")
        key = f"{path.name}:{at}"
        content = message.get("content") if isinstance(message, Mapping) else None
        blocks = _blocks(role, content, key)
        if not blocks:
            continue
        if role == "assistant" and any(b["type"] == "tool_result" for b in blocks):
            role = "user"  # results go back to the model as the user's turn, as in Claude Code
        entries.append(
            {
                "type": role,
                "uuid": str(uuid.uuid5(_NAMESPACE, key)),
                "timestamp": str(line.get("timestamp") or ""),
                "message": {"role": role, "content": blocks},
            }
        )
    return entries


# -- the dialect ------------------------------------------------------------------------------


def _memdir_hooks(path: Path) -> list[str]:
    """memdir's hook commands in the JSON config at ``path`` ([] when none or unreadable; a
    FIFO there is refused, not waited on)."""
    from memdir.adapters.hooks.settings_merge import memdir_hook_commands
    from memdir.pathsafe import read_regular

    try:
        value = json.loads(read_regular(path, limit=4 * 1024 * 1024))
    except (OSError, ValueError, RecursionError):
        return []
    return memdir_hook_commands(value) if isinstance(value, dict) else []


def _claude_code_hooks(loc: Locations) -> bool:
    """memdir's hooks in a Claude Code settings file Cursor's third-party hooks would load."""
    claude = (loc.claude_config_dir, loc.project_root / ".claude")
    names = ("settings.json", "settings.local.json")
    return any(_memdir_hooks(d / name) for d in claude for name in names)


class Cursor:
    name = "cursor"
    title = "Cursor"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = None  # `cursor-agent -p` exists, but not here to test against
    model_provider: str | None = None  # background work: MEMDIR_MODEL, else offline rules
    recall_at_start = True  # no recall per prompt: the session start recalls on the work

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return render(event, context)

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [cursor_home(env) / "projects"]

    def unattended(self, env: Mapping[str, str]) -> bool:
        # the only recall is the session start's, and no later prompt would deliver what a
        # still-loading daemon finds afterwards: it waits for the load (under the hook timeout)
        return True

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return read_transcript(path, tail_bytes=tail_bytes)

    def after_event(self, hc: HookContext) -> str:
        """Every hook brings the rules file up to date with the memory dir."""
        from memdir.adapters.hosts.cursor_rules import refresh

        return refresh(hc.paths.project_root, hc.paths.entrypoint)

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        base = (
            loc.project_root / ".cursor" if scope == "project" else cursor_home(loc.env, loc.home)
        )
        return [
            Target(base / "hooks.json", "hooks", fields={"version": 1}),
            # no recall per prompt: the agent's memory_recall must find the index ready
            Target(base / "mcp.json", "mcp", ("mcpServers",), mcp_args=("--preload",)),
        ]

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        prefix = shlex.join(command)
        return [
            HookSpec(name, hook_command(prefix, self.name, word), HOOK_TIMEOUTS[word], flat=True)
            for word, name in EVENTS.items()
        ]

    def check_install(self, scope: str, loc: Locations) -> None:
        """Cursor runs the user's and the project's hooks both: memdir in the other scope's
        ``hooks.json`` would run every hook twice, so that install is refused."""
        other = "user" if scope == "project" else "project"
        path = self.install_targets(other, loc)[0].path
        if any("--host cursor" in c for c in _memdir_hooks(path)):
            raise InstallError(
                f"memdir's hooks are already installed in {path} (--{other}) — Cursor runs "
                "both files, so every hook would run twice; uninstall that one first"
            )

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        notes = [
            "Cursor has no hook that adds context to each prompt (beforeSubmitPrompt can only "
            "allow or block): memdir gives the memories at session start, keeps "
            ".cursor/rules/memdir.mdc (always applied, git-ignored through .git/info/exclude) "
            "current, and the agent recalls more through the memdir MCP server.",
            "Restart Cursor (or reload the window) so it reads hooks.json and mcp.json; "
            "Settings > Hooks lists memdir's four hooks and their output.",
        ]
        if _claude_code_hooks(loc):
            notes.append(
                "memdir's Claude Code hooks are installed too: keep Cursor's Settings > Features "
                "> Third-party skills off, or Cursor runs them beside these (twice the context "
                "and extraction)."
            )
        return notes

    def cleanup(self, project_root: Path) -> list[str]:
        """``memdir uninstall cursor``: this project's rules file and its exclude line."""
        from memdir.adapters.hosts.cursor_rules import remove

        return remove(project_root)

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        from memdir.adapters.hosts.cursor_rules import problems

        return problems(loc.project_root)


DIALECT: Dialect = Cursor()  # mypy checks the class against the protocol

__all__ = ["DIALECT", "EVENTS", "HOOK_TIMEOUTS", "Cursor", "parse", "read_transcript", "render"]
