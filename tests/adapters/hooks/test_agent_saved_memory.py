"""Regression: Stop extraction must not overwrite a memory the agent saved this turn.

In a real Claude Code run the model saved a memory through memdir's own MCP tool
(``mcp__memdir__memory_save``); the Stop worker did not know that tool name, extracted the same
fact and rewrote the file in its own template. Whether the agent wrote memory is now read off the
memory dir, so any writer counts.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.store import MemoryStore
from memdir.transcripts import tool_use_block
from tests.adapters.hooks.fakehost import MODEL, FakeHost

FACT = "Remember that CI jobs run on the ubuntu-24.04 image."


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"})
    old = MemoryStore(fake.memory_dir).create(
        "Coffee order", "the user drinks espresso", "user", "Espresso.\n", rel="espresso.md"
    )
    # saved long before this session: a file written within the clock slack of the first
    # prompt would count as "the agent wrote memory this turn" and skip extraction
    an_hour_ago = time.time() - 3600
    os.utime(fake.memory_dir / old.path, (an_hour_ago, an_hour_ago))
    yield fake
    fake.stop_daemon()


def _extract_rows(host: FakeHost, session_id: str) -> list[dict[str, object]]:
    log = json.loads(
        host.memdir("--json", "hook", "log", "--session", session_id, "--limit", "0").stdout
    )
    return [row for row in log if row["event"] == "extract"]


@pytest.mark.parametrize("tool", ["mcp__memdir__memory_save", "Bash"])
def test_a_memory_saved_by_any_tool_survives_stop(host: FakeHost, tool: str) -> None:
    memory_dir = host.memory_dir
    s = host.session()
    s.start()
    s.prompt(FACT)
    # the agent saves it itself (through the store, as memdir's MCP server does)
    use = tool_use_block(tool, {"name": "CI image", "content": "CI jobs run on ubuntu-24.04"})
    s.transcript.assistant([use], model=MODEL, stop_reason="tool_use")
    saved = MemoryStore(memory_dir).create(
        "Build runners",
        "pipelines use Noble runners",
        "project",
        "Pipelines use Noble (24.04) runners, matching production.\n",
        rel="build_runners.md",
    )
    s.transcript.tool_result(use["id"], f"saved {saved.name}")
    s.reply("Saved: CI runs on ubuntu-24.04.")
    before = {p.name: p.read_bytes() for p in memory_dir.glob("*.md") if p.name != "MEMORY.md"}
    assert s.stop().code == 0
    state = s.wait_extracted()

    after = {p.name: p.read_bytes() for p in memory_dir.glob("*.md") if p.name != "MEMORY.md"}
    assert after == before  # nothing rewritten, nothing added
    assert state.notices == []
    rows = _extract_rows(host, s.session_id)
    assert rows and str(rows[-1]["skipped"]).startswith("main agent wrote memory")


def test_extraction_still_runs_the_next_turn_and_its_own_writes_do_not_count(
    host: FakeHost,
) -> None:
    memory_dir = host.memory_dir
    s = host.session()
    s.start()
    s.prompt("Remember that the staging database listens on port 5433.")
    s.reply("Noted.")
    s.stop()
    state = s.wait_extracted()
    assert state.notices == ["Saved 1 memory"]
    # the next turn: extraction's own file from the turn before is not "the agent wrote"
    s.prompt("Remember that the release train leaves every Tuesday.")
    s.reply("Noted.")
    s.stop()
    state = s.wait_extracted()
    assert state.notices == ["Saved 1 memory"]  # the first one was shown with the prompt
    texts = " ".join(p.read_text() for p in memory_dir.glob("*.md"))
    assert "5433" in texts and "Tuesday" in texts
