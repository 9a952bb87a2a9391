"""Export a memory dir as one portable bundle; restore a bundle byte for byte.

What travels is what cannot be rebuilt (the canonical part of a memory dir):

* every Markdown file: the memories (subfolders included), ``MEMORY.md`` (it holds lines people
  wrote by hand, so it is not regenerated), ``team/`` (team memory and its ``MEMORY.md``) and
  the daily logs ``logs/YYYY/MM/*.md``;
* ``logs/.distilled.json``, the record of which log bullets a dream already distilled (without it
  a dream would distil them all again).

What stays: hidden files (memdir's lock and crash marker, atomic-write temps, ``.git``,
``.env``), which are state of this machine or not memdir's; every derived file (header cache,
search index, embeddings, dream snapshots), which lives in the cache dir anyway and is rebuilt
by the next ``recall`` / ``reindex``; agent memory and session notes, which live outside the
memory dir. Files that are not Markdown, symbolic links and files over the size cap are left out
and *reported*, never silently dropped.

Restore invariants:

* Everything is checked before the first write: the archive's structure and caps
  (:mod:`memdir.bundle_archive`), the manifest (:mod:`memdir.bundle_manifest`), and every file's
  size and SHA-256 against it, with no file missing or extra. A bundle that fails any check
  raises :class:`~memdir.errors.BundleError` with nothing written.
* A file already in the memory dir is never replaced: identical bytes are skipped, different
  bytes (or a link, a folder, a file in the way) are reported as conflicting and left as they
  are. So a second restore changes nothing.
* Each write is one :func:`~memdir.atomic.atomic_write` (mtime set before the rename), made
  under the store lock after checking the target once more; their fsyncs wait for one
  ``os.sync`` at the end (:func:`~memdir.atomic.deferred_sync`, as an import's do: two fsyncs a
  file made 10,000 files take minutes). A killed restore leaves only whole files; a re-run
  finishes it.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from memdir import __version__
from memdir.atomic import atomic_write, content_hash, deferred_sync
from memdir.bundle_archive import (
    DEFAULT_LIMITS,
    DISTILLED_NAME,
    FILES_PREFIX,
    Limits,
    check_member_name,
    iter_members,
    read_archive_bytes,
    write_archive,
)
from memdir.bundle_manifest import SCOPES, BundleFile, BundleManifest, parse_manifest
from memdir.errors import BundleError, ConfigError
from memdir.pathsafe import read_regular

Scope = Literal["all", "private", "team"]
TEAM_DIR = "team"


@dataclass(frozen=True)
class ExportResult:
    out: Path
    manifest: BundleManifest
    left_out: tuple[tuple[str, str], ...]  # (path, why) of files in the dir that did not travel
    archive_bytes: int
    archive_sha256: str


@dataclass(frozen=True)
class RestoreResult:
    """What a restore wrote (or, with ``dry_run``, would write), skipped and refused."""

    manifest: BundleManifest
    dry_run: bool
    written: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # already in the memory dir with the same bytes
    conflicting: tuple[str, ...] = ()  # in the way and different: left untouched
    reasons: Mapping[str, str] = field(default_factory=dict)  # why each conflicting path


def _in_scope(rel: str, scope: str) -> bool:
    team = rel == TEAM_DIR or rel.startswith(TEAM_DIR + "/")
    return scope == "all" or (team if scope == "team" else not team)


def select_files(memory_dir: Path, scope: str = "all") -> tuple[list[str], list[tuple[str, str]]]:
    """(paths that travel, sorted; (path, why) of what is left out and worth reporting)."""
    files: list[str] = []
    left_out: list[tuple[str, str]] = []
    stack = [(str(memory_dir), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            left_out.append((prefix or ".", f"folder not readable: {exc.strerror}"))
            continue
        for entry in entries:
            rel = prefix + entry.name
            if not _in_scope(rel, scope):
                continue
            if entry.name.startswith("."):
                if rel == DISTILLED_NAME and entry.is_file(follow_symlinks=False):
                    files.append(rel)
                continue  # memdir's lock, temps, .git, .env: this machine's, not memories
            why = _left_out_reason(entry, rel)
            if why == "folder":
                stack.append((entry.path, rel + "/"))
            elif why is not None:
                left_out.append((rel, why))
            else:
                files.append(rel)
    return sorted(files), sorted(left_out)


def _left_out_reason(entry: os.DirEntry[str], rel: str) -> str | None:
    if entry.is_symlink():
        return "a symbolic link (a bundle holds files, not links)"
    if entry.is_dir(follow_symlinks=False):
        return "folder"
    if not entry.is_file(follow_symlinks=False):
        return "not a regular file"
    if not entry.name.endswith(".md"):
        return "not Markdown (only memory files travel)"
    try:
        check_member_name(rel)
    except BundleError as exc:
        return str(exc).replace(" in the bundle", "")
    return None


def _mtime_ms(st: os.stat_result) -> int:
    # Rounded, not floored: a restored file's mtime goes through a float and may land a few
    # nanoseconds early; rounding gives back the same millisecond on the next export.
    return (st.st_mtime_ns + 500_000) // 1_000_000


def export_bundle(
    memory_dir: Path,
    out: Path,
    *,
    scope: Scope = "all",
    now: dt.datetime | None = None,
    overwrite: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> ExportResult:
    """Write the canonical files of ``memory_dir`` (within ``scope``) to the bundle ``out``."""
    if scope not in SCOPES:
        raise ConfigError(f"unknown scope {scope!r} (one of {', '.join(SCOPES)})")
    if not memory_dir.is_dir():
        raise BundleError(f"there is no memory dir at {memory_dir} to export")
    if os.path.lexists(out) and not overwrite:
        raise BundleError(f"{out} already exists; pass --force to replace it")
    rels, left_out = select_files(memory_dir, scope)
    entries: list[tuple[BundleFile, bytes]] = []
    total = 0
    for rel in rels:
        path = memory_dir / rel
        try:
            st = os.lstat(path)
            data = read_regular(path, follow_symlinks=False, limit=limits.max_file_bytes + 1)
        except OSError as exc:
            left_out.append((rel, f"not readable: {exc.strerror or exc}"))
            continue
        if len(data) > limits.max_file_bytes:
            left_out.append((rel, f"larger than the {limits.max_file_bytes}-byte cap per file"))
            continue
        total += len(data)
        if total > limits.max_total_bytes or len(entries) >= limits.max_files:
            raise BundleError(
                f"{memory_dir} holds more than a bundle may ({limits.max_total_bytes} bytes, "
                f"{limits.max_files} files)"
            )
        entries.append((BundleFile(rel, len(data), content_hash(data), _mtime_ms(st)), data))
    stamp = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    manifest = BundleManifest(
        memdir_version=__version__,
        exported_at=stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
        scope=scope,
        files=tuple(f for f, _ in entries),
    )
    members = ((f.path, data, f.mtime_ms // 1000) for f, data in entries)
    archive = write_archive(manifest.to_json(), members, int(stamp.timestamp()))
    atomic_write(out, archive)
    return ExportResult(out, manifest, tuple(sorted(left_out)), len(archive), content_hash(archive))


def read_bundle(archive: Path, *, limits: Limits = DEFAULT_LIMITS) -> tuple[BundleManifest, bytes]:
    """The verified manifest and the archive bytes; BundleError unless every check passes."""
    data = read_archive_bytes(archive, limits)
    manifest: BundleManifest | None = None
    expected: dict[str, BundleFile] = {}
    for name, content in iter_members(data, limits):
        if manifest is None:
            manifest = parse_manifest(content)
            expected = {f.path: f for f in manifest.files}
            continue
        _check_member(expected.pop(name[len(FILES_PREFIX) :], None), name, content)
    if manifest is None:
        raise BundleError("the bundle is empty (no manifest.json)")
    if expected:
        missing = sorted(expected)
        raise BundleError(
            f"{len(missing)} file(s) named in the bundle's manifest are missing from it "
            f"(first: {missing[0]!r})"
        )
    return manifest, data


def _check_member(entry: BundleFile | None, name: str, content: bytes) -> None:
    rel = name[len(FILES_PREFIX) :]
    if entry is None:
        raise BundleError(f"{rel!r} is in the bundle but not in its manifest")
    if len(content) != entry.size or content_hash(content) != entry.sha256:
        raise BundleError(
            f"{rel!r} does not match the size and SHA-256 its manifest gives "
            "(a corrupt or altered bundle)"
        )


def restore_bundle(
    archive: Path, memory_dir: Path, dry_run: bool, *, limits: Limits = DEFAULT_LIMITS
) -> RestoreResult:
    """Restore ``archive`` into ``memory_dir``: new files written, identical ones skipped,
    different ones reported as conflicting and never replaced."""
    manifest, data = read_bundle(archive, limits=limits)
    if os.path.lexists(memory_dir) and not memory_dir.is_dir():
        raise BundleError(f"{memory_dir} is not a directory")
    to_write: list[str] = []
    skipped: list[str] = []
    reasons: dict[str, str] = {}
    for entry in manifest.files:
        outcome = _target_state(memory_dir, entry, limits)
        if outcome == "absent":
            to_write.append(entry.path)
        elif outcome == "same":
            skipped.append(entry.path)
        else:
            reasons[entry.path] = outcome
    if not dry_run and to_write:
        to_write = _apply(data, manifest, memory_dir, set(to_write), skipped, reasons, limits)
    return RestoreResult(
        manifest=manifest,
        dry_run=dry_run,
        written=tuple(to_write),
        skipped=tuple(sorted(skipped)),
        conflicting=tuple(sorted(reasons)),
        reasons=dict(sorted(reasons.items())),
    )


def _target_state(memory_dir: Path, entry: BundleFile, limits: Limits) -> str:
    """``absent`` (free to write), ``same`` (identical file there), or why it is in the way."""
    blocked = _blocked_parent(memory_dir, entry.path)
    if blocked is not None:
        return blocked
    target = memory_dir / entry.path
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return "absent"
    except OSError as exc:
        return f"cannot be checked: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link is there"
    if not stat.S_ISREG(st.st_mode):
        return "something that is not a file is there"
    if st.st_size != entry.size:
        return "a different file is there"
    try:
        current = read_regular(target, follow_symlinks=False, limit=limits.max_file_bytes + 1)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    return "same" if content_hash(current) == entry.sha256 else "a different file is there"


def _blocked_parent(memory_dir: Path, rel: str) -> str | None:
    """Why a folder on the way to ``rel`` cannot take it (a link or a file), else None."""
    current = memory_dir
    for part in rel.split("/")[:-1]:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return None  # created on write, with everything below it
        except OSError as exc:
            return f"folder {part!r} cannot be checked: {exc.strerror or exc}"
        if stat.S_ISLNK(st.st_mode):
            return f"folder {part!r} is a symbolic link (not followed)"
        if not stat.S_ISDIR(st.st_mode):
            return f"{part!r} is a file where the bundle has a folder"
    return None


def _apply(
    data: bytes,
    manifest: BundleManifest,
    memory_dir: Path,
    to_write: set[str],
    skipped: list[str],
    reasons: dict[str, str],
    limits: Limits,
) -> list[str]:
    from memdir.store import MemoryStore

    by_path = {f.path: f for f in manifest.files}
    written: list[str] = []
    with MemoryStore(memory_dir).lock(), deferred_sync():
        for name, content in iter_members(data, limits):
            rel = name[len(FILES_PREFIX) :]
            if not name.startswith(FILES_PREFIX) or rel not in to_write:
                continue
            entry = by_path[rel]
            _check_member(entry, name, content)
            state = _target_state(memory_dir, entry, limits)  # again: someone may have written
            if state == "same":
                skipped.append(rel)
            elif state != "absent":
                reasons[rel] = state
            else:
                atomic_write(memory_dir / rel, content, mtime=entry.mtime_ms / 1000)
                written.append(rel)
    return written
