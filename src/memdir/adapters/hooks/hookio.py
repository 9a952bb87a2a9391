"""memdir's hook event, and the checks every host's hook input goes through first.

Invariants:
- :func:`read_body` refuses, with :class:`~memdir.errors.HookInputError`, stdin that is too
  large, not UTF-8, not JSON, nested past what the decoder takes, or not an object; a dialect
  (:mod:`.dialect`) then maps the object onto :class:`HookInput`, and :func:`session_id`
  refuses a session id that is not a plain token (it names files memdir writes).
- Injected text never exceeds :data:`MAX_CONTEXT_CHARS` (:func:`clip`), under the smallest cut
  a host applies (Claude Code's 10,000 characters).

Imports are standard library only: this module is on the per-prompt path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memdir.errors import HookInputError

MAX_CONTEXT_CHARS = 9_000  # the host truncates injected text at 10,000 characters
MAX_STDIN_BYTES = 4 * 1024 * 1024
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


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
    # when the host fired the event (Gemini CLI sends one): tells a second real event from
    # the same event delivered twice
    timestamp: str | None = None
    # the host's id of the user's prompt, where it sends one: a prompt hook the host fires again
    # for the same prompt (Qwen Code, on each tool-result continuation) is answered once
    turn: str | None = None


def optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise HookInputError(f"{key!r} must be a string, not {type(value).__name__}")
    return value


def read_body(raw: bytes | str) -> dict[str, Any]:
    """The hook's stdin as a JSON object; HookInputError when it cannot be one."""
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
    except RecursionError:
        raise HookInputError("hook input is nested too deeply") from None
    if not isinstance(body, dict):
        raise HookInputError("hook input must be a JSON object")
    return body


def session_id(body: dict[str, Any], key: str = "session_id") -> str:
    """The session id at ``key``: a plain token (it names memdir's state files)."""
    value = body.get(key)
    if not isinstance(value, str) or not _SESSION_ID.match(value) or ".." in value:
        raise HookInputError(f"missing or unsafe {key} {value!r}")
    return value


def standard_input(
    event: str, body: Mapping[str, Any], events: Mapping[str, str], **override: Any
) -> HookInput:
    """memdir's event from the fields every host so far sends under the same names
    (``session_id``, ``transcript_path``, ``cwd``, ``prompt``, ``source``, ``trigger``,
    ``reason``, ``agent_id``); ``override`` replaces a field a dialect reads its own way."""
    obj = dict(body)
    check_event_name(obj, event, events.get(event))
    fields: dict[str, Any] = {
        key: optional_str(obj, key)
        for key in ("transcript_path", "cwd", "prompt", "source", "trigger", "reason", "agent_id")
    }
    stamp = obj.get("timestamp")  # metadata only: a host that sends another type loses nothing
    fields["timestamp"] = stamp[:64] if isinstance(stamp, str) else None
    fields.update(override)
    return HookInput(event=event, session_id=session_id(obj), **fields)


def check_event_name(body: dict[str, Any], event: str, expected: str | None) -> None:
    """A body that names another event than the command it was sent to is refused."""
    named = body.get("hook_event_name")
    if isinstance(named, str) and named and expected is not None and named != expected:
        raise HookInputError(f"hook_event_name {named!r} sent to 'memdir hook {event}'")


def clip(text: str, limit: int = MAX_CONTEXT_CHARS) -> str:
    """``text`` within ``limit`` characters, cut at a line end with a marker when it was longer."""
    if len(text) <= limit:
        return text
    marker = "\n[memdir: cut to fit the hook's size budget]"
    cut = text.rfind("\n", 0, limit - len(marker))
    return text[: cut if cut > 0 else limit - len(marker)] + marker
