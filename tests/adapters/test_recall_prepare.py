"""``memdir install`` and ``memdir import`` have the recall index built before the first prompt
(issue #37: the first prompt after a fresh install went without recall).

Real daemons on real Unix sockets; each test stops the daemon it caused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.adapters import recall_client
from memdir.adapters.recall_prepare import prepare
from memdir.errors import DaemonError
from memdir.recall.index_files import saved
from memdir.store import MemoryStore
from tests.adapters.test_recall_daemon import start


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    memdir_home = tmp_path / "mh"
    yield memdir_home
    sock = recall_client.socket_path(memdir_home)
    try:
        recall_client.request(sock, {"op": "stop"}, timeout=5)
    except DaemonError:
        return
    deadline = time.monotonic() + 20
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def _memories(memory_dir: Path) -> None:
    store = MemoryStore(memory_dir)
    store.create("Deploys", "production deploys go to fly.io blue-green", "project", "fly deploy\n")
    store.create("Coffee", "the user drinks espresso without sugar", "user", "espresso\n")


def _until(what: str, check: object, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


ON = {"MEMDIR_PREPARE_RECALL": "1", "MEMDIR_DAEMON_IDLE": "60"}


def test_a_dir_with_memories_and_no_index_gets_one_built_in_the_background(
    tmp_path: Path, home: Path
) -> None:
    memory_dir, cache_dir = tmp_path / "memory", tmp_path / "cache"
    _memories(memory_dir)
    started = time.monotonic()
    line = prepare(ON, home, memory_dir, cache_dir, wait=0)
    assert time.monotonic() - started < 2.0  # told not to wait for the build
    assert line is not None and str(memory_dir) in line and "background" in line
    _until("the index on disk", lambda: saved(cache_dir))
    sock = recall_client.socket_path(home)
    status = recall_client.request(sock, {"op": "status"})
    assert status["memory_dirs"] == [str(memory_dir)]  # and loaded in the daemon
    assert prepare(ON, home, memory_dir, cache_dir) is None  # built: nothing to do


def test_the_command_waits_for_the_build_so_the_first_prompt_finds_it(
    tmp_path: Path, home: Path
) -> None:
    """A person may start their agent the moment `memdir install` returns: by then the index
    is on disk (and loaded in the daemon)."""
    memory_dir, cache_dir = tmp_path / "memory", tmp_path / "cache"
    _memories(memory_dir)
    line = prepare(ON, home, memory_dir, cache_dir)
    assert line is not None and line.startswith("recall: built the search index"), line
    assert saved(cache_dir)
    status = recall_client.request(recall_client.socket_path(home), {"op": "status"})
    assert status["memory_dirs"] == [str(memory_dir)]


def test_a_running_daemon_is_asked_to_build_it(tmp_path: Path, home: Path) -> None:
    memory_dir, cache_dir = tmp_path / "memory", tmp_path / "cache"
    _memories(memory_dir)
    sock = recall_client.socket_path(home)
    proc = start(sock)
    try:
        assert prepare(ON, home, memory_dir, cache_dir) is not None
        _until("the index on disk", lambda: saved(cache_dir))
        assert recall_client.request(sock, {"op": "status"})["pid"] == proc.pid  # no second one
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stderr is not None
        proc.stderr.close()


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"MEMDIR_PREPARE_RECALL": "0"}, "switched off"),
        ({"MEMDIR_PREPARE_RECALL": "1", "MEMDIR_HOOK_DAEMON": "0"}, "no daemon wanted"),
    ],
)
def test_switched_off_it_starts_nothing(
    tmp_path: Path, home: Path, env: dict[str, str], why: str
) -> None:
    memory_dir, cache_dir = tmp_path / "memory", tmp_path / "cache"
    _memories(memory_dir)
    assert prepare(env, home, memory_dir, cache_dir) is None, why
    assert not recall_client.socket_path(home).with_name("recall.sock.spawned").exists()


def test_an_empty_dir_needs_no_build(tmp_path: Path, home: Path) -> None:
    memory_dir, cache_dir = tmp_path / "memory", tmp_path / "cache"
    memory_dir.mkdir()
    (memory_dir / "MEMORY.md").write_text("# index\n", encoding="utf-8")
    (memory_dir / ".hidden").mkdir()
    (memory_dir / ".hidden" / "x.md").write_text("not a memory\n", encoding="utf-8")
    assert prepare(ON, home, memory_dir, cache_dir) is None
    assert not (home / "run").exists()


def _memdir(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "HOME": str(tmp_path / "home"), **env}
    return subprocess.run(
        [sys.executable, "-m", "memdir", "--json", *args],
        cwd=tmp_path / "project",
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_memdir_import_builds_the_index_before_it_returns(tmp_path: Path) -> None:
    """End to end: the import says what it built; the index is on disk before a prompt."""
    (tmp_path / "project" / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    export = tmp_path / "memory.jsonl"
    export.write_text(
        json.dumps(
            {
                "type": "entity",
                "name": "payments-service",
                "entityType": "service",
                "observations": ["Integration tests must use the real PostgreSQL, never mocks"],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    env = {**ON, "MEMDIR_HOME": str(tmp_path / "mh")}
    try:
        out = _memdir(tmp_path, "import", "mcp-memory", str(export), env=env)
        assert out.returncode == 0, out.stderr
        payload = json.loads(out.stdout)
        assert payload["recall"].startswith("recall: built the search index"), payload
        assert [*(tmp_path / "mh").glob("cache/*/search/*/manifest.json")]  # before it returned
        again = _memdir(tmp_path, "import", "mcp-memory", str(export), env=env)
        assert "recall" not in json.loads(again.stdout)  # nothing new to build
    finally:
        _memdir(tmp_path, "hook", "daemon", "stop", env=env)
