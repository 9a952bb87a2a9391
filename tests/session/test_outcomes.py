"""Test summaries of common runners reach Key results; git advice does not; error → fix pairs."""

from __future__ import annotations

from typing import Any

import pytest

from memdir.session import facts
from memdir.session.messages import ChatMessage
from memdir.session.notes import builtin_template, parse_notes
from memdir.session.offline import OfflineUpdater
from memdir.session.outcomes import command_key, error_fixes, summary_lines


def bash(tid: str, command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command}}


def res(tid: str, text: str, *, error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}


def run(command: str, output: str, *, tid: str = "t1", error: bool = False) -> list[ChatMessage]:
    return [
        ChatMessage.assistant([bash(tid, command)]),
        ChatMessage.user([res(tid, output, error=error)]),
    ]


RUNNERS = [
    ("mix test", "Finished in 0.4 seconds\n65 tests, 0 failures\n", "65 tests, 0 failures"),
    ("go test ./...", "ok  \texample.com/api\t0.012s\nFAIL\tex.com/db\t0.3s", "ok example.com/api"),
    ("cargo test", "test result: ok. 12 passed; 0 failed; 0 ignored", "test result: ok. 12 passed"),
    ("npx jest", "Test Suites: 2 passed, 2 total\nTests:  14 passed, 14 total", "Tests: 14 passed"),
    ("npx vitest run", " Test Files  3 passed (3)\n      Tests  21 passed (21)", "Tests 21 passed"),
    (
        "bundle exec rspec",
        "Finished in 1.2 seconds\n42 examples, 0 failures",
        "42 examples, 0 failures",
    ),
    ("pytest -q", "........\n8 passed in 0.31s", "8 passed in 0.31s"),
    ("pytest", "===== 1 failed, 4 passed in 1.98s =====", "1 failed, 4 passed in 1.98s"),
]


@pytest.mark.parametrize(("command", "output", "expected"), RUNNERS)
def test_runner_summaries_reach_key_results(command: str, output: str, expected: str) -> None:
    messages = [ChatMessage.user("run the tests"), *run(command, output)]
    notes = parse_notes(OfflineUpdater().render("", messages, builtin_template()))
    # before the fix only pytest's "N passed" lines were recognised
    assert " ".join(expected.split()) in " ".join(notes.body("Key results").split())


def test_git_advice_and_file_contents_are_not_results() -> None:
    status = (
        "On branch main\nChanges not staged for commit:\n"
        '  (use "git add <file>..." to update what will be committed)\n'
        '  (use "git restore <file>..." to discard changes in working directory)\n'
        "\tmodified:   app.py\n"
    )
    messages = [ChatMessage.user("commit it"), *run("git status", status)]
    read = {"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "/x/README.md"}}
    messages += [
        ChatMessage.assistant([read]),
        ChatMessage.user([res("r1", "Expected output:\n65 tests, 0 failures\n")]),
    ]
    notes = parse_notes(OfflineUpdater().render("", messages, builtin_template()))
    assert notes.body("Key results") == ""


def test_a_failing_run_then_an_edit_then_a_passing_run_is_one_error_fix_pair() -> None:
    fix = {"type": "tool_use", "id": "e1", "name": "Edit", "input": {"file_path": "/p/src/api.py"}}
    messages = [
        ChatMessage.user("make the tests pass"),
        *run("pytest tests/test_api.py -q", "E   KeyError: 'user_id'\n1 failed in 0.2s", tid="t1"),
        ChatMessage.assistant([fix]),
        ChatMessage.user([res("e1", "ok")]),
        *run("pytest tests/test_api.py -q", "3 passed in 0.2s", tid="t2"),
    ]
    lines = error_fixes(facts.split_turns(messages))
    assert len(lines) == 1
    assert "KeyError: 'user_id'" in lines[0] and "→ fixed: edited api.py" in lines[0]
    assert "3 passed in 0.2s" in lines[0]


def test_an_open_failure_is_closed_by_a_later_batch() -> None:
    first = [ChatMessage.user("build it"), *run("npm run build", "error TS2304: x", tid="t1")]
    updater = OfflineUpdater()
    notes = updater.render("", first, builtin_template())
    assert "failed: error TS2304: x" in notes and "→ fixed" not in notes
    later = [ChatMessage.user("again"), *run("npm run build", "built in 2s", tid="t2")]
    notes = updater.render(notes, later, builtin_template())
    errors = parse_notes(notes).body("Errors & Corrections")
    assert errors.count("TS2304") == 1 and "→ fixed: ran `npm run build`" in errors


def test_harness_complaints_about_the_agents_own_calls_are_not_errors() -> None:
    write = {"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": "/a.py"}}
    complaint = "<tool_use_error>File has not been read yet. Read it first.</tool_use_error>"
    messages = [
        ChatMessage.user("edit it"),
        ChatMessage.assistant([write]),
        ChatMessage.user([res("w1", complaint, error=True)]),
    ]
    assert error_fixes(facts.split_turns(messages)) == []


def test_summaries_only_come_from_command_output() -> None:
    uses = {"r": {"id": "r", "name": "Read", "input": {"file_path": "/t.txt"}}}
    assert summary_lines([res("r", "12 passed in 1.0s")], uses) == []


