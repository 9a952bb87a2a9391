"""Crash leftovers (issue #8 item 8): real ``kill -9`` of writer processes, then one more write.

Before: temp files stayed behind after a killed writer (15 after 50 kills) and MEMORY.md
disagreed with the files in about half of the kills until the user ran ``index rebuild``.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memdir.atomic import temp_name
from memdir.recovery import DIRTY_NAME, WriteIntent, stale_temp_files
from memdir.store import MemoryStore

WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import memdir.atomic, memdir.index
    from memdir.store import MemoryStore

    root, mode, name = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    store = MemoryStore(root)

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    if mode == "before-index":      # the memory file is written, its index line is not
        memdir.index.upsert_file_entry = die
        memdir.index.remove_file_entry = die
    elif mode == "before-rename":   # the temp file is written and fsynced, never renamed
        memdir.atomic.os.replace = die
    if mode == "loop":
        print("ready", flush=True)
        i = 0
        while True:
            i += 1
            store.create(f"{name} {i % 7}", f"note {i}", "user", "body " * 200, overwrite=True)
            if i % 5 == 0 and store.exists(f"{name.lower()}_{(i + 3) % 7}.md"):
                store.delete(f"{name.lower()}_{(i + 3) % 7}.md")
    elif mode == "rename":
        memdir.index.upsert_file_entry = die
        store.rename("victim.md", name)
    else:
        store.create(name, "written by a writer that was killed", "user", "complete body")
    """
)


def run_writer(root: Path, mode: str, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WRITER, str(root), mode, name],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.tmp") if p.is_file()]


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore(tmp_path / "mem")
    s.create("Victim", "to be renamed", "user", "v", rel="victim.md")
    return s


def test_writer_killed_between_file_and_index_is_repaired_by_the_next_write(
    store: MemoryStore,
) -> None:
    done = run_writer(store.root, "before-index", "Orphan")
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert (store.root / "orphan.md").is_file()
    [report] = store.check_index()
    assert report.unindexed == ["orphan.md"]  # the drift a killed writer leaves
    store.create("Next", "any later write", "user", "x")
    [report] = store.check_index()
    assert report.ok, report
    assert (
        "- [Orphan](orphan.md) — written by a writer that was killed"
        in (store.root / "MEMORY.md").read_text()
    )
    assert not (store.root / DIRTY_NAME).exists()


def test_writer_killed_mid_rename_is_repaired_by_the_next_write(store: MemoryStore) -> None:
    done = run_writer(store.root, "rename", "renamed.md")
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert (store.root / "renamed.md").is_file() and not (store.root / "victim.md").exists()
    store.create("Next", "any later write", "user", "x")
    [report] = store.check_index()
    assert report.ok, report
    index = (store.root / "MEMORY.md").read_text()
    assert "(renamed.md)" in index and "(victim.md)" not in index


def test_temp_file_of_a_killed_writer_is_removed_by_the_next_write(store: MemoryStore) -> None:
    done = run_writer(store.root, "before-rename", "Ghost")
    assert done.returncode == -signal.SIGKILL, done.stderr
    [left] = temps(store.root)
    assert stale_temp_files(store.root) == [left]  # its writer is gone
    assert not (store.root / "ghost.md").exists()
    store.create("Next", "any later write", "user", "x")
    assert temps(store.root) == []
    [report] = store.check_index()
    assert report.ok


def test_many_random_kills_leave_nothing_after_one_write(store: MemoryStore) -> None:
    rng = random.Random(8)
    for round_ in range(12):
        with subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store.root), "loop", f"W{round_ % 3}"],
            stdout=subprocess.PIPE,
            text=True,
        ) as proc:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.01, 0.25))
            proc.kill()  # SIGKILL
            assert proc.wait(timeout=10) == -signal.SIGKILL  # killed, not crashed
    store.create("After", "the write after the crashes", "user", "x")
    assert temps(store.root) == []
    for report in store.check_index():
        assert report.ok, report
    assert not (store.root / DIRTY_NAME).exists()


def test_doctor_mentions_leftovers_before_they_are_repaired(
    store: MemoryStore, tmp_path: Path
) -> None:
    from memdir.repair import crash_leftovers

    assert run_writer(store.root, "before-rename", "Ghost").returncode == -signal.SIGKILL
    assert run_writer(store.root, "before-index", "Orphan").returncode == -signal.SIGKILL
    kinds = sorted(p.kind for p in crash_leftovers(store))
    assert kinds == ["interrupted-write", "stale-temp"]
    store.create("Next", "x", "user", "x")
    assert crash_leftovers(store) == []


# -- what counts as stale ----------------------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], **_CAPTURE)
    return int(proc.stdout)


_CAPTURE: dict[str, object] = {"capture_output": True, "text": True, "check": True}


def test_stale_is_a_dead_writer_or_an_old_file_never_a_live_one(tmp_path: Path) -> None:
    dead = tmp_path / f".a.md.{_dead_pid()}-0123abcd.tmp"
    live = tmp_path / temp_name("b.md")  # our own pid
    old = tmp_path / f".c.md.{os.getpid()}-0123abcd.tmp"
    legacy = tmp_path / ".d.md.0123456789ab.tmp"
    for p in (dead, live, old, legacy):
        p.write_text("x")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    (tmp_path / ".e.md.1-0123abcd.tmp").symlink_to(tmp_path / "elsewhere")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / f".f.{_dead_pid()}-0123abcd.tmp").write_text("not ours")
    assert stale_temp_files(tmp_path) == sorted([dead, old])
    legacy_old = time.time() - 7200
    os.utime(legacy, (legacy_old, legacy_old))
    assert legacy in stale_temp_files(tmp_path)


def test_failed_write_repairs_at_once_and_clears_the_marker(tmp_path: Path) -> None:
    repaired: list[list[str]] = []
    intent = WriteIntent(tmp_path)
    with pytest.raises(RuntimeError), intent.covering(["a.md"], repaired.append):
        assert intent.pending() == ["a.md"]
        raise RuntimeError("boom")
    assert repaired == [["a.md"]] and intent.pending() is None


def test_marker_stays_when_the_immediate_repair_fails_too(tmp_path: Path) -> None:
    def broken(rels: list[str]) -> None:
        raise OSError("disk full")

    intent = WriteIntent(tmp_path)
    with pytest.raises(RuntimeError), intent.covering(["a.md"], broken):
        raise RuntimeError("boom")
    assert intent.pending() == ["a.md"]


def test_a_stale_temp_without_a_crash_marker_is_removed_by_the_next_locked_write(
    store: MemoryStore,
) -> None:
    """Issue #22.9: doctor says "removed on the next locked write"; that must hold even when the
    writer that left the temp left no write intent (a killed index rewrite, another tool)."""
    from memdir.repair import crash_leftovers

    store.create("First", "a memory", "user", "x")
    stale = store.root / f".a.md.{_dead_pid()}-deadbeef.tmp"
    stale.write_text("half a file")
    assert [p.kind for p in crash_leftovers(store)] == ["stale-temp"]
    store.create("Next", "any later write", "user", "x")
    assert not stale.exists()
    assert crash_leftovers(store) == []
