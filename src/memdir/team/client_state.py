"""What the sync client remembers between runs, and how it reads the local team directory.

Invariants:

- Sync state (last server checksum, per-entry server checksums, learned entry limit) is derived
  data: it lives in the cache dir, never in the memory dir, and losing it only costs a full
  re-upload check. It is written with :func:`memdir.atomic.atomic_write`.
- :func:`read_local` reads each file once and decides what may leave the machine: files over
  ``MAX_ENTRY_BYTES``, non-UTF-8 files, files holding a NUL character (the server refuses
  them), names that fail team key validation and files in which
  the secret scanner finds a credential are skipped and reported by path and rule label only.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.atomic import atomic_write
from memdir.errors import PathTraversalError
from memdir.team import secrets, wire
from memdir.team.keys import check_key_shape, sanitize_key


@dataclass
class SyncState:
    """``pulled_checksum``/``pulled_version``: the server state whose every entry we hold (for
    If-None-Match). ``last_checksum``: the latest server checksum we know of (for If-Match); it
    runs ahead of the pulled state after a hashes probe or a write by someone else, and then the
    next pull must fetch content rather than accept a 304.
    """

    pulled_checksum: str | None = None
    pulled_version: int | None = None
    last_checksum: str | None = None
    server_checksums: dict[str, str] = field(default_factory=dict)
    server_max_entries: int | None = None

    @classmethod
    def load(cls, path: Path) -> SyncState:
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()  # missing or corrupt: derived data, start over
        if not isinstance(data, dict):
            return cls()
        checksums = data.get("serverChecksums")
        max_entries = data.get("serverMaxEntries")
        last = data.get("lastChecksum")
        pulled = data.get("pulledChecksum")
        pulled_version = data.get("pulledVersion")
        return cls(
            pulled_checksum=pulled if isinstance(pulled, str) else None,
            pulled_version=pulled_version if isinstance(pulled_version, int) else None,
            last_checksum=last if isinstance(last, str) else None,
            server_checksums=(
                {k: v for k, v in checksums.items() if isinstance(v, str)}
                if isinstance(checksums, dict)
                else {}
            ),
            server_max_entries=max_entries if isinstance(max_entries, int) else None,
        )

    def save(self, path: Path) -> None:
        payload = {
            "pulledChecksum": self.pulled_checksum,
            "pulledVersion": self.pulled_version,
            "lastChecksum": self.last_checksum,
            "serverChecksums": self.server_checksums,
            "serverMaxEntries": self.server_max_entries,
        }
        atomic_write(path, json.dumps(payload, indent=1, sort_keys=True) + "\n")


def state_path(cache_dir: Path, url: str, repo: str, team_dir: Path) -> Path:
    """One state file per (server, repository, team dir) so two setups never share checksums."""
    ident = hashlib.sha256(f"{url.rstrip('/')}\0{repo}\0{team_dir}".encode()).hexdigest()[:16]
    return cache_dir / "team-sync" / f"{ident}.json"


@dataclass(frozen=True)
class Skipped:
    """A file or entry that was not synced, and why (a rule label, never a secret value)."""

    key: str
    reason: str


@dataclass
class LocalFiles:
    entries: dict[str, str] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)


def pending_upload(local: LocalFiles, state: SyncState) -> list[str]:
    """Local entries the server does not hold as they are (new or changed since the last sync)."""
    return sorted(
        k for k, v in local.entries.items() if state.server_checksums.get(k) != wire.checksum(v)
    )


def read_local(team_dir: Path) -> LocalFiles:
    """Walk ``team_dir`` once; return the shareable entries keyed by POSIX relative path."""
    found = LocalFiles()
    if not team_dir.is_dir():
        return found
    for dirpath, dirnames, filenames in os.walk(team_dir):
        # Hidden names are atomic-write temp files, lock files and tool state: never shared.
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            key = path.relative_to(team_dir).as_posix()
            _read_one(path, key, found)
    found.skipped.sort(key=lambda s: s.key)
    return found


def _read_one(path: Path, key: str, found: LocalFiles) -> None:
    if path.is_symlink() or not path.is_file():
        found.skipped.append(Skipped(key, "not a regular file"))
        return
    try:
        check_key_shape(key)  # the server would refuse the whole batch for it
        if sanitize_key(key) != key:
            raise PathTraversalError(key)
    except PathTraversalError:
        found.skipped.append(Skipped(key, "name is not a valid team key"))
        return
    try:
        if path.stat().st_size > wire.MAX_ENTRY_BYTES:
            found.skipped.append(Skipped(key, f"larger than {wire.MAX_ENTRY_BYTES} bytes"))
            return
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        found.skipped.append(Skipped(key, "not UTF-8 text"))
        return
    except OSError as exc:
        found.skipped.append(Skipped(key, f"unreadable ({exc.strerror})"))
        return
    problem = wire.text_problem(text)
    if problem is not None:  # the server would refuse the whole batch for it
        found.skipped.append(Skipped(key, f"content {problem}"))
        return
    findings = secrets.scan(text)
    if findings:
        first = findings[0]
        found.skipped.append(Skipped(key, f"contains a secret: {first.label} ({first.rule_id})"))
        return
    found.entries[key] = text
