"""Agent memory snapshots: a project ships an agent's memory; each checkout adopts it once.

Layout (reference §11): ``<project config>/agent-memory-snapshots/<type>/`` holds the memory
files plus ``snapshot.json`` (``{"updatedAt": ISO-8601}``); an agent memory dir that adopted a
snapshot records it in ``.snapshot-synced.json`` (``{"syncedFrom": <that updatedAt>}``).

:func:`check_snapshot` decides, in order: no (valid) snapshot -> ``none``; no local ``*.md`` ->
``initialize`` (safe: nothing to lose); no marker, or the snapshot is newer than the marker ->
``prompt-update`` (the user decides: local memory may hold things the snapshot lacks); else
``none``. :func:`initialize` copies, :func:`replace` deletes the local top-level ``*.md`` first.

Invariants beyond the reference, because a snapshot comes from a repository someone else wrote:

* Only regular, non-hidden top-level files are copied, never a symlink (a snapshot file linking
  to ``~/.ssh/id_rsa`` would otherwise copy the key into memory and from there into prompts),
  never a file over :data:`MAX_FILE_BYTES`; skipped files are reported with the reason.
* Every copy is an atomic write under the agent dir's store lock.
* :func:`write_snapshot` (which produces a file meant to be committed) refuses content that holds
  credentials, naming only the rule labels.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from memdir.agents.scopes import AgentMemory
from memdir.atomic import atomic_write, ensure_dir
from memdir.errors import SecretFoundError
from memdir.pathsafe import read_regular
from memdir.store import MemoryStore
from memdir.team.secrets import labels, scan_bytes

SNAPSHOT_JSON = "snapshot.json"
SYNCED_JSON = ".snapshot-synced.json"
MAX_FILE_BYTES = 1024 * 1024
Action = Literal["none", "initialize", "prompt-update"]


@dataclass(frozen=True)
class SnapshotCheck:
    """What to do about an agent's snapshot; ``note`` explains a ``none`` that hides a problem."""

    action: Action
    snapshot_dir: Path
    updated_at: str | None = None
    synced_from: str | None = None
    note: str | None = None


@dataclass
class SnapshotCopy:
    """Files copied (names), files skipped (name, reason), files removed first (replace)."""

    copied: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    updated_at: str | None = None


def _read_json_key(path: Path, key: str) -> tuple[str | None, str | None]:
    """(value, problem): the string at ``key`` in a small JSON object file."""
    try:
        raw = read_regular(path, limit=1_000_000)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{path}: cannot read ({exc.strerror})"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, f"{path}: not valid JSON; ignored"
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str) or _parse_time(value) is None:
        return None, f"{path}: {key!r} must be an ISO-8601 timestamp; ignored"
    return value, None


def _parse_time(value: str) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _later(a: str, b: str) -> bool:
    first, second = _parse_time(a), _parse_time(b)
    return first is not None and second is not None and first > second


def _has_local_memory(agent: AgentMemory) -> bool:
    return any(True for _ in _regular_md(agent.memory_dir))


def check_snapshot(agent: AgentMemory, snapshot_dir: Path) -> SnapshotCheck:
    updated, problem = _read_json_key(snapshot_dir / SNAPSHOT_JSON, "updatedAt")
    if updated is None:
        return SnapshotCheck("none", snapshot_dir, note=problem)
    if not _has_local_memory(agent):
        return SnapshotCheck("initialize", snapshot_dir, updated_at=updated)
    synced, problem = _read_json_key(agent.memory_dir / SYNCED_JSON, "syncedFrom")
    newer = synced is None or _later(updated, synced)
    action: Action = "prompt-update" if newer else "none"
    return SnapshotCheck(action, snapshot_dir, updated_at=updated, synced_from=synced, note=problem)


def _regular_md(root: Path) -> list[Path]:
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    return sorted(
        Path(e.path)
        for e in entries
        if e.name.endswith(".md")
        and not e.name.startswith(".")
        and e.is_file(follow_symlinks=False)
    )


