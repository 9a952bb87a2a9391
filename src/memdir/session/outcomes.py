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

from memdir.extract.commands import probes
from memdir.session import facts, narration
from memdir.session.messages import ChatMessage, readable_result
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
assert "[^" not in _SUMMARY.pattern  # every "^" is an anchor, so this rewrite is safe
_LINES = re.compile(_SUMMARY.pattern.replace("^", "^[ \t]*"), re.IGNORECASE | re.MULTILINE)
_BOILERPLATE = re.compile(
    r'^\s*\(use "git|^\s*(?:On branch|Your branch|Changes (?:not staged|to be committed)|'
    r"Untracked files|nothing (?:added )?to commit|no changes added)",
    re.IGNORECASE,
)
_PROGRESS = re.compile(r"[█▏▎▍▌▋▊▉#]{6,}|^\s*\.{6,}\s*$")
_FAILING = re.compile(
    r"\b[1-9]\d* (?:failed|failures?|failing|errors?)\b|^FAIL\b|--- FAIL|test result: FAILED|"
    r"BUILD FAILED|^\s*(?:error|ERROR)\b[\s:\[]|\berror TS\d+|npm ERR!|"
    r"^[\w.]*(?:Error|Exception): ",
    re.IGNORECASE | re.MULTILINE,
)
ERROR_CHARS = 300
SCANNED_LINES = 80
CAUSE_REPLIES = 3  # a cause stated this many replies after a failure is taken as its cause
_REDACTED = re.compile(r"\[REDACTED[^\]]*\]")
_KILL = re.compile(r"^(?:pkill|kill|killall)\b")  # nothing left to stop: found nothing, too
_MISSED = re.compile(
    r"No such file or directory|cannot access|not a git repository|No matches found|"
    r"does not exist|no such file|^Exit code \d+$",
    re.IGNORECASE,
)
# A harness complaint about the agent's own tool call, corrected at once: not a project error.
_HARNESS_ERROR = re.compile(
    r"File has not been read yet|File has been modified since read|String to replace not found|"
    r"Found \d+ matches of the string to replace|InputValidationError|"
    r"user doesn't want to proceed|was rejected by the user|interrupted by user",
    re.IGNORECASE,
)


def summary_lines(results: Sequence[Mapping[str, Any]], uses: Mapping[str, Any]) -> list[str]:
    """Summary lines of test runs and commits in these tool results, in order."""
    return [line for run in summary_runs(results, uses) for line in run]


def summary_runs(results: Sequence[Mapping[str, Any]], uses: Mapping[str, Any]) -> list[list[str]]:
    """The summary lines of each run (one tool result) that has any, in order."""
    return [run for block in results if (run := _kept(_block_lines(block, uses)))]


RESULT_LINES = 3  # of one run: its failures first, then its last line (the overall verdict)


def _kept(lines: list[str]) -> list[str]:
    """One run's summary lines for a handover: ``go test ./...`` prints a line per package, a
    handover needs the failures and the verdict."""
    if len(lines) <= RESULT_LINES:
        return lines
    failing = [ln for ln in lines[:-1] if _FAILING.search(ln.split(": ", 1)[-1])]
    return [*failing[: RESULT_LINES - 1], lines[-1]]


def _block_lines(block: Mapping[str, Any], uses: Mapping[str, Any]) -> list[str]:
    """The summary lines of one shell result, each as "`command`: line"."""
    use = uses.get(str(block.get("tool_use_id")))
    if use is None or str(use.get("name", "")) not in facts.SHELL_TOOLS:
        return []  # only command output: a file that contains "3 passed" is not a result
    lines = readable_result(block.get("content")).splitlines()
    if len(lines) > SCANNED_LINES:  # summaries open (commits) or close (test runs) output
        lines = lines[:10] + lines[-SCANNED_LINES:]
    text = "\n".join(ln if len(ln) <= 400 else "" for ln in lines)
    starts = dict.fromkeys(text.rfind("\n", 0, m.start()) + 1 for m in _LINES.finditer(text))
    command = facts.one_line(facts.tool_command(use) or "", 60).replace("`", "'")
    found: list[str] = []
    for start in starts:  # one pass over the output, then the lines that matched
        end = text.find("\n", start)
        line = text[start : end if end >= 0 else len(text)]
        clean = line.strip(" =-\t")
        noise = _BOILERPLATE.search(line) or _PROGRESS.search(line) or _REDACTED.search(line)
        if clean and not noise:
            found.append(f"`{command}`: {facts.one_line(clean, 200)}")
    return found


