"""A scripted provider from a JSON file: ``MEMDIR_MODEL=scripted:replies.json``.

For trying ``memdir chat`` (and any entry point) without a model, and for driving a real process
in tests. The file holds a list of replies, used in order, or ``{"steps": [...], "repeat": {...}}``
where ``repeat`` answers every call after the list runs out. A reply is one of::

    {"text": "Hello!"}
    {"tool": "Write", "input": {"file_path": "...", "content": "..."}, "text": "optional"}
    {"tools": [["Read", {...}], ["Grep", {...}]], "text": "optional"}
    {"json": {...}}                                    a structured-output reply

A malformed file is a ProviderConfigError naming the file and the entry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdir.errors import ProviderConfigError
from memdir.llm.base import Completion
from memdir.llm.scripted import ScriptedProvider


def _reply(raw: Any, where: str) -> Completion:
    if not isinstance(raw, dict):
        raise ProviderConfigError(f"{where}: a reply must be a JSON object")
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise ProviderConfigError(f"{where}: 'text' must be a string")
    if "json" in raw:
        return Completion.from_json(raw["json"])
    if "tool" in raw:
        calls = [(raw["tool"], raw.get("input", {}))]
    elif "tools" in raw:
        calls = raw["tools"]
    else:
        return Completion.from_text(text)
    if not isinstance(calls, list) or not all(
        isinstance(c, list | tuple) and len(c) == 2 and isinstance(c[0], str)
        and isinstance(c[1], dict) for c in calls
    ):  # fmt: skip
        raise ProviderConfigError(f"{where}: tool calls must be [name, input-object] pairs")
    return Completion.from_tool_calls([(name, args) for name, args in calls], text=text)


def load_script(path: Path) -> ScriptedProvider:
    """The :class:`ScriptedProvider` described by the JSON file at ``path``."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise ProviderConfigError(f"script file not found: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProviderConfigError(f"cannot read script file {path}: {exc}") from None
    steps, repeat = (data, None) if isinstance(data, list) else (None, None)
    if isinstance(data, dict):
        steps, repeat = data.get("steps", []), data.get("repeat")
    if not isinstance(steps, list):
        raise ProviderConfigError(f"{path}: expected a list of replies or {{'steps': [...]}}")
    replies = [_reply(step, f"{path} step {i + 1}") for i, step in enumerate(steps)]
    last = _reply(repeat, f"{path} repeat") if repeat is not None else None
    return ScriptedProvider(replies, repeat=last)


__all__ = ["load_script"]
