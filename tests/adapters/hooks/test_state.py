"""Per-session hook state: never twice, the budget, and no lost update across processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memdir.adapters.hooks import state as state_mod
from memdir.adapters.hooks.state import Injected, SessionState, SessionStore
from memdir.errors import LockHeldError


def memory(name: str, size: int = 100) -> Injected:
    return Injected(
        f"/m/{name}.md", f"{name}.md", f"Memory (saved today): /m/{name}.md:", "x" * size
    )


def test_accept_never_twice_and_within_the_turn_cap() -> None:
    s = SessionState("s")
    first = s.accept([memory("a"), memory("b", 5000), memory("c")], max_chars=1000)
    assert [m.filename for m in first] == ["a.md", "c.md"]  # b is too big for this turn
    assert s.accept([memory("a"), memory("b", 500)], max_chars=1000) == [memory("b", 500)]
    assert s.surfaced == ["/m/a.md", "/m/c.md", "/m/b.md"]


def test_budget_stops_recall_until_compaction_resets_it() -> None:
    s = SessionState("s", budget_bytes=300)
    assert len(s.accept([memory("a", 200), memory("b", 200)], max_chars=9000)) == 2
    assert s.exhausted
    assert s.accept([memory("c")], max_chars=9000) == []


def test_corrupt_state_starts_fresh(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.path("s1").parent.mkdir(parents=True)
    store.path("s1").write_bytes(b"\x00\xffnot json")
    assert store.load("s1") == SessionState("s1")
    with store.update("s1") as s:
        s.notices.append("Saved 1 memory")
    assert store.load("s1").notices == ["Saved 1 memory"]


def test_a_mangled_settled_list_keeps_only_its_well_formed_entries(tmp_path: Path) -> None:
    """The state file is ours but a user or a crash can mangle it: loading never raises."""
    import json

    store = SessionStore(tmp_path)
    with store.update("s1") as s:
        s.settled, s.settled_at = [memory("a"), memory("b")], 1000.0
    raw = json.loads(store.path("s1").read_text())
    raw["settled"] = [raw["settled"][0], {"path": "/m/x.md"}, "a string", None, [1, 2]]
    store.path("s1").write_text(json.dumps(raw))
    loaded = store.load("s1")
    assert loaded.settled == [memory("a")] and loaded.settled_at == 1000.0
    raw["settled"] = {"not": "a list"}
    store.path("s1").write_text(json.dumps(raw))
    assert store.load("s1").settled == []


def test_a_state_locked_by_another_process_fails_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_mod, "STATE_LOCK_TIMEOUT", 0.2)
    store = SessionStore(tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from memdir.atomic import FileLock;"
            "FileLock(Path(sys.argv[1])).acquire(); print('held', flush=True); time.sleep(60)",
            str(store.lock_path("s1")),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(LockHeldError), store.update("s1"):
            pass
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


_WORKER = """
import sys
from pathlib import Path
from memdir.adapters.hooks.state import SessionStore
store, worker = SessionStore(Path(sys.argv[1])), sys.argv[2]
for i in range(15):
    with store.update("shared") as s:
        s.notices.append(f"{worker}-{i}")
        s.surfaced.append(f"/m/{worker}-{i}.md")
"""


def test_processes_racing_on_one_session_lose_nothing(tmp_path: Path) -> None:
    # plain processes, not multiprocessing: its resource tracker would outlive the test
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(tmp_path), str(w)]) for w in range(4)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    final = SessionStore(tmp_path).load("shared")
    assert sorted(final.notices) == sorted(f"{w}-{i}" for w in range(4) for i in range(15))
    assert len(set(final.surfaced)) == 60


def test_prune_removes_only_old_sessions(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    for sid in ("old", "new"):
        with store.update(sid) as s:
            s.cursor = "u1"
    import os

    os.utime(store.path("old"), (1, 1))
    assert store.prune(now=40 * 86400) == 1
    assert not store.path("old").exists() and store.path("new").exists()


def test_a_compact_start_right_after_a_resume_start_keeps_what_the_resume_gave() -> None:
    """Codex compacts a resumed session first, then fires SessionStart(resume) and
    SessionStart(compact): the resume's blocks are already in the compacted context."""
    state = SessionState("s")
    assert state.claim_start("e1", ["instr", "index-v1"], "startup", 100.0)[1] == [
        "instr",
        "index-v1",
    ]
    state.compacted_at = 200.0  # pre-compact
    assert state.claim_start("e2", ["instr", "index-v2"], "resume", 201.0)[1] == ["index-v2"]
    _, new = state.claim_start("e3", ["instr", "index-v2", "notes"], "compact", 201.5)
    assert new == ["instr", "notes"]  # index-v2 once; the instructions the compaction dropped


def test_a_compaction_after_the_start_drops_every_block() -> None:
    """Claude Code: the start, then later a compaction (pre-compact), then SessionStart(compact):
    the compaction took every earlier block out."""
    state = SessionState("s")
    state.claim_start("e1", ["instr", "index"], "resume", 100.0)
    state.compacted_at = 300.0
    _, new = state.claim_start("e2", ["instr", "index", "notes"], "compact", 301.0)
    assert new == ["instr", "index", "notes"]
