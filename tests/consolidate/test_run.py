from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from memdir.consolidate.base import DreamReport
from memdir.consolidate.gate import DreamConfig, DreamGate
from memdir.consolidate.lock import LOCK_NAME, ConsolidationLock
from memdir.consolidate.run import maybe_dream, maybe_dream_sync

NOW = 1_800_000_000.0
PRIOR = NOW - 3 * 86_400


class FakeDreamer:
    def __init__(self, *, ok: bool = True, raises: BaseException | None = None) -> None:
        self.ok = ok
        self.raises = raises
        self.calls: list[Sequence[str]] = []

    async def dream(self, sessions: Sequence[str]) -> DreamReport:
        self.calls.append(sessions)
        if self.raises is not None:
            raise self.raises
        return DreamReport("offline", ok=self.ok, changed=["a.md", "b.md"])


@pytest.fixture
def gate(tmp_path: Path) -> DreamGate:
    mem = tmp_path / "mem"
    mem.mkdir()
    (mem / LOCK_NAME).write_text("")
    os.utime(mem / LOCK_NAME, (PRIOR, PRIOR))
    lock = ConsolidationLock(mem, state_dir=tmp_path / "state")
    return DreamGate(lock, tmp_path / "t", enabled=True, config=DreamConfig(min_sessions=0))


def test_runs_and_stamps_now(gate: DreamGate) -> None:
    dreamer = FakeDreamer()
    outcome = maybe_dream_sync(gate, dreamer, now=NOW)
    assert outcome.ran and outcome.reason == "ran"
    assert outcome.notice == "Improved 2 memories"
    assert gate.lock.last_consolidated_at() == NOW
    assert dreamer.calls == [()]


def test_closed_gate_does_not_run(gate: DreamGate) -> None:
    dreamer = FakeDreamer()
    outcome = maybe_dream_sync(gate, dreamer, now=PRIOR + 3600)
    assert not outcome.ran and outcome.reason == "gate-closed"
    assert outcome.gate is not None and outcome.gate.reason == "too-soon"
    assert dreamer.calls == []


def test_force_skips_gates_but_not_a_live_lock(gate: DreamGate) -> None:
    dreamer = FakeDreamer()
    assert maybe_dream_sync(gate, dreamer, now=PRIOR + 60, force=True).ran
    lock_file = gate.lock.memory_dir / LOCK_NAME
    lock_file.write_text(f"{os.getppid()}\n")  # another live process holds it, stamped just now
    os.utime(lock_file, (PRIOR + 100, PRIOR + 100))
    outcome = maybe_dream_sync(gate, dreamer, now=PRIOR + 120, force=True)
    assert outcome.reason == "locked"
    assert len(dreamer.calls) == 1
    assert gate.lock.state().pid == os.getppid()


@pytest.mark.parametrize(
    "dreamer",
    [FakeDreamer(ok=False), FakeDreamer(raises=RuntimeError("boom"))],
    ids=["failed", "raised"],
)
def test_failure_rolls_the_lock_back(gate: DreamGate, dreamer: FakeDreamer) -> None:
    if dreamer.raises is not None:
        with pytest.raises(RuntimeError):
            maybe_dream_sync(gate, dreamer, now=NOW)
    else:
        assert maybe_dream_sync(gate, dreamer, now=NOW).reason == "failed"
    assert gate.lock.last_consolidated_at() == PRIOR
    assert gate.lock.recover() is False


def test_cancel_rolls_the_lock_back(gate: DreamGate) -> None:
    started = asyncio.Event()

    class Slow:
        async def dream(self, sessions: Sequence[str]) -> DreamReport:
            started.set()
            await asyncio.sleep(30)
            raise AssertionError("not cancelled")

    async def scenario() -> None:
        task = asyncio.create_task(maybe_dream(gate, Slow(), now=NOW))
        await started.wait()
        assert gate.lock.last_consolidated_at() == NOW
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert gate.lock.last_consolidated_at() == PRIOR
