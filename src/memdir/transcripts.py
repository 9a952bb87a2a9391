"""Session transcripts: append-only JSONL, one message object per line (reference layout).

Layout: ``<projects>/<sanitize(cwd)>/<sessionId>.jsonl``; sub-agents under
``<sessionId>/subagents/agent-<id>.jsonl``. Files 0600, directories 0700.

The one exception to "every write goes through ``atomic_write``": a transcript is a log that only
grows. Rewriting it through a temp file on every message would cost O(n²) over a session and race
with readers that follow the file. Instead each append is a single ``O_APPEND`` write of complete
lines, taken under the transcript's lock file, so bytes already written never change. After a
crash the file is a prefix of complete lines plus at most one torn line; readers skip (and report)
lines that do not parse, and the next append starts on a fresh line so it is not glued onto the
torn fragment. Reads are capped at 50 MB (the newest 50 MB are kept).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.atomic import FILE_MODE, ensure_dir, locked
from memdir.errors import MemoryNotFoundError
from memdir.pathsafe import open_regular

MAX_READ_BYTES = 50 * 1024 * 1024
TRANSCRIPT_SUFFIX = ".jsonl"
_UUID_NAME = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # cheap test on the raw line
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

Entry = dict[str, Any]
Content = str | Sequence[Mapping[str, Any]]


def new_uuid() -> str:
    return str(uuid.uuid4())


def timestamp(now: dt.datetime | None = None) -> str:
    """ISO-8601 UTC with milliseconds and ``Z``, as the reference writes it."""
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def is_session_id(name: str) -> bool:
    """True for a UUID-shaped session id (the only transcripts the dream gate counts)."""
    return bool(_UUID_NAME.match(name))


# -- content blocks -------------------------------------------------------------------------


def text_block(text: str) -> Entry:
    return {"type": "text", "text": text}


def tool_use_block(
    name: str, tool_input: Mapping[str, Any], *, block_id: str | None = None
) -> Entry:
    return {
        "type": "tool_use",
        "id": block_id or f"toolu_{uuid.uuid4().hex[:24]}",
        "name": name,
        "input": dict(tool_input),
    }


def tool_result_block(tool_use_id: str, content: Content, *, is_error: bool = False) -> Entry:
    block: Entry = {"type": "tool_result", "tool_use_id": tool_use_id, "content": _content(content)}
    if is_error:
        block["is_error"] = True
    return block


def _content(content: Content) -> str | list[Entry]:
    return content if isinstance(content, str) else [dict(b) for b in content]


# -- appending ------------------------------------------------------------------------------


def _line(entry: Mapping[str, Any]) -> bytes:
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate: escape it rather than write invalid UTF-8
        return json.dumps(entry, separators=(",", ":")).encode("ascii") + b"\n"


def append_entries(
    path: Path, entries: Iterable[Mapping[str, Any]], *, durable: bool = True
) -> None:
    """Append entries as JSON lines in one ``O_APPEND`` write under the transcript lock;
    ``durable=False`` does not wait for the disk (a best-effort log, never a transcript)."""
    payload = b"".join(_line(e) for e in entries)
    if not payload:
        return
    ensure_dir(path.parent)
    with locked(path.with_name(path.name + ".lock")):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload  # a torn line from a crashed writer: start afresh
            while payload:
                written = os.write(fd, payload)
                payload = payload[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)


@dataclass
class Transcript:
    """One session's transcript: fills the envelope fields and chains ``parentUuid``."""

    path: Path
    session_id: str
    cwd: str
    version: str = "memdir"
    git_branch: str | None = None
    agent_id: str | None = None
    last_uuid: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def resume(cls, path: Path, *, session_id: str, cwd: str, **kwargs: Any) -> Transcript:
        """Continue an existing file: the next entry's parent is its last message."""
        last: str | None = None
        if path.exists():
            for entry in read_transcript(path).entries:
                if isinstance(entry.get("uuid"), str):
                    last = entry["uuid"]
        return cls(path, session_id, cwd, last_uuid=last, **kwargs)

    def _envelope(self, kind: str, *, boundary: bool = False, uuid: str | None = None) -> Entry:
        entry: Entry = {
            "parentUuid": None if boundary else self.last_uuid,
            "isSidechain": self.agent_id is not None,
            "type": kind,
            "uuid": uuid or new_uuid(),
            "timestamp": timestamp(),
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "version": self.version,
        }
        if self.agent_id is not None:
            entry["agentId"] = self.agent_id
        if self.git_branch:
            entry["gitBranch"] = self.git_branch
        entry.update(self.extra)
        return entry

    def _add(self, entry: Entry) -> Entry:
        append_entries(self.path, [entry])
        self.last_uuid = entry["uuid"]
        return entry

    def user(
        self,
        content: Content,
        *,
        is_meta: bool = False,
        is_compact_summary: bool = False,
        boundary: bool = False,
        tool_use_result: Any = None,
        uuid: str | None = None,
    ) -> Entry:
        """A user turn (text, or content blocks such as tool results)."""
        entry = self._envelope("user", boundary=boundary, uuid=uuid)
        entry["message"] = {"role": "user", "content": _content(content)}
        if is_meta:
            entry["isMeta"] = True
        if is_compact_summary:
            entry["isCompactSummary"] = True
        if tool_use_result is not None:
            entry["toolUseResult"] = tool_use_result
        return self._add(entry)

    def assistant(
        self,
        content: Content,
        *,
        model: str,
        message_id: str | None = None,
        usage: Mapping[str, int] | None = None,
        stop_reason: str | None = "end_turn",
        uuid: str | None = None,
    ) -> Entry:
        """An assistant turn; content blocks may include ``tool_use`` blocks."""
        blocks = [text_block(content)] if isinstance(content, str) else _content(content)
        entry = self._envelope("assistant", uuid=uuid)
        entry["message"] = {
            "id": message_id or f"msg_{new_uuid().replace('-', '')[:24]}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop_reason,
            "usage": dict(usage or {"input_tokens": 0, "output_tokens": 0}),
        }
        return self._add(entry)

    def tool_result(self, tool_use_id: str, content: Content, *, is_error: bool = False) -> Entry:
        """The user-side message carrying one tool's result."""
        block = tool_result_block(tool_use_id, content, is_error=is_error)
        return self.user([block], tool_use_result=_content(content))

    def compact_boundary(
        self,
        *,
        pre_tokens: int,
        trigger: str = "auto",
        preserved: Mapping[str, str] | None = None,
        uuid: str | None = None,
    ) -> Entry:
        """A compact-boundary marker: the conversation before it was replaced by the summary
        entry that follows. ``parentUuid`` is null (a new chain starts); ``logicalParentUuid``
        keeps the link. ``preserved`` names the kept segment (``headUuid``/``tailUuid``)."""
        entry = self._envelope("system", boundary=True, uuid=uuid)
        entry["subtype"] = "compact_boundary"
        entry["content"] = "Conversation compacted"
        entry["logicalParentUuid"] = self.last_uuid
        metadata: Entry = {"trigger": trigger, "preTokens": pre_tokens}
        if preserved:
            metadata["preservedSegment"] = dict(preserved)
        entry["compactMetadata"] = metadata
        return self._add(entry)

    def summary(self, summary: str, *, leaf_uuid: str | None = None) -> Entry:
        """A ``summary`` entry (no envelope, does not move the parent chain)."""
        entry: Entry = {
            "type": "summary",
            "summary": summary,
            "leafUuid": leaf_uuid or self.last_uuid,
        }
        append_entries(self.path, [entry])
        return entry


