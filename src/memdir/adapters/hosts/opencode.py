"""OpenCode's dialect (``opencode-ai`` 1.18): a JS plugin that forwards events, its messages.

Facts, each checked in the real CLI 1.18.33 (``tests/realhost/test_opencode_e2e.py``):
- OpenCode runs no shell hooks. It loads every ``*.js`` in ``.opencode/plugins/`` (a project's,
  read from the directory it starts in) and ``~/.config/opencode/plugins/`` (honouring
  ``XDG_CONFIG_HOME``) without asking; a plugin is a function returning hooks (the v1 API; the
  2.x API differs and does not load v1 plugins, so an install refuses 2.x);
- ``chat.message`` runs, awaited, before the user's message is saved: a text part the plugin adds
  (``synthetic: true``) is saved with the message and sent to the model with it, so recall
  reaches the request once and stays in the history like Claude Code's ``additionalContext``;
- events arrive on the plugin's ``event`` hook: ``session.created``, ``session.idle`` (a turn
  ended), ``session.compacted``, ``session.deleted``; ``experimental.session.compacting`` runs
  before the summariser and may add to its ``context``;
- sessions live in OpenCode's SQLite database; the plugin reads them with its own client
  (``client.session.messages``: ``[{info, parts}]``) and writes them as JSON, 0600, under
  :func:`transcript_dir` — the one place this dialect accepts a transcript from;
- MCP servers are ``mcp.<name> = {"type": "local", "command": [...]}`` in ``opencode.json``;
- a compaction (a turn that left more tokens than the model's context allows) is a user message
  with a ``compaction`` part, then the summary, then a synthetic "Continue …" message that no
  ``chat.message`` sees; the turns it summarised leave the context, memdir's blocks with them.
  memdir counts compactions in the session file (:func:`compactions`), so the next prompt — in
  this process or in a later ``opencode run --continue`` — gets the instructions, MEMORY.md and
  the session notes back.

What the plugin sends is memdir's own hook JSON (``session_id``, ``cwd``, ``prompt``,
``transcript_path``, ``source``, ``trigger``, ``reason``): it goes through the same checks as
every host's (:func:`~memdir.adapters.hooks.hookio.standard_input`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Locations, Target
from memdir.adapters.hooks.hookio import HookInput, clip, standard_input
from memdir.adapters.hosts.opencode_plugin import MARKER, render_plugin
from memdir.errors import InstallError, MemdirError

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect
    from memdir.transcripts import Entry

# memdir's words -> what OpenCode calls the moment the plugin forwards
EVENTS: dict[str, str] = {
    "session-start": "session.created",
    "user-prompt-submit": "chat.message",
    "stop": "session.idle",
    "pre-compact": "experimental.session.compacting",
    "session-end": "session.deleted",
}
_INJECTS = ("session-start", "user-prompt-submit")
PLUGIN_NAME = "memdir.js"
SUPPORTED = ((1, 18), (2, 0))  # [from, to): the v1 plugin API as 1.18 loads it
MAX_READ_BYTES = 50 * 1024 * 1024
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def unquote(text: str) -> str:
    """``text`` without the pair of double quotes ``opencode run "..."`` wraps a message in
    (1.18 quotes a message argument that has a space): what the user typed, for recall and
    extraction. A text with quotes of its own inside is left as it is."""
    inner = text[1:-1]
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in inner:
        return inner
    return text


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    inp = standard_input(event, body, EVENTS)  # agent_id: a sub-agent's session (its parent)
    return replace(inp, prompt=unquote(inp.prompt.strip())) if inp.prompt else inp


def render(event: str, context: str) -> str:
    """``{"context": ...}``, which the plugin adds to the message as a synthetic part."""
    if not context or event not in _INJECTS:
        return ""
    return json.dumps({"context": clip(context)}, ensure_ascii=False)


def transcript_dir(env: Mapping[str, str]) -> Path:
    """Where the plugin writes each session's messages (``<id>.json``)."""
    from memdir.config import memdir_home_from_env

    return memdir_home_from_env(env) / "opencode" / "sessions"


def plugin_info(env: Mapping[str, str]) -> dict[str, str]:
    """What the plugin needs to forward events itself: the daemon's socket, this build's
    fingerprint, where session files go (``memdir hook --host opencode plugin-info``)."""
    from memdir.adapters import recall_client
    from memdir.config import memdir_home_from_env

    return {
        "socket": str(recall_client.socket_path(memdir_home_from_env(env))),
        "fingerprint": recall_client.fingerprint(),
        "transcripts": str(transcript_dir(env)),
    }