def _copyable(path: Path) -> tuple[bytes | None, str | None]:
    """(content, skip reason) for one snapshot entry."""
    try:
        info = path.lstat()
    except OSError as exc:
        return None, f"cannot stat ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return None, "symlink (never followed out of a snapshot)"
    if not stat.S_ISREG(info.st_mode):
        return None, "not a regular file"
    if info.st_size > MAX_FILE_BYTES:
        return None, f"{info.st_size} bytes is over the {MAX_FILE_BYTES}-byte limit"
    try:
        return read_regular(path, follow_symlinks=False), None
    except OSError as exc:
        return None, f"cannot read ({exc.strerror})"


def _copy_in(agent: AgentMemory, snapshot_dir: Path, result: SnapshotCopy) -> None:
    try:
        names = sorted(os.listdir(snapshot_dir))
    except OSError:
        names = []
    for name in names:
        if name == SNAPSHOT_JSON or name.startswith("."):
            continue
        data, reason = _copyable(snapshot_dir / name)
        if data is None:
            result.skipped.append((name, reason or "skipped"))
            continue
        atomic_write(agent.memory_dir / name, data)
        result.copied.append(name)


def _adopt(agent: AgentMemory, check: SnapshotCheck, *, remove_first: bool) -> SnapshotCopy:
    result = SnapshotCopy(updated_at=check.updated_at)
    ensure_dir(agent.memory_dir)
    with MemoryStore(agent.memory_dir).lock():
        if remove_first:
            for path in _regular_md(agent.memory_dir):
                path.unlink()
                result.removed.append(path.name)
        _copy_in(agent, check.snapshot_dir, result)
        marker = json.dumps({"syncedFrom": check.updated_at}) + "\n"
        atomic_write(agent.memory_dir / SYNCED_JSON, marker)
    return result


def initialize(agent: AgentMemory, check: SnapshotCheck) -> SnapshotCopy:
    """Copy the snapshot into an agent dir that has no memories yet, and mark it synced."""
    return _adopt(agent, check, remove_first=False)


def replace(agent: AgentMemory, check: SnapshotCheck) -> SnapshotCopy:
    """Delete the agent's top-level ``*.md`` files, then copy the snapshot in and mark it."""
    return _adopt(agent, check, remove_first=True)


def write_snapshot(
    agent: AgentMemory,
    snapshot_dir: Path,
    *,
    clock: Callable[[], dt.datetime] | None = None,
) -> SnapshotCopy:
    """Publish the agent's top-level memory files (and ``MEMORY.md``) as the project snapshot.

    Files in the snapshot that the agent no longer has are removed; ``snapshot.json`` gets the
    current time; the agent dir is marked as synced to it (its owner is not asked to adopt what
    it just published). Raises SecretFoundError, writing nothing, if any file holds credentials.
    """
    now = clock() if clock is not None else dt.datetime.now(dt.UTC)
    stamp = now.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    result = SnapshotCopy(updated_at=stamp)
    with MemoryStore(agent.memory_dir).lock():
        contents: dict[str, bytes] = {}
        for path in _regular_md(agent.memory_dir):
            data, reason = _copyable(path)
            if data is None:
                result.skipped.append((path.name, reason or "skipped"))
                continue
            found = scan_bytes(data)
            if found:
                raise SecretFoundError(labels(found), path=str(path))
            contents[path.name] = data
        ensure_dir(snapshot_dir)
        for stale in _regular_md(snapshot_dir):
            if stale.name not in contents:
                stale.unlink()
                result.removed.append(stale.name)
        for name, data in contents.items():
            atomic_write(snapshot_dir / name, data)
            result.copied.append(name)
        atomic_write(snapshot_dir / SNAPSHOT_JSON, json.dumps({"updatedAt": stamp}) + "\n")
        atomic_write(agent.memory_dir / SYNCED_JSON, json.dumps({"syncedFrom": stamp}) + "\n")
    return result


__all__ = [
    "MAX_FILE_BYTES",
    "SNAPSHOT_JSON",
    "SYNCED_JSON",
    "SnapshotCheck",
    "SnapshotCopy",
    "check_snapshot",
    "initialize",
    "replace",
    "write_snapshot",
]
