"""Zero-config inside the host, as a new user meets it: Claude Code on PATH, no MEMDIR_MODEL, no
API key set up for memdir. ``memdir install claude-code --project``, then a session in which the
user corrects the agent: the extraction worker runs the user's own ``claude`` (the fake replays
what a capable model would do), a feedback memory is written through memdir's tools, its cost is
recorded, and no hook runs inside the child."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.realhost.childfake import ChildAwareAnthropic
from tests.realhost.fakeapi import Reply, ToolCall
from tests.realhost.host import SRC, ClaudeHost, wait_for

FEEDBACK = """---
name: real database in tests
description: never mock the database in these tests; use the real test database
type: feedback
---
Don't mock the database in these tests.

**Why:** the user corrected this explicitly.
**How to apply:** integration tests use the real test database fixture.
"""
CORRECTION = "no, don't mock the database in these tests"


def with_claude_on_path(host: ClaudeHost) -> None:
    """What a Claude Code user has: ``claude`` on PATH (here: the pinned CLI)."""
    link = host.bin / "claude"
    if not link.exists():
        os.symlink(host.cli, link)


@pytest.fixture
def fake_api() -> Iterator[ChildAwareAnthropic]:
    with ChildAwareAnthropic() as api:
        yield api


@pytest.fixture(autouse=True)
def _this_checkout(host: ClaudeHost) -> None:
    # The installed hook command may be a venv's console script (an absolute path): make it
    # import this checkout's sources too, wherever that venv's editable install points.
    host.extra_env["PYTHONPATH"] = str(SRC)


def child_api(host: ClaudeHost) -> ChildAwareAnthropic:
    assert isinstance(host.api, ChildAwareAnthropic)
    return host.api


def extract_rows(host: ClaudeHost) -> list[dict[str, object]]:
    return [r for r in host.hook_log() if r.get("event") == "extract"]


def test_a_correction_becomes_a_feedback_memory_written_by_the_host_model(
    host: ClaudeHost,
) -> None:
    with_claude_on_path(host)
    installed = host.memdir("install", "claude-code", "--project")
    assert "claude-code:haiku" in installed.stdout and "$1.00" in installed.stdout
    memory_dir = host.memory_dir()
    target = memory_dir / "feedback_real_database.md"
    api = child_api(host)
    api.script("Understood — I will use the real database in these tests.")  # the user's session
    api.script_child(  # the extraction child (memdir's worker running `claude -p`)
        Reply(
            tool_calls=(
                ToolCall("mcp__memdir__Write", {"file_path": str(target), "content": FEEDBACK}),
            )
        ),
        "Saved the feedback memory.",
    )
    host.prompt(CORRECTION)
    wait_for(lambda: bool(extract_rows(host)), "the extraction worker", limit=90)

    (row,) = extract_rows(host)
    assert row["ok"] is True and row.get("fallback") is None, (row, host.hook_log())
    assert row["written"] == [str(target)]
    assert isinstance(row["cost_usd"], float) and row["cost_usd"] > 0
    assert target.read_text() == FEEDBACK
    assert "feedback_real_database.md" in (memory_dir / "MEMORY.md").read_text()

    child = api.child_requests()
    assert len(child) == 2
    assert not {n for r in child for n in r.tool_names()} & {"Bash", "Edit", "Write", "Read"}
    assert CORRECTION in child[0].text()
    # no hook ran in the child: the host's own request carries memdir's hook context, the
    # child's carries none (no SessionStart instructions, no recall block)
    users = [r for r in api.main_requests() if r not in child]
    assert "hook additional context" in users[0].text()
    assert all("hook additional context" not in r.text() for r in child)
    assert all("# Memory (memdir)" not in r.text() for r in child)

    # no recursion: every hook row belongs to the user's session; none to the child's
    sessions = {r.get("session") for r in host.hook_log()}
    assert len(sessions) == 1, sessions
    assert [r["event"] for r in host.hook_log()].count("session-start") == 1

    # the cost is visible where the user looks
    text_log = host.memdir("--text", "hook", "log").stdout
    assert "$" in text_log and "feedback_real_database.md" in text_log
    status = json.loads(host.memdir("--json", "status").stdout)
    spend = status["host_model"]["today"]
    assert spend["calls"] == 1 and spend["cost_usd"] == row["cost_usd"]


def test_without_the_cli_extraction_falls_back_offline_with_one_log_line(host: ClaudeHost) -> None:
    host.memdir("install", "claude-code", "--project")
    host.prompt("remember that I prefer tabs over spaces")
    wait_for(lambda: bool(extract_rows(host)), "the extraction worker", limit=90)
    (row,) = extract_rows(host)
    assert row["ok"] is True
    assert isinstance(row["fallback"], str) and "not installed" in row["fallback"]
    assert Path(str(row["written"][0])).is_file()  # type: ignore[index]


def test_llm_off_keeps_every_path_offline(host: ClaudeHost) -> None:
    with_claude_on_path(host)
    out = host.memdir("install", "claude-code", "--project", "--llm", "off").stdout
    assert "offline" in out
    host.prompt("remember that I prefer tabs over spaces")
    wait_for(lambda: bool(extract_rows(host)), "the extraction worker", limit=90)
    (row,) = extract_rows(host)
    assert row["fallback"] is None and "cost_usd" not in row
    assert all(
        not r.tool_names() or "mcp__memdir__Write" not in r.tool_names()
        for r in host.api.requests[1:]
    )


def test_memdir_chat_uses_the_host_model_when_no_model_is_set(host: ClaudeHost) -> None:
    """``memdir chat`` without MEMDIR_MODEL or an API key for memdir: the user's ``claude``
    answers, a tool call it makes is run by memdir's sandboxed toolset, the cost is recorded."""
    import subprocess

    with_claude_on_path(host)
    memory_dir = host.memory_dir()
    note = memory_dir / "user_prefers_tabs.md"
    content = "---\nname: tabs\ndescription: prefers tabs\ntype: user\n---\nPrefers tabs.\n"
    child_api(host).script_child(
        Reply(
            tool_calls=(
                ToolCall("mcp__memdir__Write", {"file_path": str(note), "content": content}),
            )
        ),
        "Noted: you prefer tabs.",
    )
    proc = subprocess.run(
        [str(host.bin / "memdir"), "chat"],
        input="I prefer tabs, remember that\n/exit\n",
        cwd=host.project,
        env=host.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Noted: you prefer tabs." in proc.stdout
    assert note.read_text() == content  # written by memdir's tool, in this process
    status = json.loads(host.memdir("--json", "status").stdout)
    assert status["host_model"]["today"]["calls"] == 2


NOTES_LINE = "- Migrating the billing tests to the real database (marker: notes-heron-91)."
CURRENT_STATE = "_What is being worked on right now, what is pending, the next step._"


def session_notes_path(host: ClaudeHost, session: str) -> Path:
    from memdir.config import load_settings
    from memdir.paths import resolve_paths

    settings = load_settings(
        host.env, cwd=host.project, flag_settings=None, claude_mode=False, memory_dir_flag=None
    )
    return resolve_paths(settings, cwd=host.project).session_memory_path(session)


def test_notes_before_compaction_are_updated_by_the_host_model_and_come_back(
    host: ClaudeHost,
) -> None:
    with_claude_on_path(host)
    host.memdir("install", "claude-code", "--project")
    api = child_api(host)
    api.script("Working on the billing tests.", "Still on it.")
    host.prompt("let's migrate the billing tests to the real database")
    host.prompt("continue with the invoice tests", resume=True)
    session = str(
        [r for r in host.hook_log() if r.get("event") == "user-prompt-submit"][-1]["session"]
    )
    edit = {
        "file_path": str(session_notes_path(host, session)),
        "old_string": CURRENT_STATE,
        "new_string": f"{CURRENT_STATE}\n{NOTES_LINE}",
    }
    api.script_child(  # the notes child: one Edit of the one file it may touch
        Reply(tool_calls=(ToolCall("mcp__memdir__Edit", edit),)),
        "Notes updated.",
        when="Always rewrite Current State",  # not an extraction child running meanwhile
    )
    host.prompt("/compact", resume=True)
    log = host.hook_log()
    (row,) = [r for r in log if r.get("event") == "notes"]
    assert row["ok"] is True and row["changed"] is True and row["cost_usd"] > 0, row
    # the compacted session gets them back at SessionStart (which waited for the worker)
    (start,) = [r for r in log if r.get("event") == "session-start" and r["source"] == "compact"]
    assert start["ts"] > row["ts"]
    notes = str(start["text"]).split("Session notes (kept across the compaction)", 1)
    assert len(notes) == 2 and "notes-heron-91" in notes[1]
    # (the file itself is not checked here: the detached session-end worker brings the notes
    # up to date offline once `claude -p` exits, and Current State is what it rewrites)
    # the child could only edit that one file: its only tool was Edit
    offered = [{n for n in r.tool_names() if n.startswith("mcp__")} for r in api.child_requests()]
    assert {"mcp__memdir__Edit"} in offered
