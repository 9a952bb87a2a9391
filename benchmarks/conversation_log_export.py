"""Rebuild Claude Code transcript entries from a "Claude Conversation Log" Markdown file.

A second public export format (``# Claude Conversation Log`` … ``## 👤 User`` / ``## 🤖 Claude``
blocks separated by ``---``), used by :mod:`benchmarks.notes_eval_wide`. It keeps the text of
every message and, for a tool call, ``🔧 Using tool: NAME`` followed by ``Input: {…}`` (the
call's input as JSON, long strings sometimes cut). It does **not** keep tool results. What is
put back, documented so nobody mistakes it for the host's own bytes:

* uuids and parent links: derived (uuid5 of the session id and the block's position);
* tool calls: ``tool_use`` blocks with derived ids; an input that is no longer valid JSON keeps
  the ``"key": "value"`` pairs that can still be read;
* tool results: one ``tool_result`` per call saying the export did not record it (so no call is
  unanswered; nothing the notes could mistake for output);
* the compact boundary before a ``This session is being continued…`` user block, and that
  block's ``isCompactSummary``; no timestamps (the log has none per message).

The result has the shape of :func:`benchmarks.real_session_export.parse_export`'s, so the same
``segments`` and ``trim_results`` apply.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from benchmarks.real_session_export import SUMMARY_PREFIX

NOT_RECORDED = "[the export did not record this tool result]"
_BLOCK = re.compile(r"^## (👤 User|🤖 Claude)\s*$", re.MULTILINE)
_SESSION = re.compile(r"^Session ID:\s*(\S+)", re.MULTILINE)
_TOOL = re.compile(r"^🔧 Using tool: (\S+)\nInput: ", re.MULTILINE)
_PAIR = re.compile(r'"(\w+)":\s*"((?:[^"\\]|\\.)*)"')


def _input(raw: str) -> dict[str, Any]:
    body = raw.strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        return {k: v for k, v in _PAIR.findall(body)}
    return value if isinstance(value, dict) else {"value": value}


def _assistant(body: str, session: str, i: int) -> list[dict[str, Any]]:
    """The blocks of one Claude entry: its text, then each tool call."""
    calls = list(_TOOL.finditer(body))
    text = (body[: calls[0].start()] if calls else body).strip()
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for k, call in enumerate(calls):
        end = calls[k + 1].start() if k + 1 < len(calls) else len(body)
        tid = f"toolu_{uuid.uuid5(uuid.NAMESPACE_URL, f'{session}/{i}/{k}').hex[:24]}"
        blocks.append(
            {
                "type": "tool_use",
                "id": tid,
                "name": call.group(1),
                "input": _input(body[call.end() : end]),
            }
        )
    return blocks


def parse_log(text: str) -> tuple[str, list[dict[str, Any]]]:
    """(session id, transcript entries) of one conversation log."""
    found = _SESSION.search(text)
    session = found.group(1) if found else "unknown"
    marks = list(_BLOCK.finditer(text))
    entries: list[dict[str, Any]] = []
    parent: str | None = None
    reply = 0
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = re.sub(r"\n---\s*$", "", text[mark.end() : end].rstrip()).strip("\n")
        uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/{i}"))
        base = {"uuid": uid, "parentUuid": parent, "sessionId": session}
        if mark.group(1).endswith("User"):
            entry: dict[str, Any] = {
                **base,
                "type": "user",
                "message": {"role": "user", "content": body},
            }
            if body.lstrip().startswith(SUMMARY_PREFIX):
                entries.append(
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/{i}/boundary")),
                        "parentUuid": None,
                        "logicalParentUuid": parent,
                        "sessionId": session,
                        "content": "Conversation compacted",
                        "compactMetadata": {"trigger": "auto", "preTokens": 0},
                    }
                )
                entry["isCompactSummary"] = True
                entry["isVisibleInTranscriptOnly"] = True
            entries.append(entry)
            parent = uid
            continue
        blocks = _assistant(body, session, i)
        if not blocks:
            continue
        if not entries or entries[-1]["type"] != "assistant":
            reply += 1
        message = {"role": "assistant", "content": blocks, "id": f"msg_{session[:8]}_{reply:05d}"}
        entries.append({**base, "type": "assistant", "message": message})
        parent = uid
        results = [
            {"type": "tool_result", "tool_use_id": b["id"], "content": NOT_RECORDED}
            for b in blocks
            if b["type"] == "tool_use"
        ]
        if results:
            rid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/{i}/results"))
            entries.append(
                {
                    "type": "user",
                    "uuid": rid,
                    "parentUuid": parent,
                    "sessionId": session,
                    "message": {"role": "user", "content": results},
                }
            )
            parent = rid
    return session, entries
