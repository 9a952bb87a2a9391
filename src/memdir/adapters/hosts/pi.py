"""pi's dialect (the pi coding agent, the engine under OpenClaw): an extension, its session tree.

Facts (``docs/hosts.md``, checked in the real CLI 0.73.1 by ``tests/realhost``):
- pi runs no shell hooks; it loads TypeScript extensions in-process, without a trust prompt, from
  ``<agent dir>/extensions/*.ts`` (``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``) and the
  project's ``.pi/extensions/*.ts``. memdir writes one, ``memdir.ts``, that it owns whole
  (:mod:`.pi_extension`); pi has no MCP client, so there is no server to add;
- ``session_start`` cannot add context (and says "startup" on ``pi -c`` too): the blocks go
  with the first prompt (``start_in_first_prompt``). ``before_agent_start`` may return a
  message: a hidden ``custom_message`` entry stored in the session after the prompt and sent on
  every later request and on ``-c``, so the history keeps what memdir gave;
- ``agent_end`` ends a prompt's work; ``session_before_compact`` precedes a compaction, whose
  ``compaction`` entry in the session file the next prompt sees (:func:`compactions`), where
  the notes come back;
- the session file is a JSONL tree: a ``session`` header (``id``, ``cwd``), then entries with
  ``id``/``parentId``; ``message`` entries hold ``user`` (text or blocks), ``assistant`` (text,
  ``thinking``, ``toolCall``) and ``toolResult`` messages. The conversation is the branch that
  ends at the last entry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Target
from memdir.adapters.hooks.hookio import HookInput, clip, standard_input
from memdir.adapters.hosts.host_files import entry, jsonl_records, refuse_second_scope

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect, Locations
    from memdir.transcripts import Entry

EVENTS: dict[str, str] = {
    "session-start": "session_start",
    "user-prompt-submit": "before_agent_start",
    "stop": "agent_end",
    "pre-compact": "session_before_compact",
    "session-end": "session_shutdown",
}
_CONTEXT_EVENTS = ("session-start", "user-prompt-submit")


def agent_dir(env: Mapping[str, str], home: Path | None = None) -> Path:
    """``$PI_CODING_AGENT_DIR`` when set, else ``~/.pi/agent``."""
    custom = env.get("PI_CODING_AGENT_DIR")
    if custom:
        return Path(custom)
    return (home or Path(env.get("HOME") or Path.home())) / ".pi" / "agent"


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    return standard_input(event, body, EVENTS)


def render(event: str, context: str) -> str:
    if not context or event not in _CONTEXT_EVENTS:
        return ""
    return json.dumps({"additionalContext": clip(context)}, ensure_ascii=False)


# -- session files ------------------------------------------------------------------------------


def _branch(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries from the root to the last one, in order (pi's tree keeps abandoned branches)."""
    by_id = {r["id"]: r for r in records if isinstance(r.get("id"), str)}
    if not by_id:
        return []
    out: list[dict[str, Any]] = []
    node: dict[str, Any] | None = [r for r in records if isinstance(r.get("id"), str)][-1]
    seen: set[str] = set()
    while node is not None and node["id"] not in seen:
        seen.add(node["id"])
        out.append(node)
        parent = node.get("parentId")
        node = by_id.get(parent) if isinstance(parent, str) else None
    return out[::-1]


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content.strip()}] if content.strip() else []
    out = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                out.append({"type": "text", "text": text.strip()})
    return out


def _convert(record: Mapping[str, Any]) -> Entry | None:
    message = record.get("message")
    if record.get("type") != "message" or not isinstance(message, dict):
        return None
    role, ident, stamp = message.get("role"), str(record["id"]), record.get("timestamp")
    content = message.get("content")
    blocks: list[dict[str, Any]] = []
    kind = "user"
    if role == "user":
        blocks = _text_blocks(content)
    elif role == "assistant":
        kind = "assistant"
        blocks = _text_blocks(content)
        for n, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and block.get("type") == "toolCall":
                args = block.get("arguments")
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": str(block.get("id") or f"{ident}-call-{n}"),
                        "name": str(block.get("name") or ""),
                        "input": args if isinstance(args, dict) else {},
                    }
                )
    elif role == "toolResult":
        text = "\n".join(b["text"] for b in _text_blocks(content))
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": str(message.get("toolCallId") or ident),
            "content": text,
        }
        if message.get("isError") is True:
            result["is_error"] = True
        blocks = [result]
    return entry(kind, ident, stamp, blocks) if blocks else None


def read_session(path: Path) -> list[Entry]:
    """A pi session file's current branch as memdir's entries ([] when unreadable or empty).
    memdir's own custom messages are ``custom_message`` entries: never read as the user's."""
    return [e for e in map(_convert, _branch(jsonl_records(path))) if e is not None]


def compactions(path: Path) -> int:
    return sum(1 for r in _branch(jsonl_records(path)) if r.get("type") == "compaction")


def _cwd_of(path: Path) -> Any:
    from memdir.adapters.hosts.sessions import _head_lines

    head = _head_lines(path, 1)
    first = head[0] if head and isinstance(head[0], dict) else {}
    return first.get("cwd") if first.get("type") == "session" else None


# -- the dialect --------------------------------------------------------------------------------


class Pi:
    name = "pi"
    title = "pi"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = "pi -p"
    model_provider: str | None = "pi"  # memdir.llm.pi_cli
    start_in_first_prompt = True  # session_start cannot add context

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return render(event, context)

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [agent_dir(env) / "sessions"]

    def unattended(self, env: Mapping[str, str]) -> bool:
        return False  # the extension is told nothing about -p

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return read_session(path)

    def compactions(self, path: Path) -> int:
        return compactions(path)

    def project_transcripts(self, env: Mapping[str, str], project_root: Path) -> list[Path]:
        from memdir.adapters.hosts.sessions import _files, _inside

        sessions = agent_dir(env) / "sessions"
        return [
            path
            for directory in _files(sessions, ("",))
            for path in _files(directory, (".jsonl",))
            if _inside(_cwd_of(path), project_root)
        ]

    def extension_path(self, scope: str, loc: Locations) -> Path:
        base = loc.project_root / ".pi" if scope == "project" else agent_dir(loc.env, loc.home)
        return base / "extensions" / "memdir.ts"

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        return [Target(self.extension_path(scope, loc), "file")]

    def file_text(self, target: Target, command: Sequence[str], loc: Locations) -> str:
        from memdir.adapters.hosts.pi_extension import render_extension

        return render_extension(command, EVENTS)

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        return []  # the extension runs memdir; no config file lists hooks

    def check_install(self, scope: str, loc: Locations) -> None:
        """One extension per pi: with both, pi would load both and every event run twice."""
        refuse_second_scope(self.title, self.name, scope, loc, self.extension_path)

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        return []  # pi loads extensions without a trust prompt

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        return [
            "pi loads the extension at its next start, without a trust prompt. pi has no MCP "
            "client: memories come with each prompt through the extension, and the agent saves "
            "new ones through memdir's extraction after each prompt (or `memdir add`)."
        ]


DIALECT: Dialect = Pi()  # mypy checks the class against the protocol

__all__ = ["DIALECT", "EVENTS", "Pi", "agent_dir", "compactions", "parse", "read_session"]
