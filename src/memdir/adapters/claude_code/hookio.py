"""The host's hook protocol: the JSON a hook reads on stdin and the JSON it prints.

Invariants:
- :func:`parse_input` accepts exactly what the host sends (extra keys ignored) and refuses, with
  :class:`~memdir.errors.HookInputError`, anything that would make memdir write somewhere it
  should not: a session id that is not a plain token, a non-string prompt, a non-object body.
- Output is built only by the functions here, so ``additionalContext`` always sits inside
  ``hookSpecificOutput`` (the host ignores it at the top level) and never exceeds
  :data:`MAX_CONTEXT_CHARS`, well under the host's 10,000-character cut.

Imports are standard library only: this module is on the per-prompt path.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memdir.errors import HookInputError

MAX_CONTEXT_CHARS = 9_000  # the host truncates injected text at 10,000 characters
MAX_STDIN_BYTES = 4 * 1024 * 1024
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")

# CLI event word -> the host's event name
EVENTS: dict[str, str] = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}


@dataclass(frozen=True, slots=True)
class HookInput:
    """The fields memdir uses from one hook call."""

    event: str  # the CLI word, e.g. "user-prompt-submit"
    session_id: str
    transcript_path: str | None
    cwd: str | None
    prompt: str | None = None
    source: str | None = None  # SessionStart: startup | resume | clear | compact
    trigger: str | None = None  # PreCompact: manual | auto
    reason: str | None = None  # SessionEnd
    agent_id: str | None = None  # set when a sub-agent fired the hook


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise HookInputError(f"{key!r} must be a string, not {type(value).__name__}")
    return value


def parse_input(event: str, raw: bytes | str) -> HookInput:
    """Parse the host's stdin for ``event``; HookInputError when it cannot be used."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_STDIN_BYTES:
            raise HookInputError(f"hook input larger than {MAX_STDIN_BYTES} bytes")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HookInputError(f"hook input is not UTF-8 ({exc.reason})") from None
    if not raw.strip():
        raise HookInputError("no hook input on stdin")
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise HookInputError(f"hook input is not JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(body, dict):
        raise HookInputError("hook input must be a JSON object")
    session_id = body.get("session_id")
    if not isinstance(session_id, str) or not _SESSION_ID.match(session_id) or ".." in session_id:
        raise HookInputError(f"missing or unsafe session_id {session_id!r}")
    named = body.get("hook_event_name")
    if isinstance(named, str) and named and named != EVENTS.get(event, named):
        raise HookInputError(f"hook_event_name {named!r} sent to 'memdir hook {event}'")
    return HookInput(
        event=event,
        session_id=session_id,
        transcript_path=_optional_str(body, "transcript_path"),
        cwd=_optional_str(body, "cwd"),
        prompt=_optional_str(body, "prompt"),
        source=_optional_str(body, "source"),
        trigger=_optional_str(body, "trigger"),
        reason=_optional_str(body, "reason"),
        agent_id=_optional_str(body, "agent_id"),
    )


def clip(text: str, limit: int = MAX_CONTEXT_CHARS) -> str:
    """``text`` within ``limit`` characters, cut at a line end with a marker when it was longer."""
    if len(text) <= limit:
        return text
    marker = "\n[memdir: cut to fit the hook's size budget]"
    cut = text.rfind("\n", 0, limit - len(marker))
    return text[: cut if cut > 0 else limit - len(marker)] + marker


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