def config_dir(env: Mapping[str, str], home: Path) -> Path:
    """``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``."""
    xdg = env.get("XDG_CONFIG_HOME", "")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else home / ".config") / "opencode"


# -- the messages ------------------------------------------------------------------------------


def _read(path: Path) -> bytes:
    from memdir.pathsafe import read_regular

    try:
        return read_regular(path, limit=MAX_READ_BYTES)
    except (MemdirError, OSError):
        return b""


def _load(path: Path, raw: bytes | None = None) -> list[dict[str, Any]]:
    try:
        value = json.loads((_read(path) if raw is None else raw).decode("utf-8"))
    except (ValueError, RecursionError):
        return []
    messages = value.get("messages") if isinstance(value, dict) else value
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _part_blocks(parts: Sequence[Any], role: str) -> tuple[list[dict[str, Any]], list[Any]]:
    blocks: list[dict[str, Any]] = []
    results: list[Any] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        text = part.get("text")
        # synthetic text is OpenCode's or memdir's own (file reads, recall): never the user's
        if kind == "text" and isinstance(text, str) and text.strip():
            if not part.get("synthetic") and not part.get("ignored"):
                blocks.append(
                    {
                        "type": "text",
                        "text": unquote(text.strip()) if role == "user" else text.strip(),
                    }
                )
        elif kind == "tool" and role == "assistant":
            raw_state = part.get("state")
            state: dict[str, Any] = raw_state if isinstance(raw_state, dict) else {}
            call = str(part.get("callID") or part.get("id") or "")
            args = state.get("input")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call,
                    "name": str(part.get("tool") or ""),
                    "input": args if isinstance(args, dict) else {},
                }
            )
            output = state.get("output", state.get("error", ""))
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": call,
                "content": output if isinstance(output, str) else json.dumps(output),
            }
            if state.get("status") == "error":
                result["is_error"] = True
            results.append(result)
    return blocks, results


