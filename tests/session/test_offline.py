"""The offline updater on a real-shaped coding-session transcript, and on bad notes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memdir.session.memory import SessionMemory
from memdir.session.messages import ChatMessage
from memdir.session.notes import builtin_template, parse_notes, structure_problems
from memdir.session.offline import OfflineUpdater, update_notes_from_transcript
from tests.session.support import coding_session


def test_offline_notes_from_a_coding_session(tmp_path: Path) -> None:
    t = coding_session(tmp_path / "t.jsonl")
    notes_path = tmp_path / "sm" / "summary.md"
    outcome = update_notes_from_transcript(t.path, notes_path)
    assert outcome.ok and outcome.changed
    text = notes_path.read_text()
    assert structure_problems(text, builtin_template()) == []
    notes = parse_notes(text)
    assert notes.body("Session Title").startswith("Add a discount field")
    spec = notes.body("Task specification")
    assert "use Decimal for money instead of float" in spec and "update the README" in spec
    assert "harness note" not in text and "sub-agent prompt" not in text
    files = notes.body("Files and Functions")
    assert (
        "`/work/shop/src/shop/checkout.py` — read 1, edited 1 — fn: total, apply_discount" in files
    )
    assert "`/work/shop/tests/test_checkout.py` — written 1" in files
    assert "`uv run pytest tests/test_checkout.py -q` ×2" in notes.body("Workflow")
    errors = notes.body("Errors & Corrections")
    assert "TypeError: total() got an unexpected keyword argument 'discount'" in errors
    assert "User correction: No, use Decimal for money instead of float." in errors
    assert "- Always run ruff before committing" in notes.body("Learnings")
    assert "3 passed in 0.12s" in notes.body("Key results")
    state = notes.body("Current State")
    assert "update the README" in state and "Which section of the README" in state
    assert len(notes.body("Worklog").splitlines()) == 3


def test_running_again_merges_only_new_messages(tmp_path: Path) -> None:
    t = coding_session(tmp_path / "t.jsonl")
    notes_path = tmp_path / "sm" / "summary.md"
    update_notes_from_transcript(t.path, notes_path)
    again = update_notes_from_transcript(t.path, notes_path)
    assert again.ok and not again.changed  # nothing new: counts are not doubled
    t.user("Also read the changelog please.")
    call = {
        "type": "tool_use",
        "id": "toolu_x",
        "name": "Read",
        "input": {"file_path": "/work/shop/src/shop/checkout.py"},
    }
    t.assistant([call], model="m")
    t.tool_result("toolu_x", "...")
    update_notes_from_transcript(t.path, notes_path)
    files = parse_notes(notes_path.read_text()).body("Files and Functions")
    assert "`/work/shop/src/shop/checkout.py` — read 2, edited 1" in files


def test_hand_mangled_notes_are_rebuilt_without_losing_text(tmp_path: Path) -> None:
    notes_path = tmp_path / "summary.md"
    notes_path.write_text("my own scribbles\n# Random header\nstuff I wrote\n")
    memory = SessionMemory(notes_path, OfflineUpdater())
    outcome = asyncio.run(memory.update_now([ChatMessage.user("Fix the login bug in auth.py")]))
    assert outcome.ok
    text = notes_path.read_text()
    assert structure_problems(text, builtin_template()) == []
    assert "my own scribbles" in text and "stuff I wrote" in text


def test_caps_hold_on_a_huge_session(tmp_path: Path) -> None:
    msgs: list[ChatMessage] = []
    for i in range(400):
        msgs.append(ChatMessage.user(f"request number {i}: " + "please do the thing " * 30))
        use = {
            "type": "tool_use",
            "id": f"t{i}",
            "name": "Bash",
            "input": {"command": f"make target{i} " + "x" * 100},
        }
        msgs.append(ChatMessage.assistant([use]))
        msgs.append(
            ChatMessage.user([{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}])
        )
        msgs.append(ChatMessage.assistant(f"done {i}"))
    updater = OfflineUpdater()
    text = updater.render(builtin_template(), msgs, builtin_template())
    notes = parse_notes(text)
    assert structure_problems(text, builtin_template()) == []
    assert all(s.tokens <= 2000 for s in notes.sections)
    assert notes.total_tokens <= 12000
    assert "request number 399" in notes.body("Task specification")  # newest kept whole


def test_empty_conversation_changes_nothing(tmp_path: Path) -> None:
    text = OfflineUpdater().render(builtin_template(), [], builtin_template())
    assert text.strip() == builtin_template().strip()
