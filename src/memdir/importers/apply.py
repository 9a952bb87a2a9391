"""The import pipeline's second half: write a plan, all or nothing, and undo it later.

Invariants:

* A snapshot of the memory dir (:class:`memdir.consolidate.snapshot.Snapshots`, as dream takes
  one) is durable, and names every file the import will create plus ``MEMORY.md``, before the
  first file is written; ``memdir import --undo`` puts the dir back from it, and refuses (unless
  forced) when a file was edited since.
* Each memory is one atomic, locked, guarded write through :class:`~memdir.store.MemoryStore`,
  created only if its name is still free. Their fsyncs are deferred to one ``os.sync`` at the end
  (:func:`memdir.atomic.deferred_sync`; 20,000 fsyncs would cost minutes): a killed import leaves
  every file whole, and the snapshot undoes the lot. The index is written once per 1,000
  files (one rewrite per memory would rewrite a growing file 10,000 times), inside the same
  write-intent marker as those files, so a killed import leaves no file without its entry once
  the next locked write has repaired the marked chunk.
* Nothing half-written: if any write fails (a guard refuses, the disk fills, a name was taken
  meanwhile), the snapshot is restored before the error propagates.
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir import frontmatter, index, index_sections
from memdir.atomic import atomic_write, deferred_sync
from memdir.consolidate.snapshot import Snapshots, UndoResult
from memdir.errors import MemoryNotFoundError, SecretFoundError
from memdir.importers.plan import ImportPlan
from memdir.recovery import WriteIntent
from memdir.store import MemoryStore
from memdir.team.secrets import labels, scan


class _BatchIndexStore(MemoryStore):
    """The store an import writes through: every write atomic, locked and guarded as ever, with
    the per-file costs that 10,000 new top-level files do not need taken out of the loop:

    * ``MEMORY.md`` is left alone per write; :func:`add_entries` writes every entry once;
    * one write-intent marker covers the whole batch (crash repair re-derives those entries);
    * the guard is one credential scan of the exact text (stricter than the private guard, which
      may only warn): the targets are new slugs at the root, never in ``team/``, so the team
      guard's symlink walk has nothing to find;
    * a slug has no separator, so its path is the root joined with it (no realpath per file;
      renaming over a symlink replaces the link, never its target).
    """

    def __init__(self, base: MemoryStore) -> None:
        super().__init__(
            base.root,
            guards=[_refuse_credentials],
            lock_timeout=base.lock_timeout,
            clock=base._clock,
            header_cache=base._header_cache_path,
        )

    def _index_upsert(self, rel: str, text: str) -> None:
        pass  # add_entries writes every entry at the end

    def _intent(self, *rels: str) -> AbstractContextManager[None]:
        return contextlib.nullcontext()  # the batch's own marker covers every file

    def path_of(self, name: str | Path) -> Path:
        rel = self.rel(name)
        return self.root / rel if "/" not in rel else super().path_of(rel)


def _refuse_credentials(rel: str, text: str) -> None:
    found = labels(scan(text))
    if found:
        raise SecretFoundError(found, path=rel)


CHUNK = 1000  # files per write-intent marker (and per index update): a killed import's index
# then lacks at most the chunk the marker names, which the next locked write re-derives


def _entry(plan: ImportPlan, rel: str) -> list[tuple[str, str, str]]:
    memory = plan.writes[rel]
    return [(rel, memory.name, memory.description)]


def add_entries(root: Path, entries: list[tuple[str, str, str]]) -> None:
    """Add (or replace) the index lines of ``(rel, title, description)`` in one write per index."""
    by_index: dict[str, dict[str, str]] = {}
    for rel, title, description in entries:
        scope = index.index_scope(rel)
        if scope is not None:
            index_rel, link = scope
            by_index.setdefault(index_rel, {})[link] = index.entry_line(title, link, description)
    for index_rel, lines in by_index.items():
        current = index.read_entrypoint(root, index_rel)
        kept = [ln for ln in current.splitlines() if index.entry_link(ln) not in lines]
        while kept and not kept[-1].strip():
            kept.pop()
        atomic_write(root / index_rel, "\n".join([*kept, *lines.values()]) + "\n")


@dataclass(frozen=True)
class ApplyResult:
    snapshot: str | None
    written: list[str]


def apply_plan(store: MemoryStore, plan: ImportPlan, snapshots: Snapshots) -> ApplyResult:
    """Write every memory of ``plan`` (see the module invariants)."""
    if not plan.writes:
        return ApplyResult(None, [])
    rels = list(plan.writes)
    snap = snapshots.take(f"import {plan.source} {plan.path}")
    snap.manifest["import"] = {"source": plan.source, "path": plan.path, "counts": plan.counts()}
    snap.touch([index.ENTRYPOINT_NAME, *rels])
    batch = _BatchIndexStore(store)
    try:
        with batch.lock(), deferred_sync():
            for start in range(0, len(rels), CHUNK):
                chunk = rels[start : start + CHUNK]
                with WriteIntent(store.root).covering(chunk, batch._resync):
                    for rel in chunk:
                        memory = plan.writes[rel]
                        batch.write_text(rel, frontmatter.dump_memory(memory), create_only=True)
                    add_entries(store.root, [e for r in chunk for e in _entry(plan, r)])
            kinds = {rel: str(m.type or "") for rel, m in plan.writes.items()}
            for index_rel in index_sections.scopes(store.root):
                layout = index_sections.layout(store.root, index_rel, kinds=kinds)
                snap.touch(layout)  # sections made or folded: the undo restores them too
                index_sections.write(store.root, layout)
        snap.finish(store.root)
    except BaseException:
        snap.finish(store.root)
        snapshots.undo(snap.id, force=True)
        raise
    return ApplyResult(snap.id, rels)


def undo_import(
    snapshots: Snapshots, snapshot_id: str | None = None, *, force: bool = False
) -> UndoResult:
    """Put the memory dir back as it was before an import (by default the last one that wrote
    something and is not undone yet)."""
    if snapshot_id is None:
        wrote = [r for r in import_runs(snapshots, limit=1000) if not r["undone"] and _wrote(r)]
        snapshot_id = wrote[0]["id"] if wrote else "(none)"
    try:
        snapshots.get(snapshot_id)
    except MemoryNotFoundError:
        what = "import to undo" if snapshot_id == "(none)" else f"import {snapshot_id}"
        raise MemoryNotFoundError(f"no {what} (see memdir import --runs)") from None
    return snapshots.undo(snapshot_id, force=force)


def _wrote(run: dict[str, Any]) -> bool:
    """It wrote something, or may have: a run killed midway never recorded its counts."""
    return bool(run["counts"].get("write")) or not run["finished"]


def import_runs(snapshots: Snapshots, limit: int = 10) -> list[dict[str, Any]]:
    """The recent imports, newest first: id, what was imported, counts, undone or not."""
    runs = []
    for snap in snapshots.list()[:limit]:
        if snap.manifest.get("is_undo"):
            continue
        info = snap.manifest.get("import") or {}
        runs.append(
            {
                "id": snap.id,
                "created": snap.manifest.get("created"),
                "source": info.get("source"),
                "path": info.get("path"),
                "counts": info.get("counts", {}),
                "undone": snap.manifest.get("undone"),
                "finished": snap.finished,
            }
        )
    return runs