def _stamp(info: Mapping[str, Any]) -> str:
    import datetime as dt

    created = info.get("time", {}).get("created") if isinstance(info.get("time"), dict) else None
    if not isinstance(created, int | float) or isinstance(created, bool):
        return ""
    try:
        return dt.datetime.fromtimestamp(created / 1000, dt.UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return ""


def compactions(path: Path) -> int:
    """How many compactions the plugin's session file records: OpenCode's compaction request is
    a user message with a ``compaction`` part. Counted from the file, not from an event the
    plugin saw, so a later ``opencode run --continue`` (a new process) still knows the session
    was compacted and gets the instructions, MEMORY.md and the notes back."""
    raw = _read(path)
    if b'"compaction"' not in raw:
        return 0  # the common case, asked on every prompt: no parse of the whole session
    count = 0
    for message in _load(path, raw):
        info, parts = message.get("info"), message.get("parts")
        if isinstance(info, dict) and info.get("role") == "user" and isinstance(parts, list):
            count += any(isinstance(p, dict) and p.get("type") == "compaction" for p in parts)
    return count


def read_messages(path: Path) -> list[Entry]:
    """The plugin's session file as memdir's entries ([] when unreadable): the user's own text,
    the model's text and tool calls with their results; compaction turns and summaries left out."""
    out: list[Entry] = []
    for message in _load(path):
        info, parts = message.get("info"), message.get("parts")
        if not isinstance(info, dict) or not isinstance(parts, list):
            continue
        role, ident = info.get("role"), info.get("id")
        if role not in ("user", "assistant") or not isinstance(ident, str):
            continue
        if info.get("summary") is True or any(
            isinstance(p, dict) and p.get("type") == "compaction" for p in parts
        ):
            continue
        blocks, results = _part_blocks(parts, str(role))
        stamp = _stamp(info)
        if blocks:
            entry: Entry = {
                "type": role,
                "uuid": ident,
                "timestamp": stamp,
                "message": {"role": role, "content": blocks},
            }
            out.append(entry)
        if results:
            out.append(
                {
                    "type": "user",
                    "uuid": f"{ident}-results",
                    "timestamp": stamp,
                    "message": {"role": "user", "content": results},
                }
            )
    return out


# -- the version it runs ----------------------------------------------------------------------


def installed_version(env: Mapping[str, str]) -> tuple[int, int] | None:
    """``opencode --version`` as (major, minor); None when there is no ``opencode`` to ask."""
    try:
        proc = subprocess.run(
            ["opencode", "--version"],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=20,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _VERSION.search(proc.stdout or "")
    return (int(found[1]), int(found[2])) if found and proc.returncode == 0 else None


def check_version(version: tuple[int, int] | None) -> str | None:
    """Why an install must refuse this OpenCode (None: go ahead)."""
    if version is None:
        return None
    low, high = SUPPORTED
    if low <= version < high:
        return None
    shown = f"{version[0]}.{version[1]}"
    if version >= high:
        return (
            f"OpenCode {shown} loads only its 2.x plugin API; memdir's plugin is written for the "
            f"1.x API ({low[0]}.{low[1]} or later): install opencode-ai@1 to use memdir with it"
        )
    return f"OpenCode {shown} is older than {low[0]}.{low[1]}, the first plugin API memdir supports"


# -- the dialect --------------------------------------------------------------------------------


class OpenCode:
    name = "opencode"
    title = "OpenCode"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = "opencode run"
    model_provider: str | None = None
    # what OpenCode writes by itself beside memdir's files (seen with opencode-ai 1.x): its
    # "$schema" key in a config it loads, a .gitignore in a config dir that holds a plugin. An
    # uninstall that leaves only these removes them with the file and the dirs it created.
    generated_keys = frozenset({"$schema"})
    # OpenCode installs its plugin SDK into every config dir it loads plugins from
    generated_packages = ("@opencode-ai/plugin",)
    generated_files: Mapping[str, str] = {
        ".gitignore": "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore"
    }

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def compactions(self, path: Path) -> int:
        return compactions(path)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return render(event, context)

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [transcript_dir(env)]

    def unattended(self, env: Mapping[str, str]) -> bool:
        return False  # the plugin cannot tell `opencode run` from the TUI

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return read_messages(path)

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        return []  # OpenCode loads plugins without a review

    def plugin_path(self, scope: str, loc: Locations) -> Path:
        if scope == "project":
            return loc.project_root / ".opencode" / "plugins" / PLUGIN_NAME
        return config_dir(loc.env, loc.home) / "plugins" / PLUGIN_NAME

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        base = loc.project_root if scope == "project" else config_dir(loc.env, loc.home)
        return [
            Target(self.plugin_path(scope, loc), "file"),
            Target(base / "opencode.json", "mcp", ("mcp",)),
        ]

    def file_text(self, target: Target, command: Sequence[str], loc: Locations) -> str:
        return render_plugin(command, EVENTS, plugin_info(loc.env))

    def mcp_entry(self, command: Sequence[str]) -> dict[str, Any]:
        return {"type": "local", "command": [*command, "mcp"], "enabled": True}

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        return []  # no hooks in a config file: the plugin is the hook

    def check_install(self, scope: str, loc: Locations) -> None:
        """Refuse an OpenCode whose plugin API memdir does not speak, and a second plugin."""
        problem = check_version(installed_version(loc.env))
        if problem:
            raise InstallError(problem)
        other = "user" if scope == "project" else "project"
        path = self.plugin_path(other, loc)
        if path.is_file() and MARKER in path.read_text(encoding="utf-8", errors="replace"):
            raise InstallError(
                f"memdir already runs in OpenCode through {path} (--{other}) — a second plugin "
                f"would forward every event twice; `memdir uninstall opencode --{other}` first"
            )

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        notes = [
            "OpenCode loads the plugin at its next start (no trust step): recall is added to "
            "each user message, the session's messages are read at idle for extraction.",
        ]
        if scope == "project":
            notes.append(
                f"{loc.project_root}/.opencode/plugins/ is read when OpenCode starts in "
                f"{loc.project_root}; use `memdir install opencode --user` to have memdir "
                "everywhere."
            )
        return notes


DIALECT: Dialect = OpenCode()  # mypy checks the class against the protocol

__all__ = [
    "DIALECT",
    "EVENTS",
    "OpenCode",
    "check_version",
    "compactions",
    "installed_version",
    "parse",
    "plugin_info",
    "read_messages",
    "render",
    "transcript_dir",
    "unquote",
]
