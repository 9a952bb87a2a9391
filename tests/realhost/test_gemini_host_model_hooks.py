"""Zero-config inside Gemini CLI, as a new user meets it: ``gemini`` on PATH, no MEMDIR_MODEL.
``memdir install gemini --project``, then a session turn in which the user corrects the agent:
the AfterAgent hook's extraction worker runs the user's own ``gemini -p`` (the fake API replays
what a capable model would do), a feedback memory is written through memdir's relayed tools
inside the memory dir, its cost lands in the ledger, and no memdir hook runs inside the child.
With the CLI failing, the offline rules still save the memory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memdir.extract.prompt import EXTRACTION_SYSTEM
from tests.realhost.fake_gemini import FunctionCall, LoggedRequest, Reply
from tests.realhost.gemini_host import GeminiHost
from tests.realhost.host import wait_for

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


def with_gemini_on_path(gemini: GeminiHost) -> None:
    """What a Gemini CLI user has: ``gemini`` on PATH (here: the pinned CLI)."""
    link = gemini.bin / "gemini"
    if not link.exists():
        os.symlink(gemini.cli, link)


def hook_log(gemini: GeminiHost) -> list[dict[str, Any]]:
    out = gemini.memdir("--json", "hook", "log", "--full", "--limit", "1000").stdout
    return list(json.loads(out))


def extract_rows(gemini: GeminiHost) -> list[dict[str, Any]]:
    return [r for r in hook_log(gemini) if r.get("event") == "extract"]


def system_prompt(request: LoggedRequest) -> str:
    parts = request.body.get("systemInstruction", {}).get("parts") or []
    return "".join(str(p.get("text", "")) for p in parts)


def child_requests(gemini: GeminiHost) -> list[LoggedRequest]:
    """The main requests memdir's ``gemini -p`` child made (memdir's prompt as its system)."""
    return [r for r in gemini.api.main_requests() if system_prompt(r) == EXTRACTION_SYSTEM]


def test_a_correction_in_gemini_becomes_a_memory_written_by_gemini_p(gemini: GeminiHost) -> None:
    with_gemini_on_path(gemini)
    installed = gemini.memdir("--text", "install", "gemini", "--project").stdout
    assert "gemini:haiku (gemini-2.5-flash" in installed and "$1.00 a day" in installed
    assert "not on PATH" not in installed
    memory_dir = gemini.memory_dir()
    target = memory_dir / "feedback_real_database.md"
    write = FunctionCall("mcp_memdir_Write", {"file_path": str(target), "content": FEEDBACK})
    gemini.api.script(
        "Understood — I will use the real database in these tests.",  # the user's session
        Reply(function_calls=(write,)),  # then memdir's child, in the extraction worker
        "Saved the feedback memory.",
    )
    gemini.prompt(CORRECTION)
    wait_for(lambda: bool(extract_rows(gemini)), "the extraction worker", limit=120)

    (row,) = extract_rows(gemini)
    assert row["ok"] is True and row.get("fallback") is None, (row, hook_log(gemini))
    assert row["written"] == [str(target)]
    assert isinstance(row["cost_usd"], float) and row["cost_usd"] > 0
    assert target.read_text() == FEEDBACK
    assert "feedback_real_database.md" in (memory_dir / "MEMORY.md").read_text()
    assert sorted(p.name for p in memory_dir.glob("*.md")) == [
        "MEMORY.md",
        "feedback_real_database.md",
    ]

    child = child_requests(gemini)
    assert len(child) == 2, [system_prompt(r)[:60] for r in gemini.api.main_requests()]
    for request in child:
        names = request.function_names()
        assert names and all(n.startswith("mcp_memdir_") for n in names), names
        assert "mcp_memdir_memory_save" not in names  # the relay, not the user's memdir server
    assert CORRECTION in child[0].text()
    # no hook ran in the child: the user's request carries memdir's hook context (the session
    # start block), the child's carries none
    (user,) = [r for r in gemini.api.main_requests() if r not in child]
    assert "<hook_context>" in user.text()
    assert all("<hook_context>" not in r.text() for r in child)

    # no recursion: every hook row belongs to the user's one session
    rows = hook_log(gemini)
    assert len({r.get("session") for r in rows if r.get("session")}) == 1, rows
    # one session start: Gemini's SessionStart defers it (a row saying so), the first prompt
    # gives it (a second row); a child running memdir's hooks would add more of each
    starts = [r for r in rows if r["event"] == "session-start"]
    assert [bool(r.get("deferred")) for r in starts] == [True, False], starts

    # the cost is where the user looks
    status = json.loads(gemini.memdir("--json", "status").stdout)
    spend = status["host_model"]["today"]
    assert spend["calls"] == 1 and spend["cost_usd"] == row["cost_usd"]


@pytest.mark.parametrize(
    ("case", "said"), [("failing", "out of cheese"), ("absent", "not installed")]
)
def test_with_gemini_p_failing_or_absent_the_offline_rules_still_write(
    gemini: GeminiHost, case: str, said: str
) -> None:
    if case == "failing":  # on PATH for the worker; the user's session runs the real one
        broken = gemini.bin / "gemini"
        broken.write_text("#!/bin/sh\necho 'gemini: out of cheese' >&2; exit 1\n")
        broken.chmod(0o755)
    gemini.memdir("install", "gemini", "--project")
    gemini.prompt("remember that I prefer tabs over spaces")
    wait_for(lambda: bool(extract_rows(gemini)), "the extraction worker", limit=120)
    (row,) = extract_rows(gemini)
    assert row["ok"] is True
    assert isinstance(row["fallback"], str) and said in row["fallback"], row
    written = [Path(p) for p in row["written"]]
    assert written and all(p.is_file() and p.parent == gemini.memory_dir() for p in written)
    assert "tabs" in written[0].read_text()
    failures = [r for r in _ledger_rows(gemini) if r.get("host") == "gemini"]
    if case == "failing":  # a child ran: its failure is booked (and counts for the budget)
        assert len(failures) == 1 and said in str(failures[0]["error"])
    else:
        assert failures == []


def _ledger_rows(gemini: GeminiHost) -> list[dict[str, Any]]:
    from memdir.llm.ledger import CostLedger, ledger_path

    return CostLedger(ledger_path(gemini.home / ".memdir"), budget_usd=1.0).rows()
