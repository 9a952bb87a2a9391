"""Decisions and causes from the assistant's narration; one-word answers resolved."""

from __future__ import annotations

from memdir.session.messages import ChatMessage
from memdir.session.narration import resolve_answer, statements
from memdir.session.notes import builtin_template, parse_notes
from memdir.session.offline import OfflineUpdater

QUESTION = """Where should the MVP run?

1. **Claude Code only** — keep the current command.
2. **Backend + Claude Code** — a FastAPI service for extraction.

Which one?"""


def test_a_number_or_letter_answer_becomes_the_option_it_picked() -> None:
    assert (
        resolve_answer("2", QUESTION) == "Backend + Claude Code — a FastAPI service for extraction."
    )
    assert (
        resolve_answer("B", "A) Intake once\nB) Continuous refinement") == "Continuous refinement"
    )
    assert resolve_answer("yes", "Here is the plan. **Does this look right?**") == (
        "to: Does this look right?"
    )
    assert resolve_answer("please add retries to the client", QUESTION) is None
    assert resolve_answer("3", QUESTION) is None  # no such option: nothing is invented


def test_answers_read_in_the_notes_with_what_they_answered() -> None:
    messages = [
        ChatMessage.user("plan the MVP"),
        ChatMessage.assistant(QUESTION),
        ChatMessage.user("2"),
    ]
    spec = parse_notes(OfflineUpdater().render("", messages, builtin_template())).body(
        "Task specification"
    )
    assert "- 2 → Backend + Claude Code" in spec


def test_decisions_and_causes_across_all_replies() -> None:
    messages = [
        ChatMessage.assistant("Light schema it is. Let me read the file."),
        ChatMessage.assistant(
            "The root cause was the symlink: the container only sees its volumes."
        ),
        ChatMessage.assistant("I'll switch to `.then()` chains instead of async handlers."),
        ChatMessage.assistant("Sources of Power — Gary Klein (Naturalistic Decision Making)"),
    ]
    decisions, causes = statements(messages)
    assert decisions == [
        "Light schema it is.",
        "I'll switch to `.then()` chains instead of async handlers.",
    ]
    assert causes == ["The root cause was the symlink: the container only sees its volumes."]


def test_a_short_answer_picks_an_option_laid_out_as_a_table() -> None:
    asked = (
        "What scope should the first version have?\n\n| Option | Description |\n|---|---|\n"
        "| **A) Read-only viewer** | Browse and search only |\n| **B) Full editor** | Edit too |"
    )
    assert resolve_answer("A", asked) == "Read-only viewer — Browse and search only"
