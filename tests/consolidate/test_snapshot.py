from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdir.consolidate.snapshot import JournalingStore, Snapshots, dream_files
from memdir.errors import ConflictError, MemoryNotFoundError
from memdir.store import MemoryStore


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore(tmp_path / "mem")
    s.create("Café owner", "Ana runs the café ☕", "user", "Ana — 東京 trip in May.\n")
    s.create("Deploy rule", "deploys go through CI", "feedback", "Never deploy by hand.\n")
    (s.root / "logs" / "2026" / "11").mkdir(parents=True)
    (s.root / "logs" / "2026" / "11" / "2026-11-30.md").write_text("- 10:00 a log line\n")
    return s


def test_dream_files_skip_logs_and_hidden(store: MemoryStore) -> None:
    (store.root / ".hidden.md").write_text("x")
    cafe = next(h.filename for h in store.list() if h.filename.startswith("caf"))
    assert set(dream_files(store.root)) == {"MEMORY.md", cafe, "deploy_rule.md"}


def test_undo_restores_bytes_and_removes_created_files(store: MemoryStore, tmp_path: Path) -> None:
    before = tree(store.root)
    snaps = Snapshots(store, tmp_path / "snaps")
    snap = snaps.take("test dream")
    journaled = JournalingStore(store, snap)
    target = next(h.filename for h in store.list() if h.filename.startswith("deploy"))
    journaled.edit(target, "by hand", "manually, ever")
    journaled.create("New one", "created by the dream", "project", "Body.\n")
    journaled.delete(next(h.filename for h in store.list() if h.filename.startswith("caf")))
    snap.finish(store.root)
    assert tree(store.root) != before
    result = snaps.undo()
    assert tree(store.root) == before
    assert "new_one.md" in result.removed
    with pytest.raises(MemoryNotFoundError):
        snaps.undo()  # the only dream snapshot is undone now
    snaps.undo(result.safety_snapshot)  # undoing the undo brings the dream back
    assert (store.root / "new_one.md").is_file()


def test_undo_refuses_to_lose_a_later_edit(store: MemoryStore, tmp_path: Path) -> None:
    snaps = Snapshots(store, tmp_path / "snaps")
    snap = snaps.take("dream")
    target = "deploy_rule.md"
    JournalingStore(store, snap).edit(target, "by hand.", "by hand.\nadded by dream")
    snap.finish(store.root)
    store.edit(target, "added by dream", "edited later by a person")
    with pytest.raises(ConflictError, match=target):
        snaps.undo()
    assert "edited later by a person" in store.read_text(target)
    snaps.undo(force=True)
    assert "edited later" not in store.read_text(target)


def test_unfinished_snapshot_restores_from_journal(store: MemoryStore, tmp_path: Path) -> None:
    before = tree(store.root)
    snaps = Snapshots(store, tmp_path / "snaps")
    snap = snaps.take("killed dream")
    JournalingStore(store, snap).create("Half", "written before the kill", "project", "x\n")
    # no finish(): the process "died" here
    snaps.undo()
    assert tree(store.root) == before


def test_keeps_only_the_last_n(store: MemoryStore, tmp_path: Path) -> None:
    ticks = iter(range(1_700_000_000, 1_700_000_100))
    snaps = Snapshots(store, tmp_path / "snaps", keep=3, clock=lambda: float(next(ticks)))
    ids = [snaps.take(f"run {i}").id for i in range(5)]
    assert [s.id for s in snaps.list()] == ids[::-1][:3]


def test_restores_mtime(store: MemoryStore, tmp_path: Path) -> None:
    target = store.root / "deploy_rule.md"
    os.utime(target, (1_600_000_000, 1_600_000_000))
    snaps = Snapshots(store, tmp_path / "snaps")
    snap = snaps.take("dream")
    JournalingStore(store, snap).write_text(target.name, "changed\n")
    snaps.undo()
    assert target.stat().st_mtime == 1_600_000_000
