"""Snapshots before a dream changes anything, and ``undo`` that restores them.

Layout (derived data, so it lives in the cache dir, never in the memory dir)::

    <cache dir>/dream/snapshots/<id>/
        files.tar      every file a dream may touch, as it was (bytes and mtime)
        manifest.json  id, reason, created, sha256 per file, ``after`` hashes once finished
        journal        one relative path per line, appended and fsynced BEFORE that path changes

Invariants:

* The snapshot is durable (atomic write, fsync) before the first memory file changes, and the
  journal names every path before it is touched, so after a crash at any instant (kill -9
  included) the journal is a superset of what changed and ``undo`` can put each of those paths
  back: restore its bytes (and mtime) from the tar, or delete it if the dream created it.
* Each restored file is one atomic rename: an interrupted undo leaves every file old or new, and
  running ``undo`` again finishes it.
* Undo never silently loses a later edit: when the dream finished, its ``after`` hashes are known
  and a path changed since then stops the undo (:class:`~memdir.errors.ConflictError`) unless
  forced; and undo itself first snapshots what it overwrites, so an undo can be undone too.
* Only the last ``keep`` snapshots are kept.
"""

from __future__ import annotations

import builtins
import contextlib
import datetime as dt
import io
import json
import os
import shutil
import tarfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.atomic import FILE_MODE, atomic_write, content_hash, ensure_dir, fsync_dir
from memdir.consolidate.logs import DISTILLED_NAME
from memdir.errors import ConflictError, MemoryNotFoundError, UnsafePathError
from memdir.index import LOGS_DIR, SECTIONS_DIR
from memdir.scan import ScanResult
from memdir.store import MemoryStore

DEFAULT_KEEP = 10
LOGS_PREFIX = LOGS_DIR + "/"


