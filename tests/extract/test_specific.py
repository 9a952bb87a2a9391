"""The check that a memory's name and description hold no one session's specifics."""

from __future__ import annotations

import pytest

from memdir.extract.specific import session_specifics, specific_tokens
from memdir.llm.base import Message, ToolResultBlock, ToolUseBlock


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Here `pytest` failed in /tmp/pytest-of-root/x", "path"),
        ("Revert 3f9a2c1d before pushing", "hash"),
        ("Session 0b1f6a52-9c1e-4c55-9a53-1f2e3d4c5b6a broke", "uuid"),
        ("The bug in parser.py:142 again", "line"),
        ("It fails at line 87", "line"),
        ("git push said fatal: no upstream", "output"),
        ('Here `git commit -m "add the parser"` failed', "message"),
        ("Here `git push --set-upstream origin <this branch> 2>&1`…", "cut"),
        ('It printed "To push the current branch and set the remote"', "quoted"),
        ("Fixed in PR #4312", "number"),
    ],
)
def test_session_shapes_are_flagged(text: str, kind: str) -> None:
    assert any(found.startswith(f"{kind}: ") for found in specific_tokens(text))


@pytest.mark.parametrize(
    "text",
    [
        "Push a new branch with --set-upstream the first time",
        "When a branch has never been pushed, plain `git push` fails for lack of an upstream; its "
        "first push needs `git push --set-upstream origin <branch>`",
        "Run `.venv/bin/python -m pytest` here, not the system Python 3.12",
        "Never push to main",
    ],
)
def test_general_words_pass(text: str) -> None:
    assert specific_tokens(text) == []


def test_words_the_session_made_up_are_flagged() -> None:
    session = [
        Message("assistant", [ToolUseBlock("t1", "Bash", {"command": "git switch -c fix-login"})]),
        Message(
            "assistant",
            [ToolUseBlock("t2", "Bash", {"command": 'git commit -m "Tidy the auth flow"'})],
        ),
        Message(
            "assistant",
            [ToolUseBlock("t3", "Bash", {"command": "git push origin hotfix/42:hotfix/42"})],
        ),
        Message(
            "user",
            [ToolResultBlock("t3", "fatal: The current branch release-7 has no upstream branch.")],
        ),
    ]
    words = session_specifics(session)
    assert {"fix-login", "Tidy the auth flow", "hotfix/42", "release-7"} <= words
    assert specific_tokens("Push fix-login with -u", words) == ["session: fix-login"]
    assert specific_tokens("Never push to main or origin", words) == []  # shared names pass
