from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from memdir.consolidate.lock import LOCK_NAME, ConsolidationLock, pid_alive
from tests.consolidate.procs import dead_pid, spawn

NOW = 1_800_000_000.0


def write_lock(root: Path, body: str, mtime: float) -> Path:
    path = root / LOCK_NAME
    path.write_text(body)
    os.utime(path, (mtime, mtime))
    return path


def test_first_acquire_returns_zero_and_stamps_pid_and_now(tmp_path: Path) -> None:
    lock = ConsolidationLock(tmp_path, pid=4242)
    assert lock.last_consolidated_at() == 0.0
    assert lock.try_acquire(NOW) == 0.0
    assert (tmp_path / LOCK_NAME).read_text().strip() == "4242"
    assert lock.last_consolidated_at() == NOW


def test_fresh_live_holder_blocks(tmp_path: Path) -> None:
    write_lock(tmp_path, f"{os.getppid()}\n", NOW - 60)
    assert ConsolidationLock(tmp_path, pid=1).try_acquire(NOW) is None
    assert (tmp_path / LOCK_NAME).read_text().strip() == str(os.getppid())


def test_stale_live_holder_is_taken_over(tmp_path: Path) -> None:
    write_lock(tmp_path, f"{os.getppid()}\n", NOW - 3601)
    assert ConsolidationLock(tmp_path, pid=7).try_acquire(NOW) == NOW - 3601


def test_dead_holder_is_taken_over(tmp_path: Path) -> None:
    write_lock(tmp_path, f"{dead_pid()}\n", NOW - 10)
    assert ConsolidationLock(tmp_path, pid=7).try_acquire(NOW) == NOW - 10


@pytest.mark.parametrize("body", ["", "garbage", "-5", "12 34"])
def test_unreadable_body_counts_as_no_holder(tmp_path: Path, body: str) -> None:
    write_lock(tmp_path, body, NOW - 10)
    assert ConsolidationLock(tmp_path, pid=7).try_acquire(NOW) == NOW - 10


def test_rollback_to_nothing_unlinks(tmp_path: Path) -> None:
    lock = ConsolidationLock(tmp_path, pid=7)
    prior = lock.try_acquire(NOW)
    assert prior == 0.0
    lock.rollback(prior)
    assert not (tmp_path / LOCK_NAME).exists()
    assert lock.last_consolidated_at() == 0.0


def test_rollback_restores_prior_mtime_with_empty_body(tmp_path: Path) -> None:
    write_lock(tmp_path, "", NOW - 90_000)
    lock = ConsolidationLock(tmp_path, pid=7)
    prior = lock.try_acquire(NOW)
    assert prior == NOW - 90_000
    lock.rollback(prior)
    assert lock.last_consolidated_at() == NOW - 90_000
    assert (tmp_path / LOCK_NAME).read_text() == ""


def test_rollback_leaves_a_later_holder_alone(tmp_path: Path) -> None:
    mine = ConsolidationLock(tmp_path, pid=dead_pid())
    prior = mine.try_acquire(NOW - 7200)
    assert prior is not None
    theirs = ConsolidationLock(tmp_path, pid=os.getpid())
    assert theirs.try_acquire(NOW) is not None  # ours looks dead: taken over
    mine.rollback(prior)
    assert theirs.state().pid == os.getpid()
    assert theirs.last_consolidated_at() == NOW


def test_release_keeps_the_new_time(tmp_path: Path) -> None:
    state = tmp_path / "state"
    lock = ConsolidationLock(tmp_path / "mem", state_dir=state)
    assert lock.try_acquire(NOW) == 0.0
    assert (state / "dream-inflight.json").exists()
    lock.release()
    assert not (state / "dream-inflight.json").exists()
    assert lock.last_consolidated_at() == NOW
    assert lock.recover() is False


def test_pid_alive() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(dead_pid())
    assert not pid_alive(None)
    assert not pid_alive(0)


RACER = """
import sys, time
from pathlib import Path
from memdir.consolidate.lock import ConsolidationLock
root, go = Path(sys.argv[1]), Path(sys.argv[2])
lock = ConsolidationLock(root)
while not go.exists():
    time.sleep(0.001)
print("won" if lock.try_acquire() is not None else "lost", flush=True)
time.sleep(1.5)  # stay alive so the winner's PID is live while the others try
"""


def test_racing_processes_exactly_one_wins(tmp_path: Path) -> None:
    root, go = tmp_path / "mem", tmp_path / "go"
    root.mkdir()
    procs = [spawn(RACER, str(root), str(go)) for _ in range(6)]
    try:
        time.sleep(0.8)  # let every interpreter start and spin on the go file
        go.touch()
        outputs = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    results = [out.strip() for out, _ in outputs]
    assert sorted(results) == ["lost"] * 5 + ["won"], [err for _, err in outputs]
    winner = procs[results.index("won")].pid
    assert ConsolidationLock(root).state().pid == winner


HOLDER = """
import sys, time
from pathlib import Path
from memdir.consolidate.lock import ConsolidationLock
lock = ConsolidationLock(Path(sys.argv[1]), state_dir=Path(sys.argv[2]))
print("acquired" if lock.try_acquire() is not None else "blocked", flush=True)
time.sleep(60)
"""


def test_kill_9_holder_is_rolled_back_by_recover(tmp_path: Path) -> None:
    root, state = tmp_path / "mem", tmp_path / "state"
    root.mkdir()
    prior = time.time() - 5 * 86_400
    write_lock(root, "", prior)
    proc = spawn(HOLDER, str(root), str(state))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "acquired"
        observer = ConsolidationLock(root, state_dir=state)
        assert observer.state().pid == proc.pid
        assert observer.last_consolidated_at() > prior
        assert observer.recover() is False  # holder alive: still dreaming
        assert observer.try_acquire() is None  # a fresh live lock is respected
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.communicate()
    observer = ConsolidationLock(root, state_dir=state)
    assert observer.recover() is True
    assert observer.last_consolidated_at() == prior
    assert observer.recover() is False
