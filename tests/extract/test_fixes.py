"""A proven fix as a lesson in general words: one wording per kind of failure."""

from __future__ import annotations

import pytest

from memdir.extract.fixes import Proof, kind_of, lesson
from memdir.extract.specific import specific_tokens


def test_kinds_are_recognised_by_their_output() -> None:
    def kind(output: str) -> str | None:
        found = kind_of(output)
        return found.id if found else None

    assert kind("fatal: The current branch x has no upstream branch.") == "upstream"
    assert kind("- hook id: black\n- files were modified by this hook") == "formatter-hook"
    assert kind("bash: pytest: command not found") == "missing-tool"
    assert kind("ModuleNotFoundError: No module named 'yaml'") == "missing-module"
    assert kind("AssertionError: 1 != 2") is None  # a code error is not the environment's


def _proof(failed: str, output: str, working: str, *steps: str) -> Proof:
    return Proof(
        failed, output, output.splitlines()[0], working, steps[-1] if steps else None, steps
    )


LESSONS = [
    _proof(
        "git push", "fatal: The current branch a1 has no upstream branch.", "git push -u origin a1"
    ),
    _proof(
        'git commit -m "wip on a1"',
        "- hook id: ruff-format\n- files were modified by this hook",
        'git commit -m "wip on a1"',
        "ruff format src/a.py && git add -u",
    ),
    _proof(
        'git commit -m "wip"',
        "- files were modified by this hook",
        'git commit -m "wip"',
        "git add -u",
    ),
    _proof("pytest -k parser", "bash: pytest: command not found", "uv run pytest -k parser"),
    _proof(
        "python run.py", "ModuleNotFoundError: No module named 'yaml'", ".venv/bin/python run.py"
    ),
    _proof("npm run e2e", "sh: 1: playwright: not found in PATH", "npm run e2e", "npm ci"),
    _proof(
        "swag init -g cmd/main.go -o docs",
        "bash: swag: command not found",
        "~/go/bin/swag init -g cmd/main.go -o docs",
    ),
]


@pytest.mark.parametrize("proof", LESSONS, ids=lambda p: p.failed)
def test_every_lesson_is_stated_in_general_words(proof: Proof) -> None:
    found = lesson(proof)
    assert found is not None and found.name and found.how and found.evidence
    session = ["a1", "wip on a1", "wip", "parser"]
    assert specific_tokens(f"{found.name}\n{found.statement}", session) == []
    assert len(found.statement) <= 150  # a whole description, never one cut short
    assert proof.failed.split()[0] in found.evidence  # the session's own commands stay in Why


def test_each_lesson_has_its_own_how_to_apply() -> None:
    hows = [c.how for p in LESSONS if (c := lesson(p)) is not None]
    assert len(hows) == len(LESSONS) and len(set(hows)) == len(hows)


def test_a_fix_that_skips_the_hook_or_forces_teaches_nothing() -> None:
    hook = "- hook id: mypy\nerror: Incompatible types"
    assert lesson(_proof('git commit -m "x"', hook, 'git commit --no-verify -m "x"')) is None
    assert (
        lesson(_proof("git push", "fatal: no upstream branch --set-upstream", "git push --force"))
        is None
    )


def test_looking_for_a_tool_in_between_is_not_the_fix() -> None:
    """`go build` missing, `find / -name go`, then `go build` (run by its full path, or with a
    PATH the commands do not show): the search changed nothing, so it teaches nothing."""
    missing = "bash: go: command not found"
    assert (
        lesson(_proof("go build ./...", missing, "go build ./...", "find / -name go -type f"))
        is None
    )
    assert lesson(_proof("go build ./...", missing, "go build ./...", "which go")) is None
    fixed = lesson(_proof("go build ./...", missing, "go build ./...", "brew install go"))
    assert fixed is not None and "brew install" in fixed.statement


def test_a_tool_off_the_path_is_named_by_its_path_not_by_one_runs_flags() -> None:
    missing = "bash: swag: command not found"
    found = lesson(_proof("swag init -g a.go -o docs", missing, "~/go/bin/swag init -g a.go"))
    assert found is not None and found.name == "Run swag by its full path here"
    assert found.statement == "`swag` is not on the PATH here: run it by its full path"
    assert found.how is not None and "~/go/bin/swag …" in found.how


def test_a_chain_of_programs_is_not_blamed_on_its_last_step_unless_the_output_names_it() -> None:
    # seen in a held-out session: python failed on a file Word held open, the chain was named
    # after cmd.exe, and "run python -c first whenever cmd.exe is needed" was saved
    locked = _proof(
        'cd "C:/Users/me/book" && python make_doc.py && cmd.exe /c start "" "book.docx"',
        "PermissionError: [Errno 13] Permission denied: 'book.docx'",
        'cmd.exe /c start "" "book-v2.docx"',
        'python -c "print(1)"',
    )
    assert lesson(locked) is None
    named = _proof(
        "make build && cmd.exe /c start out.docx",
        "'cmd.exe' is not recognized as an internal or external command",
        "powershell.exe -c start out.docx",
    )
    assert lesson(named) is not None  # the output names the last step: it is cmd.exe's failure
    one_program = _proof(
        "git switch -c docs-fix && git push",
        "fatal: The current branch docs-fix has no upstream branch.",
        "git push --set-upstream origin docs-fix",
    )
    assert lesson(one_program) is not None  # every step is git's
