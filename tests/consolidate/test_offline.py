from __future__ import annotations

import datetime as dt
import os
import signal
import time
from pathlib import Path

import pytest

from memdir import frontmatter
from memdir.consolidate.lock import ConsolidationLock
from memdir.consolidate.offline import OfflineDreamer, apply_plan
from memdir.consolidate.plan import plan_offline
from memdir.consolidate.snapshot import Snapshots
from memdir.daily_log import append_log
from memdir.errors import ConflictError
from memdir.store import MemoryStore
from tests.consolidate.conftest import put, tree
from tests.consolidate.procs import spawn
from tests.consolidate.test_plan import TODAY, messy


def test_dream_applies_the_plan_and_undo_restores_bytes(
    store: MemoryStore, snaps: Snapshots
) -> None:
    messy(store.root)
    before = tree(store.root)
    planned = plan_offline(store, today=TODAY)
    report = OfflineDreamer(store, snaps, today=TODAY).run()
    assert report.ok and report.snapshot is not None
    for rel, change in planned.changes.items():
        assert (store.root / rel).read_text() == change.after
    assert set(report.retired) == {"pnpm.md", "copy.md", "db.md"}
    assert report.notice == f"Improved {report.improved} memories" and report.improved >= 5
    assert report.flagged == ["cache.md vs cache_b.md: values ['300'] vs ['600']"]
    assert OfflineDreamer(store, snaps, today=TODAY).run().snapshot is None  # nothing left
    snaps.undo()
    assert tree(store.root) == before


def test_progress_is_reported_per_file(store: MemoryStore, snaps: Snapshots) -> None:
    messy(store.root)
    seen: list[tuple[int, int, str]] = []
    OfflineDreamer(store, snaps, today=TODAY, progress=lambda *a: seen.append(a)).run()
    total = seen[0][1]
    assert [s[0] for s in seen] == list(range(total + 1))
    assert seen[-2][2].endswith("MEMORY.md")  # indexes are written last


def test_a_file_changed_after_planning_stops_the_apply(
    store: MemoryStore, snaps: Snapshots
) -> None:
    messy(store.root)
    plan = plan_offline(store, today=TODAY)
    (store.root / "launch.md").write_text("edited by a person meanwhile\n")
    snap = snaps.take("test")
    with pytest.raises(ConflictError, match=r"launch\.md"):
        apply_plan(plan, store, snap)
    assert (store.root / "launch.md").read_text() == "edited by a person meanwhile\n"
    assert (store.root / "pnpm.md").read_text() == plan.changes["pnpm.md"].before


def test_guards_run_before_anything_is_written(store: MemoryStore, snaps: Snapshots) -> None:
    messy(store.root)
    before = tree(store.root)

    def refuse(rel: str, text: str) -> None:
        if rel == "launch.md":
            raise ConflictError("guard says no")

    guarded = MemoryStore(store.root, guards=[refuse])
    with pytest.raises(ConflictError, match="guard says no"):
        OfflineDreamer(guarded, Snapshots(guarded, snaps.directory), today=TODAY).run()
    assert tree(store.root) == before


def test_daily_logs_are_distilled_once_and_forget_retires(
    store: MemoryStore, snaps: Snapshots
) -> None:
    put(store.root, "editor.md", "Editor", "user edits in Helix", "The user edits code in Helix.\n")
    when = dt.datetime(2026, 11, 29, 9, 30).astimezone()
    append_log(store.root, "Remember that the staging deploy needs a VPN.", now=when)
    append_log(store.root, "Forget that the user edits in Helix", now=when)
    append_log(store.root, "Lunch was good.", now=when)
    first = OfflineDreamer(store, snaps, today=TODAY).run()
    saved = [r for r in first.changed if r != "editor.md"]
    assert len(saved) == 1
    body = (store.root / saved[0]).read_text()
    assert "staging deploy needs a VPN" in body
    editor = frontmatter.parse((store.root / "editor.md").read_text())
    assert editor.meta["retired_reason"] == "forgotten on request (daily log)"
    assert editor.body == "The user edits code in Helix.\n"
    again = OfflineDreamer(store, snaps, today=TODAY).run()
    assert again.changed == [] and again.snapshot is None


KILLED = """
import sys, time, datetime as dt
from pathlib import Path
from memdir.consolidate.lock import ConsolidationLock
from memdir.consolidate.offline import OfflineDreamer
from memdir.consolidate.snapshot import Snapshots
from memdir.store import MemoryStore

root, state = Path(sys.argv[1]), Path(sys.argv[2])
store = MemoryStore(root)
lock = ConsolidationLock(root, state_dir=state)
assert lock.try_acquire() is not None

def progress(done, total, rel):
    if done == 3:
        print("mid-dream", flush=True)
        time.sleep(60)

OfflineDreamer(store, Snapshots(store, state / "snaps"), today=dt.date(2026, 11, 30),
               progress=progress).run()
lock.release()
print("finished", flush=True)
"""


def test_kill_9_mid_dream_then_lock_rolls_back_and_undo_restores(tmp_path: Path) -> None:
    root, state = tmp_path / "mem", tmp_path / "state"
    root.mkdir()
    messy(root)
    prior = time.time() - 3 * 86_400
    (root / ".consolidate-lock").write_text("")
    os.utime(root / ".consolidate-lock", (prior, prior))
    before = tree(root)
    proc = spawn(KILLED, str(root), str(state))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "mid-dream"
        assert tree(root) != before  # some files are already rewritten
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.communicate()
    lock = ConsolidationLock(root, state_dir=state)
    assert lock.recover() is True
    assert lock.last_consolidated_at() == prior
    store = MemoryStore(root)
    snaps = Snapshots(store, state / "snaps")
    killed = snaps.list()[0]
    assert not killed.finished
    rewritten = killed.changed(root)
    assert rewritten and all(before.get(rel) != (root / rel).read_bytes() for rel in rewritten)
    snaps.undo()
    assert tree(root) == before


def test_a_file_edited_while_planning_outside_the_lock_is_replanned(
    store: MemoryStore, snaps: Snapshots
) -> None:
    messy(store.root)
    plans = 0

    class EditWhilePlanning(OfflineDreamer):
        def plan(self):  # type: ignore[no-untyped-def]
            nonlocal plans
            result = super().plan()
            plans += 1
            if plans == 1:  # someone writes between the first plan and the lock
                (store.root / "launch.md").write_text("Rewritten: ship yesterday.\n")
            return result

    report = EditWhilePlanning(store, snaps, today=TODAY).run()
    assert plans == 2 and report.ok
    assert (store.root / "launch.md").read_text().startswith("Rewritten: ship yesterday (")
