"""Gemini CLI's dialect: its hook JSON, its session files, its ``settings.json``.

Facts (``docs/hosts-gemini-findings.md``, checked in the real CLI 0.61 by ``tests/realhost``):
- every hook gets ``session_id``, ``transcript_path`` (the session ``.jsonl``), ``cwd``,
  ``hook_event_name`` and ``timestamp``; ``SessionStart`` adds ``source`` (startup | resume |
  clear), ``BeforeAgent``/``AfterAgent`` ``prompt`` — with the ``<hook_context>`` text
  SessionStart added, which memdir strips so it never recalls on or extracts its own injection
  — ``PreCompress`` ``trigger`` (auto | manual), ``SessionEnd`` ``reason``;
- ``hookSpecificOutput.additionalContext`` reaches the model from SessionStart (prefixed to the
  prompt) and BeforeAgent (a part of the same user turn), with ``<``/``>`` escaped; it stays in
  the history and is replayed on ``--resume`` — except that a resume drops every stored user
  message that *starts* with ``<hook_context>`` (the CLI's ``isIgnoredUserContent``), the
  user's first prompt with it: so memdir's session start is given with the first prompt
  (``start_in_first_prompt``), whose part the resume keeps;
- a hook exiting 2 — or 127, a ``memdir`` the shell no longer finds — blocks a BeforeAgent
  turn: memdir itself always exits 0 (:func:`~memdir.adapters.hooks.runner.run_event`) and each
  installed command ends in ``|| true`` (:data:`NEVER_FAIL`) for the cases it cannot see;
- ``PreCompress`` fires before *every* model call, compression or not: memdir's hook is
  installed for the ``manual`` trigger only (``/compress``), and an automatic compression is
  seen afterwards in the session file (:func:`compactions`), where the next BeforeAgent puts the
  session-start blocks and notes back;
- hooks and MCP servers live in one ``settings.json`` (user ``~/.gemini``, honouring
  ``GEMINI_CLI_HOME``; project ``<dir>/.gemini``, read only when gemini starts in ``<dir>``);
  timeouts are milliseconds; matchers on SessionStart/PreCompress/SessionEnd are exact strings.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Target, hook_command
from memdir.adapters.hooks.hookio import (
    HookInput,
    clip,
    optional_str,
    standard_input,
)
from memdir.errors import MemdirError

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect, Locations
    from memdir.transcripts import Entry

EVENTS: dict[str, str] = {
    "session-start": "SessionStart",
    "user-prompt-submit": "BeforeAgent",
    "stop": "AfterAgent",
    "pre-compact": "PreCompress",
    "session-end": "SessionEnd",
}
HOOK_TIMEOUTS_MS = {
    "session-start": 30_000,
    "user-prompt-submit": 15_000,
    "stop": 15_000,
    "pre-compact": 60_000,
    "session-end": 15_000,  # gemini -p waits for it at exit: memdir's answers at once
}
# PreCompress "auto" fires before every model call; only "manual" (/compress) is a compaction
MATCHERS = {"pre-compact": "manual"}
NEVER_FAIL = " || true"  # Gemini runs hooks through the platform shell (bash -c on POSIX)
_CONTEXT_EVENTS = ("session-start", "user-prompt-submit")
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
_SESSION_CONTEXT = "<session_context>"
MAX_LEGACY_BYTES = 50 * 1024 * 1024


def strip_hook_context(text: str) -> str:
    """``text`` without the ``<hook_context>…</hook_context>`` parts hooks (memdir) added."""
    return _HOOK_CONTEXT.sub("", text) if "<hook_context>" in text else text


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    # the prompt carries the <hook_context> SessionStart added: never recall on memdir's own text
    prompt = optional_str(dict(body), "prompt")
    stripped = strip_hook_context(prompt).strip() if prompt is not None else None
    return standard_input(event, body, EVENTS, prompt=stripped, agent_id=None)


def render(event: str, context: str) -> str:
    """``{"hookSpecificOutput": {...}}`` for the events whose context reaches the model."""
    if not context or event not in _CONTEXT_EVENTS:
        return ""
    output = {"hookEventName": EVENTS[event], "additionalContext": clip(context)}
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)


def gemini_home(env: Mapping[str, str]) -> Path:
    """``$GEMINI_CLI_HOME/.gemini`` when set (it replaces ``~`` for every gemini path)."""
    base = env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())
    return Path(base) / ".gemini"


# -- session files ----------------------------------------------------------------------------


def _records(path: Path) -> list[dict[str, Any]] | None:
    """The file's top-level records in order: JSONL lines, or a pre-0.39 whole-file JSON
    session's messages; None when it cannot be read."""
    from memdir.pathsafe import read_regular
    from memdir.transcripts import read_transcript

    try:
        if path.suffix == ".json":
            value = json.loads(read_regular(path, limit=MAX_LEGACY_BYTES).decode("utf-8"))
            messages = value.get("messages") if isinstance(value, dict) else None
            listed = messages if isinstance(messages, list) else []
            return [m for m in listed if isinstance(m, dict)]
        return read_transcript(path).entries
    except (MemdirError, OSError, ValueError, RecursionError):
        return None


