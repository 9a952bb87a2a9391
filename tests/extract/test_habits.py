"""Workflow habits asked for twice in a session (issue #30): the lesson, in general words."""

from __future__ import annotations

from memdir.extract.habits import repeated_habits
from memdir.extract.session_rules import session_candidates
from memdir.extract.specific import specific_tokens
from memdir.llm.base import Message, TextBlock


def texts(*said: str) -> list[tuple[int, str]]:
    return list(enumerate(said))


def test_a_draft_pr_asked_for_twice_is_how_this_user_opens_prs() -> None:
    [(at, lesson)] = repeated_habits(
        texts("create a draft PR please", "looks good", "commit, push and open a draft PR")
    )
    assert at == 2 and lesson.name == "Open pull requests as drafts"
    assert lesson.how is not None and "--draft" in lesson.how
    assert specific_tokens(f"{lesson.name}\n{lesson.statement}") == []


def test_once_a_report_or_a_refusal_is_not_a_habit() -> None:
    assert repeated_habits(texts("create a draft PR please")) == []
    assert repeated_habits(texts("he's got a draft pr up - #37", "create a draft PR please")) == []
    assert repeated_habits(texts("don't open a draft PR", "open a draft PR")) == []


def test_the_hook_path_closes_it_at_the_second_request() -> None:
    said = ["write the test first, then fix it", "ok", "again: write a failing test first"]
    messages = [Message("user", [TextBlock(t)]) for t in said]
    assert [c.name for c in session_candidates(messages)] == ["Write the failing test first"]
    assert session_candidates(messages, since=3) == []  # closed at message 2, not offered again
    assert session_candidates(messages[:2]) == []


def test_asking_twice_to_see_the_ideas_first_is_a_way_of_working() -> None:
    [(at, lesson)] = repeated_habits(
        texts(
            "whats your ideas..dont implement",
            "ok",
            "write out the flow step by step so i can critique",
        )
    )
    assert at == 2 and lesson.name == "Show ideas for review before building them"
    assert repeated_habits(texts("dont implement the cache, we don't need it")) == []
