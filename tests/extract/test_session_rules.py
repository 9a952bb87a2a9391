"""Session-level rules: repeated check-ups, frustration with a way forward, proven fixes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.rules import classify
from memdir.extract.session_rules import session_candidates
from memdir.extract.specific import session_specifics, specific_tokens
from memdir.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.model import MemoryType
from memdir.store import MemoryStore

TODAY = dt.date(2026, 12, 1)


def user(text: str) -> Message:
    return Message("user", [TextBlock(text)])


def shell(tid: str, command: str, output: str, *, error: bool = False) -> list[Message]:
    return [
        Message("assistant", [ToolUseBlock(tid, "Bash", {"command": command})]),
        Message("user", [ToolResultBlock(tid, output, error)]),
    ]


def test_a_check_up_asked_twice_is_an_expectation() -> None:
    messages = [
        user("commit the fix"),
        user("did you push?"),
        user("ok next task"),
        user("did you push?"),
    ]
    found = session_candidates(messages)
    assert [c.rule for c in found] == ["check-up"]
    assert found[0].type is MemoryType.FEEDBACK and "push" in found[0].statement
    assert session_candidates([user("did you push?")]) == []  # once is just a question


def test_frustration_with_a_suggestion_is_feedback_in_the_users_words() -> None:
    text = (
        "its feeling like we are just grasping right now. why dont you read the plugin docs first"
    )
    found = session_candidates([user(text)])
    assert len(found) == 1 and "read the plugin docs first" in found[0].statement
    assert session_candidates([user("why dont you read the plugin docs first")]) == []


def test_a_fix_the_session_proved_is_a_lesson_in_general_words() -> None:
    messages = [
        *shell(
            "t1",
            "git push 2>&1",
            "fatal: The current branch feat/parser has no upstream branch.",
            error=True,
        ),
        *shell("t2", "git push --set-upstream origin feat/parser", "branch 'feat/parser' set up"),
    ]
    (found,) = session_candidates(messages)
    assert found.type is MemoryType.PROJECT and found.rule == "proven-fix"
    assert found.name == "Push a new branch with --set-upstream the first time"
    assert specific_tokens(f"{found.name} {found.statement}", session_specifics(messages)) == []
    assert found.evidence is not None and "feat/parser" in found.evidence  # the body keeps it
    assert found.how is not None and "first push" in found.how


def test_a_hook_that_blocks_the_commit_until_the_formatter_ran() -> None:
    messages = [
        *shell(
            "t1",
            'git commit -m "add the parser"',
            "black....Failed\n- hook id: black\n- files were modified by this hook",
            error=True,
        ),
        *shell("t2", "black src/parser.py && git add -u", ""),
        *shell("t3", 'git commit -m "add the parser"', "[feat 1a2b3c4] add the parser"),
    ]
    (found,) = session_candidates(messages)
    assert found.name == "Run black before committing: the pre-commit hook rejects unformatted code"
    assert "hook (black)" in found.statement and "add the parser" not in found.statement
    assert found.how is not None and found.how.startswith("Before every `git commit`, run `black`")
    assert specific_tokens(f"{found.name} {found.statement}", session_specifics(messages)) == []


def test_a_fix_that_bypasses_the_hook_is_never_a_lesson() -> None:
    messages = [
        *shell("t1", 'git commit -m "x"', "- hook id: mypy\nFailed", error=True),
        *shell("t2", 'git commit --no-verify -m "x"', "[main 1a2b3c4] x"),
    ]
    assert session_candidates(messages) == []


def test_scripts_credentials_and_code_errors_are_never_saved() -> None:
    scripted = [
        *shell(
            "t1", "python -c 'import x'", "ModuleNotFoundError: No module named 'x'", error=True
        ),
        *shell("t2", "python -c 'import y'", "ok"),
    ]
    secret = [
        *shell("t1", "psql -U app", "psql: command not found", error=True),
        *shell("t2", "PGPASSWORD=hunter2 psql -U app", "ok"),
    ]
    code = [
        *shell("t1", "pytest", "ImportError: cannot import name 'x'", error=True),
        *shell("t2", "pytest", "3 passed"),
    ]
    assert session_candidates(scripted) == []
    assert session_candidates(secret) == []
    assert session_candidates(code) == []


def test_make_sure_is_a_rule_only_about_something_that_recurs() -> None:
    saved = classify("make sure that handoff updates siyuan if needed", today=TODAY)
    assert saved is not None and saved.statement == "Make sure handoff updates siyuan if needed"
    assert classify("make sure it compiles", today=TODAY) is None
    assert classify("make sure the tests pass before every commit", today=TODAY) is not None


def test_the_extractor_saves_session_rules_once(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory")
    messages = [user("did you push?"), user("and did you push it?")]
    extractor = RuleExtractor(store)
    first = extractor.apply_messages(messages)
    again = extractor.apply_messages(messages)
    assert len(first.written) == 1 and again.written == []
    body = first.written[0].read_text()
    assert "**Why:**" in body and "**How to apply:**" in body


def test_a_requirement_about_the_product_is_a_project_fact() -> None:
    found = classify("conversations must be correctly focused, structured, guided", today=TODAY)
    assert found is not None and found.type is MemoryType.PROJECT and found.rule == "requirement"
    assert classify("it must work by friday", today=TODAY) is None  # a pronoun says nothing later
    assert classify("you must run the tests now", today=TODAY) is None


def test_lower_case_messages_split_into_sentences() -> None:
    from memdir.extract.rules import candidates

    text = "ok that works. always run the linter before pushing. see e.g. the ci file"
    assert [c.statement for c in candidates(text, today=TODAY)] == [
        "Always run the linter before pushing"
    ]


async def test_the_hook_path_sees_evidence_across_turns_but_saves_it_once(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory")
    extractor = RuleExtractor(store)
    turn1 = [user("did you push?"), Message("assistant", [TextBlock("Not yet; pushing now.")])]
    turn2 = [user("ok. did you push the fix?"), Message("assistant", [TextBlock("Yes.")])]
    first = await extractor.extract(turn1, new_messages=2)
    second = await extractor.extract([*turn1, *turn2], new_messages=2)
    assert first.written == [] and len(second.written) == 1  # the second ask is in turn 2
    third = await extractor.extract([*turn1, *turn2, user("thanks")], new_messages=1)
    assert third.written == []  # old evidence is not saved again
