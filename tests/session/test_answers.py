"""The user's words inside tool results: question answers and refusal comments are requests."""

from __future__ import annotations

from typing import Any

from memdir.session import answers, facts
from memdir.session.messages import ChatMessage
from memdir.session.notes import builtin_template, parse_notes
from memdir.session.offline import OfflineUpdater


def use(tid: str, name: str, **payload: Any) -> ChatMessage:
    return ChatMessage.assistant([{"type": "tool_use", "id": tid, "name": name, "input": payload}])


def result(tid: str, text: str, *, error: bool = False) -> ChatMessage:
    block = {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}
    return ChatMessage.user([block])


REFUSAL = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). To tell you how to proceed, "
    "the user said:\nwait until the schema is reviewed"
)
ANSWER = (
    'User has answered your questions: "Which storage should the cache use?"="sqlite" '
    "user notes: keep it in one file. You can now continue with the user's answers in mind."
)


def test_a_refusal_comment_and_an_answer_are_the_users_words() -> None:
    turns = facts.split_turns(
        [
            ChatMessage.user("plan the cache layer"),
            use("a", "ExitPlanMode", plan="…"),
            result("a", REFUSAL, error=True),
            use("b", "AskUserQuestion", questions=[]),
            result("b", ANSWER),
        ]
    )
    said = answers.said(turns)
    assert said == [
        "(refused ExitPlanMode) wait until the schema is reviewed",
        "(answered) Which storage should the cache use? → sqlite; notes: keep it in one file",
    ]


def test_ordinary_tool_output_is_not_the_users_words() -> None:
    turns = facts.split_turns(
        [ChatMessage.user("run it"), use("a", "Bash", command="make"), result("a", "ok")]
    )
    assert answers.said(turns) == []


def test_the_notes_list_answers_with_the_requests_and_in_the_current_state() -> None:
    messages = [
        ChatMessage.user("plan the cache layer for the importer"),
        use("a", "ExitPlanMode", plan="…"),
        result("a", REFUSAL, error=True),
        ChatMessage.assistant("Understood, standing by."),
    ]
    notes = parse_notes(OfflineUpdater().render("", messages, builtin_template()))
    assert "- (refused ExitPlanMode) wait until the schema is reviewed" in notes.body(
        "Task specification"
    )
    state = notes.body("Current State")
    assert "Then the user: (refused ExitPlanMode) wait until the schema is reviewed" in state


def test_a_long_question_is_shortened_but_every_answer_is_kept() -> None:
    long_q = "How should turns work when " + "several players share one growing sequence " * 4 + "?"
    text = (
        f'User has answered your questions: "{long_q}"="Same sequence, take turns", '
        '"How do friends join?"="Share link (Recommended)". You can now continue.'
    )
    turns = facts.split_turns(
        [ChatMessage.user("make it multiplayer"), use("a", "AskUserQuestion"), result("a", text)]
    )
    (line,) = answers.said(turns)
    assert "Same sequence, take turns" in line and "Share link (Recommended)" in line
    assert len(line) < len(text)