# -- reading --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TranscriptIssue:
    """A line that was skipped, with its 1-based number within what was read."""

    line: int
    reason: str


@dataclass(frozen=True)
class TranscriptRead:
    entries: list[Entry]
    issues: list[TranscriptIssue]
    truncated: bool  # the file exceeded the read cap; only its newest part was read


def read_transcript(path: Path, *, max_bytes: int = MAX_READ_BYTES) -> TranscriptRead:
    """Parse a transcript, skipping (and reporting) torn, corrupt or too deeply nested lines.

    Raises :class:`MemoryNotFoundError` when there is no file and :class:`UnreadableFileError`
    when the path is not a regular file (a FIFO would block, a device never ends).
    """
    try:  # a FIFO or device at the path is refused at once instead of blocking the reader
        with open(open_regular(path), "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            truncated = size > max_bytes
            if truncated:
                fh.seek(size - max_bytes)
            data = fh.read(max_bytes)
    except FileNotFoundError:
        raise MemoryNotFoundError(f"no transcript at {path}") from None
    if truncated:
        data = data[data.find(b"\n") + 1 :]  # the first line was cut by the cap
    entries: list[Entry] = []
    issues: list[TranscriptIssue] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            issues.append(TranscriptIssue(number, f"torn or corrupt line skipped ({exc})"))
            continue
        except RecursionError:  # the decoder's own depth bound: a hostile line, not a crash
            issues.append(TranscriptIssue(number, "line nested too deeply to parse; skipped"))
            continue
        if not isinstance(value, dict):
            issues.append(TranscriptIssue(number, "line is not a JSON object; skipped"))
            continue
        if _SURROGATE_ESCAPE.search(raw):
            _replace_lone_surrogates(value)
        entries.append(value)
    return TranscriptRead(entries, issues, truncated)


def _replace_lone_surrogates(entry: Entry) -> None:
    """Replace lone surrogates (valid JSON escapes, invalid text) with U+FFFD, in place.

    A broken client can write ``"\\ud800"``; left in, it fails every later UTF-8 encode (the notes
    file, ``--json`` output, a provider request). Iterative: the decoder allows ~1,000 levels.
    """
    stack: list[dict[str, Any] | list[Any]] = [entry]
    while stack:
        node = stack.pop()
        keys: Iterable[Any] = list(node) if isinstance(node, dict) else range(len(node))
        for key in keys:
            value = node[key]
            if isinstance(value, str):
                node[key] = _LONE_SURROGATE.sub("\ufffd", value)
            elif isinstance(value, dict | list):
                stack.append(value)
            if isinstance(node, dict) and _LONE_SURROGATE.search(key):
                node[_LONE_SURROGATE.sub("\ufffd", key)] = node.pop(key)


def conversation(entries: Iterable[Entry]) -> list[Entry]:
    """Only the user and assistant message entries, in file order."""
    return [e for e in entries if e.get("type") in ("user", "assistant") and "message" in e]


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    path: Path
    mtime: float
    size: int


def list_sessions(
    transcripts_dir: Path, since: float = 0.0, exclude: str | None = None
) -> list[SessionInfo]:
    """UUID-named ``*.jsonl`` transcripts modified after ``since`` (epoch seconds), newest first.

    ``exclude`` drops the current session, so a session never counts towards its own dream.
    """
    found: list[SessionInfo] = []
    try:
        candidates = list(transcripts_dir.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    for path in candidates:
        sid = path.name[: -len(TRANSCRIPT_SUFFIX)]
        if not path.name.endswith(TRANSCRIPT_SUFFIX) or not is_session_id(sid) or sid == exclude:
            continue
        try:
            st = path.stat()
        except OSError:
            continue  # vanished between listing and stat
        if st.st_mtime > since and path.is_file():
            found.append(SessionInfo(sid, path, st.st_mtime, st.st_size))
    found.sort(key=lambda s: s.mtime, reverse=True)
    return found