def _messages(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reading rule: message records in file order, the last record per id at its first's
    place, ``$rewindTo`` applied; ``$set`` (copies, session context, summaries) ignored."""
    by_id: dict[str, dict[str, Any]] = {}
    for record in records:
        rewind = record.get("$rewindTo")
        if isinstance(rewind, str) and rewind in by_id:
            keys = list(by_id)
            by_id = {k: by_id[k] for k in keys[: keys.index(rewind)]}
            continue
        ident = record.get("id")
        if isinstance(ident, str) and isinstance(record.get("type"), str):
            by_id[ident] = record
    return list(by_id.values())


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _text_blocks(parts: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for part in parts:
        text = part.get("text")
        if isinstance(text, str) and not part.get("thought"):
            text = strip_hook_context(text).strip()
            if text:
                out.append({"type": "text", "text": text})
    return out


def _tool_output(call: Mapping[str, Any]) -> tuple[str, bool]:
    chunks: list[str] = []
    error = call.get("status") not in (None, "success")
    parts = call.get("result")
    for part in parts if isinstance(parts, list) else []:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        reply = response.get("response") if isinstance(response, dict) else None
        if isinstance(reply, dict):
            value = reply.get("output", reply.get("error"))
            error = error or "error" in reply
            chunks.append(value if isinstance(value, str) else json.dumps(value))
    return "\n".join(chunks), error


def _entry(kind: str, uuid: str, stamp: Any, blocks: list[dict[str, Any]]) -> Entry:
    return {
        "type": kind,
        "uuid": uuid,
        "timestamp": stamp if isinstance(stamp, str) else "",
        "message": {"role": kind, "content": blocks},
    }


def _convert(message: Mapping[str, Any]) -> list[Entry]:
    ident, kind, stamp = str(message["id"]), message.get("type"), message.get("timestamp")
    parts = _parts(message.get("content"))
    if kind == "user":
        blocks = _text_blocks(parts)  # functionResponse-only records: results are in toolCalls
        if not blocks or blocks[0]["text"].startswith(_SESSION_CONTEXT):
            return []
        return [_entry("user", ident, stamp, blocks)]
    if kind != "gemini":  # info / error / warning: the CLI's own, not the conversation
        return []
    blocks = _text_blocks(parts)
    calls = [c for c in message.get("toolCalls") or [] if isinstance(c, dict)]
    results = []
    for n, call in enumerate(calls):
        call_id = str(call.get("id") or f"{ident}-call-{n}")
        args = call.get("args")
        blocks.append(
            {
                "type": "tool_use",
                "id": call_id,
                "name": str(call.get("name") or ""),
                "input": args if isinstance(args, dict) else {},
            }
        )
        output, error = _tool_output(call)
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": output}
        if error:
            result["is_error"] = True
        results.append(result)
    out = [_entry("assistant", ident, stamp, blocks)] if blocks else []
    if results:
        out.append(_entry("user", f"{ident}-results", stamp, results))
    return out


def read_session(path: Path) -> list[Entry]:
    """A Gemini session file as memdir's entries ([] when unreadable or empty)."""
    records = _records(path)
    return [e for m in _messages(records or []) for e in _convert(m)]


def compactions(path: Path) -> int:
    """How many compressions the session file records: ``$set.messages`` lists that bring a
    message with text and an id never seen before (the summary and the kept turns get new ids;
    a resume's ``$set`` copies known ones). The synthetic session context is not counted."""
    records = _records(path)
    if not records:
        return 0
    seen: set[str] = set()
    count = 0
    for record in records:
        ident = record.get("id")
        if isinstance(ident, str):
            seen.add(ident)
            continue
        update = record.get("$set")
        listed = update.get("messages") if isinstance(update, dict) else None
        if not isinstance(listed, list):
            continue
        fresh = False
        for message in listed:
            mid = message.get("id") if isinstance(message, dict) else None
            if not isinstance(mid, str) or mid in seen:
                continue
            seen.add(mid)
            texts = [
                p["text"] for p in _parts(message.get("content")) if isinstance(p.get("text"), str)
            ]
            # a resume's copy can give a functionResponse turn an id of its own: text only
            if texts and not texts[0].startswith(_SESSION_CONTEXT):
                fresh = True
        count += fresh
    return count


# -- the dialect --------------------------------------------------------------------------------


class Gemini:
    name = "gemini"
    title = "Gemini CLI"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = "gemini -p"
    model_provider: str | None = "gemini"  # memdir.llm.gemini_cli
    start_in_first_prompt = True  # a resume drops a stored prompt that starts with its context

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return render(event, context)  # a systemMessage would only print to stderr

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [gemini_home(env) / "tmp"]

    def unattended(self, env: Mapping[str, str]) -> bool:
        # 0.61 tells a hook nothing about headless runs (no variable, no field): say attended
        return False

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return read_session(path)  # whole: a later line may replace an earlier message

    def project_transcripts(self, env: Mapping[str, str], project_root: Path) -> list[Path]:
        from memdir.adapters.hosts.sessions import gemini_sessions

        return gemini_sessions(gemini_home(env) / "tmp", project_root)

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        return []  # Gemini CLI runs settings hooks in any trusted folder without a review

    def compactions(self, path: Path) -> int:
        return compactions(path)

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        if scope == "project":
            path = loc.project_root / ".gemini" / "settings.json"
        else:
            custom = loc.env.get("GEMINI_CLI_HOME")
            path = (Path(custom) if custom else loc.home) / ".gemini" / "settings.json"
        return [
            Target(path, "hooks"),
            Target(path, "mcp", ("mcpServers",), server={"trust": True}),
        ]

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        prefix = shlex.join(command)
        return [
            HookSpec(
                host_name,
                hook_command(prefix, self.name, word) + NEVER_FAIL,
                HOOK_TIMEOUTS_MS[word],
                matcher=MATCHERS.get(word),
                name=f"memdir-{word}",
            )
            for word, host_name in EVENTS.items()
        ]

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        notes = [
            "Gemini CLI runs hooks and MCP servers only in a trusted folder: trust the project "
            "when `gemini` asks (or add it to ~/.gemini/trustedFolders.json); headless "
            "`gemini -p` needs GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust there.",
            "The memdir MCP server is installed with `trust: true`: Gemini calls memdir's "
            "memory tools without asking each time (headless runs cannot use them otherwise); "
            "remove `trust` from mcpServers.memdir to be asked.",
            "Recall and the session start reach the model with each prompt, in the conversation "
            "itself; Gemini keeps them in the history, so a --resume never gets them twice.",
        ]
        if scope == "project":
            notes.insert(
                0,
                f"Gemini CLI reads {loc.project_root}/.gemini/settings.json only when started "
                "in that directory; started in a subdirectory it runs without memdir — use "
                "`memdir install gemini --user` to have memdir everywhere.",
            )
        return notes


DIALECT: Dialect = Gemini()  # mypy checks the class against the protocol

__all__ = [
    "DIALECT",
    "EVENTS",
    "HOOK_TIMEOUTS_MS",
    "NEVER_FAIL",
    "Gemini",
    "compactions",
    "parse",
    "read_session",
    "render",
    "strip_hook_context",
]
