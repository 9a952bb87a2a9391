"""``memdir import``'s service: pick the source, plan, write (or only report), undo.

Reading the whole source and deciding every item happens before the first write, so a source
that turns out unreadable halfway (a bad line 9,000 of a JSONL file) fails with nothing written.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.consolidate.snapshot import Snapshots
from memdir.errors import ImportSourceError
from memdir.importers.apply import ApplyResult, apply_plan
from memdir.importers.base import Source
from memdir.importers.names import BUNDLE, SOURCE_NAMES, SOURCES
from memdir.importers.plan import ImportPlan, plan_import
from memdir.store import MemoryStore


def get_source(name: str) -> Source:
    if name not in SOURCES:
        raise ImportSourceError(
            f"unknown import source {name!r} (one of {', '.join(SOURCE_NAMES)})"
        )
    module, cls = SOURCES[name]
    source: Source = getattr(importlib.import_module(f"memdir.importers.{module}"), cls)()
    return source


@dataclass(frozen=True)
class ImportOutcome:
    plan: ImportPlan
    applied: ApplyResult | None  # None for a dry run


def run_import(
    store: MemoryStore,
    source_name: str,
    path: Path | None,
    snapshots: Snapshots,
    *,
    home: Path,
    env: Mapping[str, str] | None = None,
    dry_run: bool = False,
    today: dt.date | None = None,
) -> ImportOutcome:
    """Import ``path`` (or the source's usual place under ``home``, where the tool's own
    location variables in ``env`` point) into ``store``'s dir."""
    source = get_source(source_name)
    where = Path(path).expanduser() if path is not None else source.default_path(home, env or {})
    items = list(source.read(where))
    plan = plan_import(store, source_name, str(where), items, today=today)
    if dry_run:
        return ImportOutcome(plan, None)
    return ImportOutcome(plan, apply_plan(store, plan, snapshots))


def run_bundle(
    store: MemoryStore, archive: Path, snapshots: Snapshots, *, dry_run: bool = False
) -> dict[str, Any]:
    """Restore an export bundle (:mod:`memdir.importers.bundle`), undoable like any import."""
    from memdir.consolidate.snapshot import dream_files
    from memdir.importers.bundle import restore

    if dry_run:
        return {"snapshot": None, "result": restore(archive, store.root, dry_run=True)}
    # read and checked whole first: a missing or hostile archive records no run
    restore(archive, store.root, dry_run=True)
    before = set(dream_files(store.root))
    snap = snapshots.take(f"import bundle {archive}")
    snap.manifest["import"] = {"source": BUNDLE, "path": str(archive), "counts": {}}
    # The bundle decides its own files, so they are journaled after the restore: every file
    # present before is in the snapshot's tar, and the ones the restore created are deleted by
    # undo. A restore killed midway is still undone by the snapshot (undo --force).
    snap.touch(sorted(before))
    try:
        result = restore(archive, store.root, dry_run=False)
    finally:
        snap.touch(sorted(set(dream_files(store.root)) - before))
        snap.finish(store.root)
    if not snap.changed(store.root) and not result["written"]:
        snapshots.discard(snap)  # the same bundle again: nothing to undo, no run to list
        return {"snapshot": None, "result": result}
    counts = {"write": len(result["written"]), "skipped": len(result["skipped"])}
    snap.manifest["import"]["counts"] = counts
    snap._save()
    return {"snapshot": snap.id, "result": result}
