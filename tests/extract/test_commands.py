"""Commands in general words: shapes without one session's arguments, and what they run."""

from __future__ import annotations

import pytest

from memdir.extract.commands import prefix, program, shape


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git push --set-upstream origin feat/x 2>&1 | tail -3", "git push --set-upstream"),
        ("cd /tmp/work && uv run pytest -x tests/test_a.py", "uv run pytest -x"),
        ("/home/me/proj/.venv/bin/python -m pytest -q", ".venv/bin/python -m pytest -q"),
        ('git commit -m "fix: the parser"', "git commit -m"),
        ("FOO=1 sudo apt-get install -y jq", "sudo apt-get install -y"),
        ("npm run build -- --watch", "npm run build --watch"),
    ],
)
def test_a_shape_keeps_runner_program_subcommand_and_flags_only(
    command: str, expected: str
) -> None:
    assert shape(command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("uv run pytest -x tests", "pytest"),
        ("python tool.py --fast", "tool.py"),
        ("uv run python -m mypy src", "mypy"),
        ("git -C . push origin x", "git push"),
        ("npm run test", "npm run test"),
    ],
)
def test_the_program_ignores_runners_and_interpreters(command: str, expected: str) -> None:
    assert program(command) == expected


def test_the_runner_a_working_command_adds_in_front() -> None:
    assert prefix("pytest -x", "uv run pytest -x tests") == "uv run"
    assert prefix("git push", "git push -u origin x") == ""
