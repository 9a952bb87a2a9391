"""The runtime's dream step: the real gate and lock around a recording dreamer."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Sequence

from memdir.consolidate.base import DreamReport
from memdir.consolidate.factory import consolidation_lock
from memdir.consolidate.lock import LOCK_NAME
from memdir.runtime import RuntimeOptions
from tests.runtime.conftest import Project

DAY = 86_400


class RecordingDreamer:
    """Implements the Dreamer protocol; records the sessions it was given."""

    def __init__(self, *, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls: list[Sequence[str]] = []

    async def dream(self, sessions: Sequence[str]) -> DreamReport:
        self.calls.append(sessions)
        await asyncio.sleep(self.delay)
        return DreamReport("offline", changed=["a.md"])


def past_sessions(project: Project, count: int) -> list[str]:
    """``count`` transcripts newer than a consolidation two days ago."""
    paths = project.paths()
    paths.memory_dir.mkdir(parents=True, exist_ok=True)
    lock = paths.memory_dir / LOCK_NAME
    lock.write_text("")
    two_days_ago = time.time() - 2 * DAY
    os.utime(lock, (two_days_ago, two_days_ago))
    paths.transcripts_dir.mkdir(parents=True, exist_ok=True)
    ids = [str(uuid.uuid4()) for _ in range(count)]
    for sid in ids:
        (paths.transcripts_dir / f"{sid}.jsonl").write_text("{}\n")
    return ids


async def test_open_gate_dreams_in_the_background_at_start(project: Project) -> None:
    ids = past_sessions(project, 5)
    dreamer = RecordingDreamer()
    rt = project.runtime(env={"MEMDIR_AUTO_DREAM": "1"}, dreamer=dreamer)
    await rt.start()
    report = await rt.end(timeout=5)
    assert "dream" in report.drained
    assert sorted(dreamer.calls[0]) == sorted(ids)
    assert "Improved 1 memory" in report.notices
    assert time.time() - consolidation_lock(project.paths()).last_consolidated_at() < 60


async def test_closed_gate_does_not_dream(project: Project) -> None:
    past_sessions(project, 2)  # fewer than five sessions since the last dream
    dreamer = RecordingDreamer()
    rt = project.runtime(env={"MEMDIR_AUTO_DREAM": "1"}, dreamer=dreamer)
    await rt.start()
    await rt.end(timeout=5)
    assert dreamer.calls == []
    assert "too-few-sessions" in rt.status()[5].detail or "throttled" in rt.status()[5].detail


async def test_dream_cut_short_by_end_rolls_the_lock_back(project: Project) -> None:
    past_sessions(project, 5)
    before = consolidation_lock(project.paths()).last_consolidated_at()
    rt = project.runtime(env={"MEMDIR_AUTO_DREAM": "1"}, dreamer=RecordingDreamer(delay=30))
    await rt.start()
    report = await rt.end(timeout=0.3)
    assert report.timed_out == ["dream"]
    assert rt.status()[5].state == "timed_out"
    assert consolidation_lock(project.paths()).last_consolidated_at() == before  # retried later


async def test_manual_dream_skips_the_gates(project: Project) -> None:
    dreamer = RecordingDreamer()
    rt = project.runtime(dreamer=dreamer)  # auto dream off by default
    await rt.start()
    assert rt.status()[5].runs == 1 and dreamer.calls == []  # gate checked, closed (disabled)
    assert await rt.dream_now() == "Improved 1 memory"
    assert len(dreamer.calls) == 1
    await rt.end(timeout=5)


async def test_dream_turned_off(project: Project) -> None:
    rt = project.runtime(options=RuntimeOptions(dream=False))
    await rt.start()
    assert rt.status()[5].state == "off"
    assert await rt.dream_now() == "no dreamer configured"
    await rt.end()


async def test_default_offline_dreamer_consolidates_on_request(project: Project) -> None:
    store = project.store()
    store.create("Deploy day", "deploys happen on tuesdays", "project", "We deploy on Tuesdays.")
    store.create("Deploy days", "deploys happen on tuesdays", "project", "We deploy on Tuesdays.")
    rt = project.runtime()  # no model: the offline dreamer
    await rt.start()
    line = await rt.dream_now()
    assert line.startswith(("Improved", "ran")), line
    assert rt.status()[5].state == "ok"
    stamped = consolidation_lock(project.paths()).last_consolidated_at()
    assert time.time() - stamped < 60
    await rt.end()
