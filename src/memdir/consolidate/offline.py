"""The offline dream: distil new daily-log bullets, then plan and apply the consolidation.

Order inside one run (all under the store lock, in one thread):

1. preview: pending log bullets -> rule candidates; :func:`plan_offline` on the current state;
   if neither has anything to do, stop (no snapshot, nothing written);
2. snapshot every dream-touchable file (:class:`~memdir.consolidate.snapshot.Snapshots`);
3. distil: the rule extractor writes through a :class:`JournalingStore` (each path journaled
   before it is written); the bullets are recorded as distilled;
4. re-plan if distillation wrote anything (new memories may duplicate old ones, the index needs
   their entries), check that no planned file changed under us, run the write guards on every
   planned text, then write memory files and, last, the indexes;
5. record the ``after`` hashes (so ``undo`` can tell later edits apart).

A kill at any point leaves each file old or new, and the journal names every path that may have
changed, so ``memdir dream undo`` restores the pre-dream state.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir import index, index_sections
from memdir.atomic import atomic_write
from memdir.consolidate.base import DreamReport
from memdir.consolidate.logs import DISTILLED_NAME, DistilledRecord
from memdir.consolidate.plan import DreamPlan, FileChange, plan_offline
from memdir.consolidate.snapshot import JournalingStore, Snapshot, Snapshots
from memdir.daily_log import Bullet
from memdir.errors import ConflictError
from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.rules import Candidate, candidates
from memdir.extract.sightings import is_sighting
from memdir.store import MemoryStore

if TYPE_CHECKING:
    from memdir.recall.embed import Embedder

Progress = Callable[[int, int, str], None]


def log_candidates(pending: Sequence[Bullet]) -> list[tuple[Bullet, Candidate]]:
    """What the rule extractor would save from each pending bullet (explicit statements only; a
    sighting the extractor noted quotes the user, it does not state a rule)."""
    found = []
    for bullet in pending:
        if is_sighting(bullet.text):
            continue
        for candidate in candidates(bullet.text, today=bullet.day):
            found.append((bullet, candidate))
    return found


class OfflineDreamer:
    """A :class:`~memdir.consolidate.base.Dreamer` that needs no model."""

    def __init__(
        self,
        store: MemoryStore,
        snapshots: Snapshots,
        *,
        project_root: Path | None = None,
        embedder: Embedder | None = None,
        today: dt.date | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.store = store
        self.snapshots = snapshots
        self.project_root = project_root
        self.embedder = embedder
        self.today = today
        self.progress = progress

    def plan(self) -> tuple[DreamPlan, list[tuple[Bullet, Candidate]], list[Bullet]]:
        """The plan on the current state, plus the log bullets a run would distil."""
        pending = DistilledRecord(self.store.root).pending()
        found = log_candidates(pending)
        plan = self._plan()
        plan.extra["distill"] = {
            "pending_bullets": len(pending),
            "would_save": [f"[{c.type}] {c.statement}" for _, c in found if c.kind == "save"],
            "would_forget": [c.statement for _, c in found if c.kind == "forget"],
        }
        return plan, found, pending

    def _plan(self) -> DreamPlan:
        return plan_offline(
            self.store, today=self.today, project_root=self.project_root, embedder=self.embedder
        )

    async def dream(self, sessions: Sequence[str]) -> DreamReport:
        return await asyncio.to_thread(self.run)

    def run(self) -> DreamReport:
        # Plan (and embed) outside the store lock: other writers are not kept waiting on a
        # model. Under the lock the plan is re-checked against the files and redone if any moved.
        plan, found, pending = self.plan()
        if plan.empty and not pending:
            # Nothing to change, but taking the store lock sweeps crash leftovers (stale temps),
            # which doctor says "the next locked write" removes.
            with self.store.lock():
                pass
            return DreamReport("offline", details={"plan": plan.summary()})
        with self.store.lock():
            if not _still_valid(plan, self.store):
                plan, found, pending = self.plan()
            snap = self.snapshots.take("offline dream")
            journaled = JournalingStore(
                self.store, snap, retire_reason="forgotten on request (daily log)"
            )
            distilled = self._distil(journaled, snap, found, pending)
            if distilled:
                plan = self._plan()
                plan.extra["distill"] = {"pending_bullets": len(pending), "saved": distilled}
            apply_plan(plan, journaled, snap, progress=self.progress)
            snap.finish(self.store.root)
        return _report(plan, snap, distilled)

    def _distil(
        self,
        journaled: JournalingStore,
        snap: Snapshot,
        found: list[tuple[Bullet, Candidate]],
        pending: list[Bullet],
    ) -> list[str]:
        written: list[str] = []
        by_day: dict[dt.date, list[Candidate]] = {}
        for bullet, candidate in found:
            by_day.setdefault(bullet.day, []).append(candidate)
        for day, group in sorted(by_day.items()):
            noon = dt.datetime.combine(day, dt.time(12)).astimezone()
            result = RuleExtractor(journaled, clock=_fixed(noon)).apply(group)
            root = self.store.root
            written += [p.relative_to(root).as_posix() for p in [*result.written, *result.removed]]
        record = DistilledRecord(self.store.root)
        record.mark(pending)
        snap.touch([DISTILLED_NAME])
        record.save()
        return written


def _fixed(moment: dt.datetime) -> Callable[[], dt.datetime]:
    return lambda: moment


def _still_valid(plan: DreamPlan, store: MemoryStore) -> bool:
    """True when every file the plan changes still holds the text the plan was made from."""
    for change in plan.changes.values():
        path = store.path_of(change.rel)
        now = path.read_text("utf-8").removeprefix("\ufeff") if path.is_file() else None
        if now != change.before and not (now in (None, "") and not change.before):
            return False
    return True


def apply_plan(
    plan: DreamPlan, store: MemoryStore, snap: Snapshot, *, progress: Progress | None = None
) -> None:
    """Write a plan: verify, guard, journal, memory files, then indexes. Caller holds the lock."""
    if not _still_valid(plan, store):
        moved = [c.rel for c in plan.changes.values() if not _still_valid(_only(plan, c), store)]
        raise ConflictError(f"{', '.join(moved)} changed while the dream was planned; run it again")
    for change in plan.changes.values():
        for guard in store.guards:
            guard(change.rel, change.after)
    snap.touch(plan.changes)
    ordered = sorted(plan.changes.values(), key=lambda c: index.index_scope(c.rel) is None)
    total = len(ordered)
    for number, change in enumerate(ordered):
        if progress is not None:
            progress(number, total, change.rel)
        # Guards ran above and every path is journaled; the indexes are rewritten last, so the
        # store's per-write index upkeep would only be rewritten again (and cost two fsyncs).
        atomic_write(store.path_of(change.rel), change.after)
    for index_rel in index_sections.scopes(store.root):
        if index_rel in plan.changes:  # written whole: lay it out in sections again
            layout = index_sections.layout(store.root, index_rel, whole=True)
            snap.touch(layout)
            index_sections.write(store.root, layout)
    if progress is not None:
        progress(total, total, "")


def _only(plan: DreamPlan, change: FileChange) -> DreamPlan:
    return DreamPlan(plan.root, plan.today, changes={change.rel: change})


def _report(plan: DreamPlan, snap: Snapshot, distilled: list[str]) -> DreamReport:
    retired = list(plan.retired)
    changed = [r for r in dict.fromkeys([*distilled, *plan.memory_changes()]) if r not in retired]
    details: dict[str, Any] = {"plan": plan.summary()}
    return DreamReport(
        "offline",
        changed=changed,
        retired=retired,
        flagged=[f"{c.older} vs {c.newer}: {c.detail}" for c in plan.flagged],
        snapshot=snap.id,
        details=details,
    )
