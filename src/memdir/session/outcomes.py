"""What the tool output says happened: test summaries of common runners, errors and their fixes.

A handover note needs "the suite went from 3 failures to 65 tests, 0 failures after fixing X",
not every line that contains the word "error". Two pure functions over a run of turns:

* :func:`summary_lines` — the summary lines of pytest, unittest, ExUnit, ``go test``, cargo,
  jest/vitest, RSpec, mocha/node, PHPUnit and Maven/Gradle, plus commit lines — and nothing from
  git's ``(use "git add <file>…")`` advice, progress bars or code.
* :func:`error_fixes` — every failed tool call (a command, a test run, a file tool) with its first
  real error line, paired with the change that fixed it when the same command later succeeded:
  the files edited in between and the passing run's summary. Unpaired failures stay as they are.

Invariant: a line is only ever taken from a tool *result* the session produced; file contents
read by the agent are never mistaken for errors or results.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memdir.session import facts
from memdir.session.messages import result_text
from memdir.session.microcompact import CLEARED

_SUMMARY = re.compile(
    r"=+ .*\b\d+ (?:passed|failed|errors?|skipped)\b.* in [\d.]+s|"  # pytest
    r"^\s*\d+ (?:passed|failed)(?:, \d+ \w+)* in [\d.]+s|"  # pytest -q
    r"^Ran \d+ tests? in [\d.]+s|^(?:OK|FAILED)(?: \(.*\))?$|"  # unittest
    r"\b\d+ (?:tests?|doctests?|properties)(?:, \d+ doctests?)?, \d+ failures?\b|"  # ExUnit
    r"^(?:ok|FAIL)\s+\S+\s+[\d.]+s|^--- FAIL: |^(?:PASS|FAIL)$|"  # go test
    r"^test result: (?:ok|FAILED)\. \d+ passed|"  # cargo
    r"^Tests?:\s+(?:\d+ \w+, )*\d+ total|^Test (?:Files|Suites):\s+.*\d|"  # jest
    r"^\s*Tests\s+\d+ (?:passed|failed)|"  # vitest
    r"\b\d+ examples?, \d+ failures?\b|"  # rspec
    r"^\s*\d+ (?:passing|failing|pending)\b|^# (?:pass|fail)\s+\d+|"  # mocha / node --test
    r"^(?:OK \(\d+ tests?|Tests: \d+, Assertions: \d+)|"  # phpunit
    r"Tests run: \d+, Failures: \d+|BUILD (?:SUCCESS|FAILED)|"  # maven / gradle
    r"^\[[\w/.-]+ [0-9a-f]{7,}\] ",  # git commit
    re.IGNORECASE,
)
_BOILERPLATE = re.compile(
    r'^\s*\(use "git|^\s*(?:On branch|Your branch|Changes (?:not staged|to be committed)|'
    r"Untracked files|nothing (?:added )?to commit|no changes added)",
    re.IGNORECASE,
)
_PROGRESS = re.compile(r"[█▏▎▍▌▋▊▉#]{6,}|^\s*\.{6,}\s*$")
_FAILING = re.compile(
    r"\b[1-9]\d* (?:failed|failures?|failing|errors?)\b|^FAIL\b|--- FAIL|test result: FAILED|"
    r"BUILD FAILED|^\s*(?:error|ERROR)\b[\s:\[]|\berror TS\d+|npm ERR!",
    re.IGNORECASE | re.MULTILINE,
)
ERROR_CHARS = 300
_REDACTED = re.compile(r"\[REDACTED[^\]]*\]")
# A harness complaint about the agent's own tool call, corrected at once: not a project error.
_HARNESS_ERROR = re.compile(
    r"File has not been read yet|File has been modified since read|String to replace not found|"
    r"Found \d+ matches of the string to replace|InputValidationError|"
    r"user doesn't want to proceed|was rejected by the user|interrupted by user",
    re.IGNORECASE,
)


def summary_lines(results: Sequence[Mapping[str, Any]], uses: Mapping[str, Any]) -> list[str]:
    """Summary lines of test runs and commits in these tool results, in order."""
    found: list[str] = []
    for block in results:
        use = uses.get(str(block.get("tool_use_id")))
        if use is None or str(use.get("name", "")) not in facts.SHELL_TOOLS:
            continue  # only command output: a file that contains "3 passed" is not a result
        for line in result_text(block.get("content")).splitlines():
            clean = line.strip(" =-\t")
            if not clean or _BOILERPLATE.search(line) or _PROGRESS.search(line):
                continue
            if _SUMMARY.search(line.strip()) and not _REDACTED.search(line):
                command = facts.one_line(facts.tool_command(use) or "", 60).replace("`", "'")
                found.append(f"`{command}`: {facts.one_line(clean, 200)}")
    return found


@dataclass
class _Failure:
    what: str
    error: str
    key: str
    edits: list[str] = field(default_factory=list)


def command_key(command: str) -> str:
    """What makes two runs "the same command": the program and its first real argument, in the
    last step of a ``&&``/``;`` chain that is not a ``cd`` or an ``export``."""
    steps = [s.strip() for s in re.split(r"&&|;", command) if s.strip()]
    steps = [s for s in steps if not re.match(r"^(?:cd|export|source|\.)\s", s)] or steps
    main = re.split(r"\|\||\|", steps[-1])[0] if steps else ""  # not the fallback or the pipe
    words = [w for w in main.split() if not w.startswith("-") and not w.startswith("2>")]
    words = [w for w in words if not re.match(r"^(?:\S+=\S*|timeout|\d+|sudo|uv|run)$", w)]
    return " ".join(words[:2])


OPEN_LINE = re.compile(r"^- `(?P<what>.+?)` failed: (?P<error>.*)$")


def error_fixes(turns: Sequence[facts.Turn], prior: Sequence[str] = ()) -> list[str]:
    """Note lines: ``- <what> failed: <error> → fixed: edited a.py, b.py; <passing summary>``,
    or ``- <what> failed: <error>`` when no later success of the same command was seen.

    ``prior`` are still-open failure lines from earlier notes: a success in ``turns`` closes them
    too (the notes are merged a few turns at a time), and the open ones come back unchanged."""
    open_: list[_Failure] = []
    for line in prior:
        if (m := OPEN_LINE.match(line)) and " → fixed:" not in line:
            what = m.group("what")
            open_.append(_Failure(what, m.group("error"), command_key(what)))
    lines: list[str] = []
    for turn in turns:
        uses = {str(b.get("id")): b for b in turn.tool_uses}
        by_id = {str(b.get("tool_use_id")): b for b in turn.results}
        for use_id, use in uses.items():
            name = str(use.get("name", ""))
            if facts.file_action(name, use) in ("edited", "written"):
                path = facts.tool_path(use)
                short = path.rsplit("/", 1)[-1] if path else name
                change = _changed_line(use)
                edit = f"{short} (`{change}`)" if change else short
                for failure in open_:
                    if not any(e.split(" (")[0] == short for e in failure.edits):
                        failure.edits.append(edit)
            block = by_id.get(use_id)
            if block is None:
                continue
            text = result_text(block.get("content"))
            if text == CLEARED or (block.get("is_error") and _HARNESS_ERROR.search(text[:600])):
                continue
            command = facts.tool_command(use) if name in facts.SHELL_TOOLS else None
            failed = _failed(block, text, shell=command is not None)
            key = command_key(command) if command else name
            if failed:
                line = facts.first_error_line(text) or text
                what = facts.one_line(command or f"{name} {facts.tool_path(use) or ''}", 100)
                error = facts.one_line(_REDACTED.sub("…", line), ERROR_CHARS)
                if not any(f.key == key and f.error == error for f in open_):
                    open_.append(_Failure(what.strip(), error, key))
                continue
            retried = facts.file_action(name, use) is None  # a command or another tool
            program = key.split(" ")[0]
            # the same command, or (once something was edited) another run of the same program
            closed = [
                f
                for f in open_
                if retried and (f.key == key or (f.edits and f.key.split(" ")[0] == program))
            ]
            for failure in closed:
                open_.remove(failure)
                summary = summary_lines([block], uses)
                how = "ran" if command else "retried"
                edits = ", ".join(failure.edits[:4])
                how = f"edited {edits}; then {how}" if failure.edits else how
                again = command or f"{name} {_input_summary(use)}"
                after = (
                    f" `{facts.one_line(again, 160)}`, which {'passed' if command else 'worked'}"
                )
                after += f" ({summary[-1]})" if summary else ""
                lines.append(f"- `{failure.what}` failed: {failure.error} → fixed: {how}{after}")
    lines += [f"- `{f.what}` failed: {f.error}" for f in open_]
    return lines


def _changed_line(use: Mapping[str, Any]) -> str:
    """The first line an edit introduced (what a summary would quote as "the fix"), or ''."""
    raw = use.get("input")
    if not isinstance(raw, Mapping):
        return ""
    old = raw.get("old_string", raw.get("old_str", ""))
    new = raw.get("new_string", raw.get("new_str", ""))
    if not isinstance(new, str) or not isinstance(old, str) or not new.strip():
        return ""
    before = {ln.strip() for ln in old.splitlines()}
    for line in new.splitlines():
        if line.strip() and line.strip() not in before:
            return facts.one_line(line.strip(), 80).replace("`", "'")
    return ""


def _input_summary(use: Mapping[str, Any]) -> str:
    raw = use.get("input")
    if not isinstance(raw, Mapping):
        return ""
    parts = [f"{k}={v}" for k, v in raw.items() if isinstance(v, str | int | float)]
    return facts.one_line(", ".join(parts), 120)


def _failed(block: Mapping[str, Any], text: str, *, shell: bool) -> bool:
    if block.get("is_error"):
        return True
    if len(text) > 8_000:  # a verdict sits at the start or the end of long output
        text = f"{text[:4_000]}\n{text[-4_000:]}"
    return shell and bool(facts.FAILURE_MARK.search(text) or _FAILING.search(text))
