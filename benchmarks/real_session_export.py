"""Rebuild Claude Code transcript entries from a "Claude Session Export" Markdown file.

The public sessions in ``benchmarks/data/real_sessions`` were published as Markdown exports
(``# Claude Session Export`` … ``### User`` / ``### Assistant``, a ``> date`` line, then the
entry's ``message.content`` verbatim as JSON, or as plain text for string content). Each export
entry is one transcript entry, so the content blocks — text, thinking, tool_use with its input,
tool_result with its output — are exactly what the host logged. What the export lost, and how it
is put back (documented so nobody mistakes it for the host's own bytes):

* uuids and parent links: derived (uuid5 of the session id and the entry's position);
* ``message.id``: consecutive assistant entries share one (they are the pieces of one reply);
* ``isMeta`` on a slash command's expanded prompt: the user entry right after a
  ``<command-name>`` entry is marked meta, as Claude Code marks it;
* the compact boundary before a ``This session is being continued…`` entry, and that entry's
  ``isCompactSummary``;
* timestamps: the export's local minute-resolution time, written as UTC.

Usage: ``python -m benchmarks.real_session_export EXPORT.md OUT_DIR [--trim N]`` writes one
``<name>-<k>.jsonl`` per compaction (the entries since the previous one, up to the summary) and
``<name>-<k>.summary.md`` (the host's summary of them). ``--trim`` shortens tool results longer
than N characters to their head and tail, marked (and drops thinking-block signatures).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import uuid
from pathlib import Path
from typing import Any

SUMMARY_PREFIX = "This session is being continued from a previous conversation"
_ENTRY = re.compile(r"^### (User|Assistant)\n> ([^\n]+)\n\n", re.MULTILINE)
_SESSION = re.compile(r"\*\*Session ID\*\*: `([^`]+)`")


def _timestamp(raw: str) -> str:
    for fmt in ("%m/%d/%Y, %I:%M:%S %p", "%m/%d/%Y, %I:%M %p"):
        try:
            return dt.datetime.strptime(raw.strip(), fmt).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        except ValueError:
            continue
    return raw.strip()


def _content(raw: str) -> Any:
    body = raw.strip()
    if body.startswith("["):
        try:
            value = json.loads(body)
        except json.JSONDecodeError:
            return body
        if isinstance(value, list) and all(isinstance(b, dict) and "type" in b for b in value):
            return value
    return body


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


def parse_export(text: str, *, builtin_meta: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """(session id, transcript entries) of one export.

    ``builtin_meta=False`` marks meta only the prompt a custom command expands to (its entry
    says ``… is running…``): after a built-in command such as ``/clear`` the next user entry is
    the user's own prompt. The default keeps the first rebuild's behaviour, which the committed
    ``real_sessions`` files and the lessons evaluation were made with."""
    found = _SESSION.search(text)
    session = found.group(1) if found else "unknown"
    marks = list(_ENTRY.finditer(text))
    entries: list[dict[str, Any]] = []
    parent: str | None = None
    reply = 0
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        raw = text[mark.end() : end]
        raw = re.sub(r"\n---\s*$", "", raw.rstrip())
        role = mark.group(1).lower()
        content = _content(raw)
        uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/{i}"))
        entry: dict[str, Any] = {
            "type": role,
            "uuid": uid,
            "parentUuid": parent,
            "sessionId": session,
            "timestamp": _timestamp(mark.group(2)),
            "message": {"role": role, "content": content},
        }
        if role == "assistant":
            if not entries or entries[-1]["type"] != "assistant":
                reply += 1
            entry["message"]["id"] = f"msg_{session[:8]}_{reply:05d}"
        elif _text(content).lstrip().startswith(SUMMARY_PREFIX):
            entries.append(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/{i}/boundary")),
                    "parentUuid": None,
                    "logicalParentUuid": parent,
                    "sessionId": session,
                    "timestamp": entry["timestamp"],
                    "content": "Conversation compacted",
                    "compactMetadata": {"trigger": "auto", "preTokens": 0},
                }
            )
            entry["isCompactSummary"] = True
            entry["isVisibleInTranscriptOnly"] = True
        elif (
            entries
            and entries[-1]["type"] == "user"
            and "<command-name>" in _text(entries[-1]["message"]["content"])
            and (builtin_meta or "is running" in _text(entries[-1]["message"]["content"]))
        ):
            entry["isMeta"] = True
        entries.append(entry)
        parent = uid
    return session, entries


def trim_results(entries: list[dict[str, Any]], limit: int) -> None:
    """Tool results over ``limit`` chars keep their head and tail (errors sit at the end)."""
    head, tail = limit * 3 // 4, limit // 4

    def cut(text: str) -> str:
        if len(text) <= limit:
            return text
        return f"{text[:head]}\n[… {len(text) - head - tail} characters trimmed …]\n{text[-tail:]}"

    for entry in entries:
        content = entry.get("message", {}).get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            block.pop("signature", None)  # opaque base64 on thinking blocks: no content
            if block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            if isinstance(inner, str):
                block["content"] = cut(inner)
            elif isinstance(inner, list):
                for part in inner:
                    if part.get("type") == "text" and isinstance(part.get("text"), str):
                        part["text"] = cut(part["text"])


def segments(entries: list[dict[str, Any]]) -> list[tuple[list[dict[str, Any]], str]]:
    """(entries since the previous compaction, the host's summary of them) per compaction."""
    out: list[tuple[list[dict[str, Any]], str]] = []
    start = 0
    for i, entry in enumerate(entries):
        if entry.get("isCompactSummary"):
            chunk = [e for e in entries[start:i] if e.get("subtype") != "compact_boundary"]
            if any(e["type"] == "assistant" for e in chunk):
                out.append((chunk, _text(entry["message"]["content"])))
            start = i + 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--name", default=None)
    parser.add_argument("--trim", type=int, default=4000)
    args = parser.parse_args()
    session, entries = parse_export(args.export.read_text("utf-8"))
    trim_results(entries, args.trim)
    args.out.mkdir(parents=True, exist_ok=True)
    name = args.name or session[:8]
    for k, (chunk, summary) in enumerate(segments(entries), start=1):
        path = args.out / f"{name}-{k}.jsonl"
        path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in chunk), "utf-8")
        (args.out / f"{name}-{k}.summary.md").write_text(summary + "\n", "utf-8")
        print(f"{path}: {len(chunk)} entries, summary {len(summary)} chars")


if __name__ == "__main__":
    main()
