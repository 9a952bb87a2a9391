from __future__ import annotations

import os
import uuid
from pathlib import Path

from memdir.consolidate.gate import DreamConfig, DreamGate
from memdir.consolidate.lock import LOCK_NAME, ConsolidationLock
from tests.consolidate.procs import dead_pid

NOW = 1_800_000_000.0
DAY = 86_400.0


def transcript(tdir: Path, mtime: float, name: str | None = None) -> str:
    sid = name or str(uuid.uuid4())
    path = tdir / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")
    os.utime(path, (mtime, mtime))
    return sid


def gate(tmp_path: Path, *, enabled: bool = True, **cfg: float) -> DreamGate:
    lock = ConsolidationLock(tmp_path / "mem", state_dir=tmp_path / "state")
    return DreamGate(
        lock,
        tmp_path / "transcripts",
        enabled=enabled,
        config=DreamConfig(**cfg),  # type: ignore[arg-type]
    )


def stamp(tmp_path: Path, mtime: float, body: str = "") -> None:
    path = tmp_path / "mem" / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    os.utime(path, (mtime, mtime))


def test_disabled(tmp_path: Path) -> None:
    assert gate(tmp_path, enabled=False).check(NOW).reason == "disabled"


def test_time_gate_reads_the_lock_mtime(tmp_path: Path) -> None:
    stamp(tmp_path, NOW - 23 * 3600)
    result = gate(tmp_path).check(NOW)
    assert (result.open, result.reason) == (False, "too-soon")
    assert result.last_consolidated_at == NOW - 23 * 3600


def test_session_gate_counts_touched_uuid_transcripts_except_current(tmp_path: Path) -> None:
    stamp(tmp_path, NOW - 2 * DAY)
    tdir = tmp_path / "transcripts"
    recent = [transcript(tdir, NOW - 3600 * i) for i in range(1, 5)]
    transcript(tdir, NOW - 3 * DAY)  # before the last consolidation: not counted
    transcript(tdir, NOW - 60, name="notes")  # not a session id
    current = transcript(tdir, NOW - 30)
    result = gate(tmp_path).check(NOW, current_session=current)
    assert result.reason == "too-few-sessions"
    assert set(result.sessions) == set(recent)
    fifth = transcript(tdir, NOW - 100)
    result = gate(tmp_path).check(NOW, current_session=current)
    assert result.open and result.reason == "open"
    assert result.sessions[0] == fifth and len(result.sessions) == 5


def test_scan_throttle_per_gate(tmp_path: Path) -> None:
    g = gate(tmp_path)
    assert g.check(NOW).reason == "too-few-sessions"  # no lock file: time gate open
    assert g.check(NOW + 599).reason == "throttled"
    assert g.check(NOW + 601).reason == "too-few-sessions"


def test_missing_transcripts_dir_is_zero_sessions(tmp_path: Path) -> None:
    result = gate(tmp_path, min_sessions=0).check(NOW)
    assert result.open and result.sessions == ()


def test_gate_recovers_a_lock_left_by_a_killed_dream(tmp_path: Path) -> None:
    stamp(tmp_path, NOW - 2 * DAY)
    g = gate(tmp_path, min_sessions=0)
    victim = ConsolidationLock(tmp_path / "mem", state_dir=tmp_path / "state", pid=dead_pid())
    assert victim.try_acquire(NOW - 60) == NOW - 2 * DAY  # "killed" right after acquiring
    result = g.check(NOW)
    assert result.open, result.detail
    assert g.lock.last_consolidated_at() == NOW - 2 * DAY
