"""This project's past sessions in each host's own files, for ``memdir backfill``.

A dialect that can say which of its transcripts belong to a project has the optional method
``project_transcripts(env, project_root) -> list[Path]`` (found with ``getattr``, like
``compactions``); the functions here implement it for each host. "Belongs" means the session
ran in the project root or a directory under it, as the host itself recorded:

- Claude Code: ``<projects>/<sanitised cwd>/*.jsonl``; a directory named after the root is the
  root's, one named after the root plus ``-…`` may be a subdirectory's *or* a sibling's
  (``/a/b`` and ``/a/b-c`` sanitise alike), so there the ``cwd`` a line records decides;
- Codex: ``sessions/YYYY/MM/DD/rollout-*.jsonl`` whose first line (``session_meta``) has a
  ``cwd`` inside the root;
- Copilot CLI: ``session-state/<id>/events.jsonl`` whose first record (``session.start``)
  has a ``context.cwd`` inside the root;
- Qwen Code: Claude Code's rule, in ``projects/<sanitised cwd>/chats/``;
- Cline: ``data/sessions/<id>/<id>.messages.json`` whose ``<id>.json`` names a ``cwd`` (or
  ``workspace_root``) inside the root;
- Gemini CLI: ``tmp/<slug>/chats/session-*.{jsonl,json}`` where ``tmp/<slug>/.project_root``
  names a directory inside the root (or the slug is the older ``sha256(root)``).

:class:`DialectSource` is what the backfill service reads through: the dialect's own reader
(``read_entries``, else memdir's), behind the same check a hook's ``transcript_path`` gets (a
regular file; a symlink only into the host's own transcript dirs).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.paths import sanitize_path
from memdir.pathsafe import is_within, open_regular

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect
    from memdir.transcripts import Entry

HEAD_BYTES = 4 * 1024 * 1024  # Codex's session_meta carries its base instructions (~20 KB)
_CWD_LINES = 10  # Claude Code: its first lines (summaries and snapshots carry no cwd)


def _inside(raw: Any, root: Path) -> bool:
    if not isinstance(raw, str) or not raw:
        return False
    path = raw.removeprefix("file://")
    return is_within(Path(os.path.realpath(root)), Path(os.path.realpath(path)))


def _head_lines(path: Path, count: int) -> list[Any]:
    """The first ``count`` JSON lines of ``path`` (never blocking on a FIFO); [] if unreadable.
    Read in chunks, so a listing reads kilobytes of each transcript, not megabytes."""
    data = b""
    try:
        with open(open_regular(path), "rb") as fh:
            while data.count(b"\n") < count and len(data) < HEAD_BYTES:
                chunk = fh.read(64 * 1024)
                if not chunk:
                    break
                data += chunk
    except (OSError, ValueError):
        return []
    out = []
    for raw in data.split(b"\n")[:count]:
        try:
            out.append(json.loads(raw))
        except (ValueError, RecursionError):
            continue
    return out


def _files(directory: Path, suffixes: tuple[str, ...]) -> list[Path]:
    try:
        listed = sorted(directory.iterdir())
    except OSError:
        return []
    return [p for p in listed if p.name.endswith(suffixes) and not p.name.startswith(".")]


def claude_code_transcripts(projects: Path, project_root: Path, *, within: str = "") -> list[Path]:
    """``within``: the sub-directory of a project's directory that holds the sessions (Qwen
    Code's ``chats``; Claude Code keeps them in the directory itself)."""
    slug = sanitize_path(str(project_root))
    found: list[Path] = []
    for directory in _files(projects, ("",)):
        exact = directory.name == slug
        if not (exact or directory.name.startswith(slug + "-")):
            continue
        for path in _files(directory / within if within else directory, (".jsonl",)):
            cwds = [e.get("cwd") for e in _head_lines(path, _CWD_LINES) if isinstance(e, dict)]
            known = [c for c in cwds if isinstance(c, str)]
            if (known and _inside(known[0], project_root)) or (exact and not known):
                found.append(path)  # an unreadable file in the root's dir: reported on read
    return found