@dataclass
class _Failure:
    what: str
    error: str
    key: str
    edits: list[str] = field(default_factory=list)
    cause: str = ""

    def line(self) -> str:
        cause = f" (cause: {self.cause})" if self.cause else ""
        return f"- `{self.what}` failed: {self.error}{cause}"


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
    """Note lines: ``- <what> failed: <error> → fixed: edited a.py (`line`); then ran `cmd`,
    which passed (<summary>)``, with the cause the assistant stated when it did, or
    ``- <what> failed: <error>`` when no later success of the same command was seen.

    ``prior`` are still-open failure lines from earlier notes: a success in ``turns`` closes them
    too (the notes are merged a few turns at a time), and the open ones come back unchanged."""
    tracker = _Tracker()
    for line in prior:
        if (m := OPEN_LINE.match(line)) and " → fixed:" not in line:
            what = m.group("what")
            tracker.open.append(_Failure(what, m.group("error"), command_key(what)))
    for turn in turns:
        uses = {str(b.get("id")): b for b in turn.tool_uses}
        for message in turn.messages:  # in order: a fix comes after its failure
            if message.role == "assistant":
                tracker.narration(message)
                for use in message.tool_uses:
                    tracker.edit(use)
            for block in message.content:
                called = uses.get(str(block.get("tool_use_id")))
                if block.get("type") == "tool_result" and called is not None:
                    tracker.result(called, block, uses)
    return tracker.lines + [f.line() for f in tracker.open]


class _Tracker:
    def __init__(self) -> None:
        self.open: list[_Failure] = []
        self.lines: list[str] = []
        self.replies_since = 0  # assistant replies since the last failure

    def narration(self, message: ChatMessage) -> None:
        self.replies_since += 1
        if self.open and not self.open[-1].cause and self.replies_since <= CAUSE_REPLIES:
            causes = narration.statements([message])[1]
            if causes:
                self.open[-1].cause = causes[0]

    def edit(self, use: Mapping[str, Any]) -> None:
        name = str(use.get("name", ""))
        if facts.file_action(name, use) not in ("edited", "written"):
            return
        path = facts.tool_path(use)
        short = path.rsplit("/", 1)[-1] if path else name
        change = _changed_line(use)
        for failure in self.open:
            if not any(e.split(" (")[0] == short for e in failure.edits):
                failure.edits.append(f"{short} (`{change}`)" if change else short)

    def result(
        self, use: Mapping[str, Any], block: Mapping[str, Any], uses: Mapping[str, Any]
    ) -> None:
        name = str(use.get("name", ""))
        text = readable_result(block.get("content"))
        if text == CLEARED or (block.get("is_error") and _HARNESS_ERROR.search(text[:600])):
            return
        command = facts.tool_command(use) if name in facts.SHELL_TOOLS else None
        key = command_key(command) if command else name
        if _failed(block, text, shell=command is not None):
            error = facts.one_line(
                _REDACTED.sub("…", facts.first_error_line(text) or text), ERROR_CHARS
            )
            looked = probes(key) or _KILL.match(key)
            if command and looked and _MISSED.search(error):
                return  # a lookup that found nothing: exploring, not an error to hand over
            if not any(f.key == key and f.error == error for f in self.open):
                what = facts.one_line(command or f"{name} {facts.tool_path(use) or ''}", 100)
                self.open.append(_Failure(what.strip(), error, key))
                self.replies_since = 0
            return
        if facts.file_action(name, use) is not None:
            return  # reading or editing a file retries nothing
        program = key.split(" ")[0]
        # the same command, or (once something was edited) another run of the same program
        for failure in [
            f for f in self.open if f.key == key or (f.edits and f.key.split(" ")[0] == program)
        ]:
            self.open.remove(failure)
            summary = summary_lines([block], uses)
            how = "ran" if command else "retried"
            if failure.edits:
                how = f"edited {', '.join(failure.edits[:4])}; then {how}"
            again = command or f"{name} {_input_summary(use)}"
            done = f"`{facts.one_line(again, 160)}`, which {'passed' if command else 'worked'}"
            done += f" ({summary[-1]})" if summary else ""
            self.lines.append(f"{failure.line()} → fixed: {how} {done}")


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
    if len(text) > 4_000:  # a verdict sits at the start or the end of long output
        text = f"{text[:2_000]}\n{text[-2_000:]}"
    return shell and bool(facts.FAILURE_MARK.search(text) or _FAILING.search(text))
