"""`session-end` dreams offline when the dream gate is open, and only then."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.store import MemoryStore
from memdir.transcripts import new_uuid
from tests.adapters.hooks.fakehost import FakeHost, FakeSession

BODY = "Deploys go out from the release branch only, after the smoke tests pass."


def _host(tmp_path: Path, **env: str) -> FakeHost:
    fake = FakeHost(tmp_path, env={"MEMDIR_AUTO_DREAM": "1", **env})
    store = MemoryStore(fake.memory_dir)
    # the same memory saved twice: the offline dream merges it into the newest copy
    store.create("Deploy rule", "How production deploys happen", "project", BODY, rel="a.md")
    store.create("Deploy rule", "How production deploys happen", "project", BODY, rel="b.md")
    return fake


def _past_sessions(fake: FakeHost, count: int) -> None:
    where = json.loads(fake.memdir("--json", "where").stdout)
    paths = where.get("paths", where)
    transcripts = Path(paths["transcripts_dir"])
    transcripts.mkdir(parents=True, exist_ok=True)
    for _ in range(count):
        (transcripts / f"{new_uuid()}.jsonl").write_text("{}\n")


def _dream_field(s: FakeSession) -> str:
    """What the session-end worker's dream step said (the hook itself only starts the worker)."""
    return str(s.wait_ended()["dream"])


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = _host(tmp_path)
    yield fake
    fake.stop_daemon()


def test_open_gate_dreams_and_stamps_the_lock(host: FakeHost) -> None:
    _past_sessions(host, 5)
    memory_dir = host.memory_dir
    s = host.session()
    before = time.time()
    end = s.hook("session-end", reason="prompt_input_exit")
    assert end.code == 0 and end.stdout == "" and end.stderr == ""

    assert _dream_field(s).startswith("Improved")
    lock = memory_dir / ".consolidate-lock"
    assert lock.stat().st_mtime >= before - 1  # the last-consolidated time moved to now
    retired = [
        p.name
        for p in (memory_dir / "a.md", memory_dir / "b.md")
        if "superseded_by" in p.read_text()
    ]
    assert len(retired) == 1  # one copy kept, the other points at it; nothing deleted
    assert f"({retired[0]})" not in (memory_dir / "MEMORY.md").read_text()

    # a second session ending right away finds the gate closed (24 h since the last dream)
    again = host.session()
    assert again.hook("session-end", reason="other").code == 0
    assert _dream_field(again).startswith("gate closed")


def test_too_few_sessions_leave_memory_untouched(host: FakeHost) -> None:
    _past_sessions(host, 2)
    memory_dir = host.memory_dir
    before = {p.name: p.read_bytes() for p in memory_dir.glob("*.md")}
    s = host.session()
    assert s.hook("session-end", reason="other").code == 0
    assert _dream_field(s).startswith("gate closed")
    assert {p.name: p.read_bytes() for p in memory_dir.glob("*.md")} == before
    assert not (memory_dir / ".consolidate-lock").exists()


def _dream_rows(fake: FakeHost) -> list[dict[str, object]]:
    log = json.loads(fake.memdir("--json", "hook", "log").stdout)
    return [row for row in log if row["event"] == "dream"]


@pytest.mark.parametrize("model", ["scripted", "host CLI failing"])
def test_with_a_model_the_dream_runs_in_a_worker_and_falls_back_offline(
    tmp_path: Path, model: str
) -> None:
    """SessionEnd never waits for a model dream: a detached worker checks the gate and dreams;
    a model dream that fails (here: a `claude` that exits with an error) is rolled back and the
    offline dreamer runs instead, so the open gate is used."""
    from tests.realhost.host import wait_for

    if model == "scripted":
        replies = tmp_path / "replies.json"
        replies.write_text(json.dumps([{"text": "Nothing to consolidate."}]))
        env = {"MEMDIR_MODEL": f"scripted:{replies}"}
    else:
        cli = tmp_path / "claude"
        cli.write_text("#!/bin/sh\necho 'not today' >&2\nexit 1\n")
        cli.chmod(0o755)
        env = {"MEMDIR_HOST_MODEL": "haiku", "MEMDIR_CLAUDE_CLI": str(cli)}
    fake = _host(tmp_path, **env)
    try:
        _past_sessions(fake, 5)
        s = fake.session()
        end = s.hook("session-end", reason="other")
        assert end.code == 0 and end.stdout == "" and end.stderr == ""
        assert _dream_field(s).startswith("checked in the background")
        wait_for(lambda: bool(_dream_rows(fake)), "the dream worker")
        (row,) = _dream_rows(fake)
        assert row["ran"] is True and row["reason"] == "ran", row
        if model == "scripted":
            assert "fallback" not in row
        else:
            assert "model dream failed" in str(row["fallback"]) and row["calls"] == 1
            assert str(row["notice"]).startswith("Improved")  # the offline dream merged
    finally:
        fake.stop_daemon()
