"""Antigravity CLI's dialect (``agy``, Gemini CLI's successor for individual accounts).

**Not tested against the real CLI**: ``agy`` is a Go binary from a curl installer with Google
sign-in only and no documented custom endpoint, so nothing here ran it. Built from its
documentation and third-party probes (agy 1.0–1.5), which disagree across versions; the tests
use hook JSON fixtures in the documented shapes. ``memdir doctor`` and ``docs/hosts.md`` say so.

What memdir relies on:
- ``hooks.json`` maps *named* hook groups to events: ``{"memdir": {"PreInvocation": [{"type":
  "command", "command": "…", "timeout": 10}], "Stop": […]}}`` — user
  ``~/.gemini/config/hooks.json``, project ``<repo>/.agents/hooks.json``; timeouts in seconds.
  The parser is strict: one key it does not know drops the **whole file** without a word, so
  memdir writes only documented keys;
- ``PreInvocation`` fires before every model call (input camelCase: ``conversationId``,
  ``transcriptPath``, ``invocationNum``, ``initialNumSteps``, ``workspacePaths``; no prompt
  text) and may answer ``{"injectSteps": [{"ephemeralMessage": "…"}]}``. No ``SessionStart``
  fires. memdir runs its *session start* there: instructions, ``MEMORY.md`` and the memories
  relevant to the repository's current work (``recall_at_start``, as for Cursor) go in at the
  conversation's first model call; every later call finds the context holding them and adds
  nothing. There is no recall per prompt (the prompt's text is not given);
- ``Stop`` ends a turn: extraction, from the transcript
  (``~/.gemini/antigravity-cli/brain/<conversationId>/.system_generated/logs/transcript.jsonl``,
  whose schema is not documented: :func:`read_transcript` takes what reads as the user's and the
  model's text and nothing else);
- a ``PreToolUse`` hook answering ``{}`` **denies** the tool: memdir never registers one.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.adapters.hooks.dialect import HookSpec, Target, hook_command
from memdir.adapters.hooks.hookio import HookInput, clip, optional_str, session_id
from memdir.adapters.hosts.host_files import entry, jsonl_records
from memdir.errors import HookInputError

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect, Locations
    from memdir.transcripts import Entry

EVENTS: dict[str, str] = {"session-start": "PreInvocation", "stop": "Stop"}
HOOK_TIMEOUTS = {"session-start": 30, "stop": 15}  # seconds
_USER = frozenset({"user", "USER", "user_input", "USER_INPUT", "userInput"})
_MODEL = frozenset({"assistant", "model", "MODEL", "planner_response", "PLANNER_RESPONSE"})
_TEXT_KEYS = ("text", "content", "userInput", "userResponse", "response", "message")


def gemini_dir(env: Mapping[str, str], home: Path | None = None) -> Path:
    return (home or Path(env.get("HOME") or Path.home())) / ".gemini"


def parse(event: str, body: Mapping[str, Any]) -> HookInput:
    obj = dict(body)
    if event not in EVENTS:
        raise HookInputError(f"Antigravity has no event memdir runs as {event!r}")
    number = obj.get("invocationNum", 0)
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        raise HookInputError(f"'invocationNum' must be a whole number, not {number!r}")
    roots = obj.get("workspacePaths")
    cwd = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    return HookInput(
        event=event,
        session_id=session_id(obj, "conversationId"),
        transcript_path=optional_str(obj, "transcriptPath"),
        cwd=cwd,
        source="startup",
        # every model call of a conversation is the same context: the first one starts it,
        # the others are answered at once with nothing
        turn=str(obj.get("conversationId")) if event == "session-start" else None,
    )


def render(event: str, context: str) -> str:
    if not context or event != "session-start":
        return ""
    return json.dumps({"injectSteps": [{"ephemeralMessage": clip(context)}]}, ensure_ascii=False)


def _text_of(record: Mapping[str, Any]) -> str | None:
    for key in _TEXT_KEYS:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, dict):
            inner = _text_of(value)
            if inner:
                return inner
    return None


def read_transcript(path: Path) -> list[Entry]:
    """The user's and the model's text from an Antigravity transcript ([] when unreadable);
    tool steps, system steps and anything of unknown shape are left out."""
    records = jsonl_records(path)
    out: list[Entry] = []
    for n, record in enumerate(records):
        kind = record.get("type", record.get("role", record.get("source")))
        role = "user" if kind in _USER else "assistant" if kind in _MODEL else None
        text = _text_of(record) if role else None
        if role is None or text is None:
            continue
        ident = str(record.get("id") or record.get("stepId") or f"step-{n}")
        out.append(entry(role, ident, record.get("timestamp"), [{"type": "text", "text": text}]))
    return out


class Antigravity:
    name = "antigravity"
    title = "Antigravity CLI"
    events: Mapping[str, str] = EVENTS
    scopes: tuple[str, ...] = ("user", "project")
    headless: str | None = None
    model_provider: str | None = None
    recall_at_start = True  # no prompt text reaches a hook: recall on the repository's work
    untested = "not tested against the real CLI (agy cannot be installed or run offline here)"

    def parse(self, event: str, body: Mapping[str, Any]) -> HookInput:
        return parse(event, body)

    def render(self, event: str, context: str, notice: str | None) -> str:
        return render(event, context)

    def transcript_roots(self, env: Mapping[str, str]) -> Sequence[Path]:
        return [gemini_dir(env) / "antigravity-cli" / "brain"]

    def unattended(self, env: Mapping[str, str]) -> bool:
        return True  # the start is the only recall: it waits for a loading daemon

    def read_entries(self, path: Path, *, tail_bytes: int | None = None) -> list[Entry] | None:
        return read_transcript(path)

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        if scope == "project":
            return [Target(loc.project_root / ".agents" / "hooks.json", "named-hooks")]
        return [Target(gemini_dir(loc.env, loc.home) / "config" / "hooks.json", "named-hooks")]

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        prefix = shlex.join(command)
        return [
            HookSpec(
                host_name,
                hook_command(prefix, self.name, word),
                HOOK_TIMEOUTS[word],
                flat=True,
                typed=True,
            )
            for word, host_name in EVENTS.items()  # never PreToolUse: {} would deny the tool
        ]

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        return []

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        return [
            f"Antigravity: {self.untested}. memdir gives the instructions, MEMORY.md and the "
            "memories relevant to the repository's current work at each conversation's first "
            "model call (Antigravity tells a hook nothing of the prompt, so there is no recall "
            "per prompt) and extracts at each Stop; `memdir hook log` shows whether agy ran them.",
            "Antigravity drops a whole hooks.json it cannot parse without a word: check "
            "`agy` lists the memdir hook after the install.",
        ]


DIALECT: Dialect = Antigravity()  # mypy checks the class against the protocol

__all__ = ["DIALECT", "EVENTS", "Antigravity", "parse", "read_transcript", "render"]