def dream_files(root: Path) -> Iterator[str]:
    """Relative paths of every file a dream may change: Markdown outside ``logs/``, both
    indexes, and the distillation record. Hidden files and symlinked dirs are not entered."""
    stack = [(root, "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            if entry.name.startswith(".") or rel == "logs":
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((Path(entry.path), rel + "/"))
            elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                yield rel
    if (root / DISTILLED_NAME).is_file():
        yield DISTILLED_NAME


@dataclass
class Snapshot:
    """One snapshot directory. ``touch`` before every change; ``finish`` after the last."""

    dir: Path
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.dir.name

    @property
    def undone(self) -> bool:
        return bool(self.manifest.get("undone"))

    def touch(self, rels: Iterable[str]) -> None:
        """Record paths about to change (durably, before they change)."""
        have = set(self.journal())  # read once: per path, 400,000 imported paths were quadratic
        new = [r for r in rels if r not in have]
        if not new:
            return
        fd = os.open(self.dir / "journal", os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            os.write(fd, "".join(f"{r}\n" for r in dict.fromkeys(new)).encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def journal(self) -> list[str]:
        try:
            lines = (self.dir / "journal").read_text("utf-8").splitlines()
        except FileNotFoundError:
            return []
        return list(dict.fromkeys(line for line in lines if line))

    def finish(self, root: Path) -> None:
        """Record what each touched path looks like now (None: absent), for conflict checks."""
        after: dict[str, str | None] = {}
        for rel in self.journal():
            path = root / rel
            after[rel] = content_hash(path.read_bytes()) if path.is_file() else None
        self.manifest["after"] = after
        self._save()

    @property
    def finished(self) -> bool:
        """False for a dream that was killed (or is still running): no ``after`` hashes."""
        return self.manifest.get("after") is not None

    def changed(self, root: Path) -> list[str]:
        """Touched paths whose content differs from the snapshot: as recorded when the dream
        finished, else as the files are now (a killed dream)."""
        before = self.manifest.get("files", {})
        after = self.manifest.get("after")
        if after is None:
            after = {
                rel: content_hash((root / rel).read_bytes()) if (root / rel).is_file() else None
                for rel in self.journal()
            }
        return [rel for rel in self.journal() if before.get(rel) != after.get(rel)]

    def summary(self, root: Path) -> dict[str, Any]:
        """What ``memdir dream status`` and ``memdir ui`` show for one run."""
        return {
            "id": self.id,
            "reason": self.manifest.get("reason"),
            "created": self.manifest.get("created"),
            "changed": self.changed(root),
            "finished": self.finished,
            "undone": self.manifest.get("undone"),
            "is_undo": self.manifest.get("is_undo"),
        }

    def _save(self) -> None:
        atomic_write(self.dir / "manifest.json", json.dumps(self.manifest, indent=1))

    def members(self) -> dict[str, tuple[bytes, float]]:
        with tarfile.open(self.dir / "files.tar", "r") as tar:
            out = {}
            for member in tar.getmembers():
                fh = tar.extractfile(member)
                if fh is not None:
                    out[member.name] = (fh.read(), float(member.mtime))
            return out


@dataclass(frozen=True)
class UndoResult:
    snapshot: str
    restored: list[str]
    removed: list[str]
    safety_snapshot: str | None


class Snapshots:
    """The snapshots of one memory dir."""

    def __init__(
        self,
        store: MemoryStore,
        directory: Path,
        *,
        keep: int = DEFAULT_KEEP,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.directory = directory
        self.keep = max(1, keep)
        self._clock = clock

    def take(self, reason: str) -> Snapshot:
        """Copy every dream-touchable file into a new durable snapshot."""
        root = self.store.root
        now = self._clock()
        stamp = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        snap_dir = ensure_dir(self.directory) / f"{stamp}-{os.getpid()}"
        ensure_dir(snap_dir)
        buffer = io.BytesIO()
        hashes: dict[str, str] = {}
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for rel in sorted(dream_files(root)):
                try:
                    data = (root / rel).read_bytes()
                    mtime = (root / rel).stat().st_mtime
                except OSError:
                    continue
                info = tarfile.TarInfo(rel)
                info.size, info.mtime, info.mode = len(data), mtime, FILE_MODE
                tar.addfile(info, io.BytesIO(data))
                hashes[rel] = content_hash(data)
        atomic_write(snap_dir / "files.tar", buffer.getvalue())
        created = dt.datetime.fromtimestamp(now, dt.UTC).isoformat()
        manifest = {"id": snap_dir.name, "reason": reason, "created": created, "files": hashes}
        snapshot = Snapshot(snap_dir, manifest)
        snapshot._save()
        fsync_dir(self.directory)
        self._prune()
        return snapshot

    def list(self) -> list[Snapshot]:
        """Snapshots newest first (ones with a damaged manifest are skipped)."""
        try:
            dirs = sorted((p for p in self.directory.iterdir() if p.is_dir()), reverse=True)
        except FileNotFoundError:
            return []
        out = []
        for d in dirs:
            try:
                manifest = json.loads((d / "manifest.json").read_text("utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(manifest, dict) and (d / "files.tar").is_file():
                out.append(Snapshot(d, manifest))
        return out

    def summaries(self, limit: int = 5) -> builtins.list[dict[str, Any]]:
        """The newest ``limit`` runs, each as :meth:`Snapshot.summary`."""
        return [s.summary(self.store.root) for s in self.list()[:limit]]

    def get(self, snapshot_id: str | None = None) -> Snapshot:
        """A snapshot by id, or the newest one not undone yet."""
        for snap in self.list():
            if snapshot_id is None and not snap.undone and not snap.manifest.get("is_undo"):
                return snap
            if snap.id == snapshot_id:
                return snap
        what = f"snapshot {snapshot_id}" if snapshot_id else "dream snapshot to undo"
        raise MemoryNotFoundError(f"no {what} in {self.directory}")

    def discard(self, snap: Snapshot) -> None:
        """Forget a snapshot of a run that changed nothing (it is not a run to undo)."""
        shutil.rmtree(snap.dir, ignore_errors=True)

    def undo(self, snapshot_id: str | None = None, *, force: bool = False) -> UndoResult:
        """Put every path the dream touched back as the snapshot holds it."""
        snap = self.get(snapshot_id)
        root = self.store.root
        touched = snap.journal()
        with self.store.lock():
            after = snap.manifest.get("after")
            if after is not None and not force:
                moved = [
                    rel
                    for rel in touched
                    if after.get(rel)
                    != (content_hash((root / rel).read_bytes()) if (root / rel).is_file() else None)
                ]
                if moved:
                    raise ConflictError(
                        "changed since the dream, undo would lose those edits (use --force): "
                        + ", ".join(moved)
                    )
            safety = self.take(f"before undo of {snap.id}")
            safety.manifest["is_undo"] = snap.id
            safety.touch(touched)
            members = snap.members()
            restored, removed = [], []
            for rel in touched:
                path = self.store.path_of(rel)
                if rel in members:
                    data, mtime = members[rel]
                    atomic_write(path, data, mtime=mtime)
                    restored.append(rel)
                elif path.is_file():
                    path.unlink()
                    fsync_dir(path.parent)
                    removed.append(rel)
            for rel in {r.rsplit("/", 1)[0] for r in removed if "/" in r}:
                if rel.rsplit("/", 1)[-1] == SECTIONS_DIR:  # MEMORY.md's sections, all undone
                    with contextlib.suppress(OSError):
                        os.rmdir(self.store.path_of(rel))
            safety.finish(root)
            snap.manifest["undone"] = dt.datetime.now(dt.UTC).isoformat()
            snap._save()
        return UndoResult(snap.id, restored, removed, safety.id)

    def _prune(self) -> None:
        for old in self.list()[self.keep :]:
            shutil.rmtree(old.dir, ignore_errors=True)


class JournalingStore(MemoryStore):
    """A store whose every file change is journaled in ``snapshot`` first.

    ``retire_reason`` turns deletes into retirements (dream never deletes a memory). Agents and
    extractors get this store, so paths they choose at run time (the LLM dream, the
    log distiller) are recorded before they are written, without knowing them in advance.
    """

    def __init__(
        self, base: MemoryStore, snapshot: Snapshot, *, retire_reason: str | None = None
    ) -> None:
        super().__init__(
            base.root,
            guards=base.guards,
            lock_timeout=base.lock_timeout,
            clock=base._clock,
            header_cache=base._header_cache_path,
        )
        self.snapshot = snapshot
        self.retire_reason = retire_reason
        snapshot.touch(["MEMORY.md", "team/MEMORY.md"])  # any write may update an index

    def scan(self, *, limit: int | None = None) -> ScanResult:
        """Memories only: daily logs are input to a dream, never something it rewrites."""
        result = super().scan(limit=None)
        result.headers = [h for h in result.headers if not h.filename.startswith(LOGS_PREFIX)]
        result.total = len(result.headers)
        if limit is not None:
            result.headers = result.headers[:limit]
        return result

    def _write(self, rel: str, text: str) -> None:
        _refuse_logs(rel)
        self.snapshot.touch([rel])
        super()._write(rel, text)

    def delete(self, name: str | Path, *, expected_hash: str | None = None) -> str:
        """Journaled delete; with ``retire_reason`` a delete retires the memory instead."""
        _refuse_logs(self.rel(name))
        self.snapshot.touch([self.rel(name)])
        if self.retire_reason is not None:
            from memdir.consolidate.forget import retire

            return retire(self, name, reason=self.retire_reason)
        return super().delete(name, expected_hash=expected_hash)

    def rename(self, old: str | Path, new: str | Path) -> str:
        _refuse_logs(self.rel(old))
        _refuse_logs(self.rel(new))
        self.snapshot.touch([self.rel(old), self.rel(new)])
        return super().rename(old, new)


def _refuse_logs(rel: str) -> None:
    if rel.startswith(LOGS_PREFIX):
        raise UnsafePathError(f"{rel}: daily logs are append-only; a dream never rewrites them")
