"""Past sessions written as the hosts write them, for the backfill tests and benchmark.

Claude Code's transcripts are built with memdir's own writer shape (it is Claude Code's), with
the timestamps of the day the session happened; Codex's and Gemini CLI's copy the recorded
fixtures under ``tests/fixtures/hosts`` into a fake home, pointed at the test's project.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

from memdir.paths import sanitize_path
from memdir.transcripts import Entry, append_entries, read_transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
DAY0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


def claude_dir(home: Path, cwd: Path) -> Path:
    return home / ".claude" / "projects" / sanitize_path(str(cwd))


def claude_session(
    home: Path,
    cwd: Path,
    turns: Sequence[tuple[str, str]],
    *,
    when: dt.datetime = DAY0,
    session_id: str | None = None,
) -> Path:
    """A Claude Code transcript of ``(role, text)`` turns that happened at ``when``; its mtime
    is ``when`` too (backfill orders by it)."""
    sid = session_id or str(uuid.uuid4())
    path = claude_dir(home, cwd) / f"{sid}.jsonl"
    entries: list[Entry] = []
    parent = None
    for n, (role, text) in enumerate(turns):
        stamp = (when + dt.timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        entry: Entry = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": role,
            "uuid": str(uuid.uuid4()),
            "timestamp": stamp,
            "sessionId": sid,
            "cwd": str(cwd),
            "version": "2.0.0",
            "message": {"role": role, "content": [{"type": "text", "text": text}]},
        }
        if role == "assistant":
            entry["message"] |= {"model": "claude-haiku-4-5", "type": "message"}
        entries.append(entry)
        parent = entry["uuid"]
    append_entries(path, entries)
    stamp_file(path, when)
    return path


def stamp_file(path: Path, when: dt.datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


def codex_rollout(home: Path, cwd: Path, *, when: dt.datetime = DAY0) -> Path:
    """The recorded Codex rollout, as if it ran in ``cwd``."""
    text = (FIXTURES / "codex" / "rollouts" / "session-1.jsonl").read_text(encoding="utf-8")
    text = text.replace("/work/project", str(cwd))
    day = home / ".codex" / "sessions" / f"{when:%Y}" / f"{when:%m}" / f"{when:%d}"
    day.mkdir(parents=True, exist_ok=True)
    path = day / f"rollout-{when:%Y-%m-%dT%H-%M-%S}-{uuid.uuid4()}.jsonl"
    path.write_text(text, encoding="utf-8")
    stamp_file(path, when)
    return path


def gemini_session(home: Path, cwd: Path, *, when: dt.datetime = DAY0) -> Path:
    """The recorded Gemini CLI session file, in the slug dir of ``cwd``."""
    slug = home / ".gemini" / "tmp" / cwd.name.lower()
    (slug / "chats").mkdir(parents=True, exist_ok=True)
    (slug / ".project_root").write_text(str(cwd), encoding="utf-8")
    path = slug / "chats" / f"session-{when:%Y-%m-%dT%H-%M}-{uuid.uuid4().hex[:8]}.jsonl"
    path.write_bytes((FIXTURES / "gemini" / "session" / "recorded.jsonl").read_bytes())
    stamp_file(path, when)
    return path


def user_texts(path: Path) -> list[str]:
    """The user's words in a memdir-shaped transcript (to check what a fixture says)."""
    out = []
    for entry in read_transcript(path).entries:
        message = entry.get("message") or {}
        if entry.get("type") == "user":
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "text":
                    out.append(block["text"])
    return out


def dump(path: Path, value: object) -> None:
    path.write_text(json.dumps(value), encoding="utf-8")
