"""Regression: memdir's context must not land twice in one Claude Code context.

Seen in the real host: with the plugin and a project install both active every hook ran twice
and the instructions + MEMORY.md block was injected twice; after ``/compact`` then
``--continue`` the block was there twice as well.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost, HookRun


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"})
    MemoryStore(fake.memory_dir).create(
        "Deploys", "production deploys go to fly.io", "project", "fly.io, blue-green.\n"
    )
    yield fake
    fake.stop_daemon()


def test_one_session_start_delivered_twice_injects_once(host: FakeHost) -> None:
    s = host.session()
    payload = s.payload("session-start", source="startup")
    runs: list[HookRun] = []
    threads = [
        threading.Thread(target=lambda: runs.append(host.run("session-start", payload)))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.code for r in runs] == [0, 0]
    contexts = [r.context for r in runs if r.context]
    assert len(contexts) == 1 and "# Memory (memdir)" in contexts[0]
    log = json.loads(
        host.memdir("--json", "hook", "log", "--session", s.session_id, "--limit", "0").stdout
    )
    assert sorted(bool(row.get("skipped")) for row in log) == [False, True]


def test_compact_then_continue_keeps_one_block(host: FakeHost) -> None:
    s = host.session()
    assert "# Memory (memdir)" in s.start("startup").context
    s.prompt("how do production deploys work here?")
    s.reply("fly.io")
    s.compact("Summary: the user asked about deploys.")
    assert "# Memory (memdir)" in s.start("compact").context  # the old block was summarised
    resumed = s.start("resume")  # `claude --continue`: the context already holds the block
    assert resumed.code == 0 and resumed.stdout == ""
    # a block that changed since (a new memory in MEMORY.md) is new to the context
    MemoryStore(host.memory_dir).create("Coffee", "the user drinks espresso", "user", "x\n")
    assert "Coffee" in s.start("resume").context
    # a fresh context (/clear) gets the block again
    assert "# Memory (memdir)" in s.start("clear").context