def codex_rollouts(sessions: Path, project_root: Path) -> list[Path]:
    found = []
    for path in sorted(sessions.glob("*/*/*/rollout-*.jsonl")):
        head = _head_lines(path, 1)
        meta = head[0] if head and isinstance(head[0], dict) else {}
        payload = meta.get("payload") if meta.get("type") == "session_meta" else None
        if isinstance(payload, dict) and _inside(payload.get("cwd"), project_root):
            found.append(path)
    return found


def copilot_sessions(state: Path, project_root: Path) -> list[Path]:
    """``session-state/<id>/events.jsonl`` whose ``session.start`` names a cwd in the root."""
    found = []
    for directory in _files(state, ("",)):
        path = directory / "events.jsonl"
        head = _head_lines(path, 1)
        first = head[0] if head and isinstance(head[0], dict) else {}
        data = first.get("data") if first.get("type") == "session.start" else None
        context = data.get("context") if isinstance(data, dict) else None
        if isinstance(context, dict) and _inside(context.get("cwd"), project_root):
            found.append(path)
    return found


def cline_sessions(sessions: Path, project_root: Path) -> list[Path]:
    """``<id>/<id>.messages.json`` whose ``<id>.json`` names a cwd in the root."""
    from memdir.errors import MemdirError
    from memdir.pathsafe import read_regular

    found = []
    for directory in _files(sessions, ("",)):
        try:
            meta = json.loads(read_regular(directory / f"{directory.name}.json", limit=HEAD_BYTES))
        except (MemdirError, OSError, ValueError, RecursionError):
            continue
        if not isinstance(meta, dict):
            continue
        if _inside(meta.get("cwd"), project_root) or _inside(
            meta.get("workspace_root"), project_root
        ):
            messages = directory / f"{directory.name}.messages.json"
            if messages.is_file():
                found.append(messages)
    return found


def gemini_sessions(tmp: Path, project_root: Path) -> list[Path]:
    hashes = {hashlib.sha256(str(project_root).encode()).hexdigest()}
    found: list[Path] = []
    for directory in _files(tmp, ("",)):
        try:
            owner = (directory / ".project_root").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            owner = ""
        if _inside(owner, project_root) or directory.name in hashes:
            found += _files(directory / "chats", (".jsonl", ".json"))
    return found


_UUID_TAIL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


def session_id_of(host: str, path: Path) -> str | None:
    """The session id the host's hooks send for the session in ``path`` (None if unknown):
    Claude Code's file name, the thread id that ends a Codex rollout's name, the ``sessionId``
    of a Gemini CLI session file's header."""
    if host == "gemini":
        head = _head_lines(path, 1)
        sid = head[0].get("sessionId") if head and isinstance(head[0], dict) else None
        return sid if isinstance(sid, str) and _SAFE_ID.match(sid) else None
    if host == "copilot":  # session-state/<id>/events.jsonl
        sid = path.parent.name
        return sid if _SAFE_ID.match(sid) else None
    found = _UUID_TAIL.search(path.stem)
    return found.group(0) if found and (host == "codex" or found.start() == 0) else None


_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class DialectSource:
    """A :class:`~memdir.backfill.plan.TranscriptSource` over one host's dialect."""

    def __init__(self, dialect: Dialect, env: Mapping[str, str], project_root: Path) -> None:
        self.dialect = dialect
        self.env = env
        self.project_root = project_root

    @property
    def host(self) -> str:
        return self.dialect.name

    def transcripts(self) -> Sequence[Path]:
        lister = getattr(self.dialect, "project_transcripts", None)
        return lister(self.env, self.project_root) if callable(lister) else []

    def read(self, path: Path) -> list[Entry]:
        from memdir.adapters.hooks.transcript_file import checked_transcript
        from memdir.transcripts import read_transcript

        real = checked_transcript(str(path), self.dialect.transcript_roots(self.env))
        entries = self.dialect.read_entries(real)
        return read_transcript(real).entries if entries is None else entries


__all__ = [
    "DialectSource",
    "claude_code_transcripts",
    "cline_sessions",
    "codex_rollouts",
    "copilot_sessions",
    "gemini_sessions",
    "session_id_of",
]