def test_command_key_ignores_flags_and_env() -> None:
    assert command_key("cd /x && FOO=1 pytest -q tests/a.py") == "pytest tests/a.py"


def test_the_fix_quotes_the_line_the_edit_introduced() -> None:
    edit = {
        "type": "tool_use",
        "id": "e1",
        "name": "Edit",
        "input": {
            "file_path": "/p/pyproject.toml",
            "old_string": 'name = "lib"\nrequires-python = ">=3.11"',
            "new_string": 'name = "lib"\nrequires-python = ">=3.10"',
        },
    }
    messages = [
        ChatMessage.user("install it"),
        *run("pip install -e .", "ERROR: Package 'lib' requires a different Python", tid="t1"),
        ChatMessage.assistant([edit]),
        ChatMessage.user([res("e1", "ok")]),
        *run("pip install -e . --quiet", "Successfully installed lib", tid="t2"),
    ]
    (line,) = error_fixes(facts.split_turns(messages))
    assert 'edited pyproject.toml (`requires-python = ">=3.10"`)' in line


def test_lookups_that_found_nothing_are_not_errors() -> None:
    messages = [
        ChatMessage.user("where is it"),
        *run(
            "ls -la /p/missing",
            "ls: cannot access '/p/missing': No such file",
            tid="t1",
            error=True,
        ),
        *run("git status", "fatal: not a git repository", tid="t2", error=True),
        *run('pkill -f "uvicorn app"', "Exit code 144", tid="t3", error=True),
    ]
    assert error_fixes(facts.split_turns(messages)) == []


def test_the_cause_the_assistant_stated_is_kept_with_the_error() -> None:
    messages = [
        ChatMessage.user("run it"),
        *run("uvicorn app:main", "ModuleNotFoundError: No module named 'app'", tid="t1"),
        ChatMessage.assistant("The issue is the system uvicorn, not the one in the venv."),
    ]
    (line,) = error_fixes(facts.split_turns(messages))
    assert line.endswith("(cause: The issue is the system uvicorn, not the one in the venv.)")
    notes = OfflineUpdater().render("", messages, builtin_template())
    assert parse_notes(notes).body("Errors & Corrections").count("system uvicorn") == 1


def test_a_coloured_runner_summary_and_error_are_read_without_their_colour_codes() -> None:
    coloured = (
        "\x1b[31m\x1b[1mError\x1b[22m: Test timed out in 5000ms.\x1b[39m\n"
        " \x1b[2mTest Files \x1b[22m \x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m\x1b[90m (1)\x1b[39m\n"
        "\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[31m4 failed\x1b[39m\x1b[22m | \x1b[1m\x1b[32m"
        "263 passed\x1b[39m\x1b[22m\x1b[90m (267)\x1b[39m\n"
    )
    uses = {"t1": bash("t1", "npx vitest run")}
    lines = summary_lines([res("t1", coloured, error=True)], uses)
    assert lines and "\x1b" not in "".join(lines)
    assert any("4 failed | 263 passed (267)" in ln for ln in lines)
    messages = [ChatMessage.user("run the tests"), *run("npx vitest run", coloured, error=True)]
    failed = facts.failed_results(facts.split_turns(messages)[0])
    assert failed and "\x1b" not in failed[0][1] and "failed" in failed[0][1]


def test_key_results_keep_a_runs_failures_and_verdict_and_only_the_newest_run() -> None:
    packages = "".join(f"ok  \texample.com/pkg{n}\t0.01s\n" for n in range(12))
    first = packages + "--- FAIL: TestSync (0.00s)\nFAIL\texample.com/sync\t0.2s\nFAIL\n"
    again = packages + "ok  \texample.com/sync\t0.2s\n"
    messages = [
        ChatMessage.user("fix the sync tests"),
        *run("go test ./...", first, tid="t1", error=True),
        ChatMessage.user("try again"),
        *run("go test ./...", again, tid="t2"),
    ]
    body = parse_notes(OfflineUpdater().render("", messages, builtin_template())).body(
        "Key results"
    )
    lines = [ln for ln in body.splitlines() if ln.startswith("`go test")]
    # one line per package before; now the newest run's verdict, its failures gone with it
    assert lines == ["`go test ./...`: ok example.com/sync 0.2s"]
    one_run = summary_lines([res("t1", first)], {"t1": bash("t1", "go test ./...")})
    assert len(one_run) == 3 and "FAIL: TestSync" in one_run[0] and one_run[-1].endswith("FAIL")


def test_every_commit_stays_a_result_of_its_own() -> None:
    heredoc = "git commit -m \"$(cat <<'EOF'\n"
    same = "refactor: tidy the list view and the pager after the review round"  # > 60
    messages = [
        ChatMessage.user("commit both changes separately"),
        *run(heredoc + f'{same}, part 1\nEOF\n)"', "[main 1a2b3c4] part 1", tid="c1"),
        *run(heredoc + f'{same}, part 2\nEOF\n)"', "[main 5d6e7f8] part 2", tid="c2"),
    ]
    body = parse_notes(OfflineUpdater().render("", messages, builtin_template())).body(
        "Key results"
    )
    assert "1a2b3c4" in body and "5d6e7f8" in body
