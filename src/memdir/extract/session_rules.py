"""What a whole session shows, beyond single sentences: the rule extractor's second pass.

Users rarely say "remember that…". A careful reader of a session still notices lasting facts:

* **a repeated check-up** — "did you push?" asked twice means the user expects the work pushed,
  not only committed: feedback, "finish with <verb> without being asked";
* **frustration with a way forward** — "we're just guessing… why don't you read the docs"
  says how the user wants a stuck problem approached: feedback, in the user's words;
* **a workflow habit asked for twice** — "open a draft PR" in two requests
  (:mod:`memdir.extract.habits`), or once in each of two sessions, through the daily log
  (:func:`session_sightings`, :mod:`memdir.extract.sightings`);
* **a fix the session proved** — a command failed for an environmental reason (a hook rejected
  the commit, the branch has no upstream, a module is missing, the tool is not on the PATH), and
  a different command then worked: project, the lesson in general words
  (:mod:`memdir.extract.fixes`), the session's commands and output as its evidence.

Every pattern *closes* at one message (the second check-up, the frustrated message, the command
that worked) and is decided from the messages up to there only, so the session so far yields a
pattern exactly when the whole session does: :func:`session_candidates` over each prefix of a
session, keeping what closes in its new part, finds what one pass over the whole session finds.

Precision first, as in :mod:`memdir.extract.rules`: each rule needs its exact shape; commands
that carry a script (``python -c``) or anything that looks like a credential are never saved, and
code structure, git history and task state (reference §4) are out of scope by construction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memdir.extract.commands import program, stands_in
from memdir.extract.fixes import Proof, kind_of, lesson
from memdir.extract.habits import check_sightings, habit_sightings, repeated_habits
from memdir.extract.rules import Candidate, sentences
from memdir.extract.sightings import Sighting, session_key
from memdir.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.model import MemoryType
from memdir.session.harness import is_harness_text

_CHECK_UP = re.compile(
    r"^(?:and |so |also )?(?:did|have|has) (?:you|it|that|this) (?:also |already |actually )?"
    r"(?P<verb>push(?:ed)?|commit(?:ted)?|run|ran|test(?:ed)?|deploy(?:ed)?|merge[d]?|"
    r"update[d]? the docs|document(?:ed)?|tag(?:ged)?|release[d]?|rebase[d]?)\b(?P<rest>[^?.!]*)",
    re.IGNORECASE,
)
_BASE_VERB = {
    "pushed": "push",
    "committed": "commit",
    "ran": "run",
    "tested": "test",
    "deployed": "deploy",
    "merged": "merge",
    "updated the docs": "update the docs",
    "documented": "document",
    "tagged": "tag",
    "released": "release",
    "rebased": "rebase",
}
_FRUSTRATED = re.compile(
    r"\b(?:just (?:grasping|guessing)|grasping at straws|going (?:round|around) in circles|"
    r"you keep (?:\w+ing)|trial and error|stop guessing|this is the (?:third|fourth|fifth) time|"
    r"again and again)\b",
    re.IGNORECASE,
)
_SUGGESTION = re.compile(
    r"\b(?:why (?:don't|dont|do not) you|you should|please|instead,?|how about you)\s+"
    r"(?P<x>[^?.!]{8,200})",
    re.IGNORECASE,
)
_SCRIPTED = re.compile(
    r"\b(?:python[\d.]*|node|ruby|perl|php|bash|sh|zsh|deno|bun)\s+-(?:c|e)\s|<<|\bheredoc\b"
)
_SECRET = re.compile(
    r"pass(?:word)?|secret|token|api[_-]?key|auth=|bearer|://[^/\s]+:[^@\s]+@", re.I
)
_STAND_IN = frozenset({"missing-tool", "no-version"})  # kinds another tool of the family fixes
LOOKAHEAD = 4  # shell calls after a failure in which the working alternative must come


def session_candidates(messages: Sequence[Message], *, since: int = 0) -> list[Candidate]:
    """Every session-level lesson in ``messages`` that closes at index ``since`` or later: a hook
    that extracts after each turn passes the whole session so far and its first new message, so
    evidence may span turns, and what closed in an earlier turn is not offered again."""
    return [c for at, c in session_lessons(messages) if at >= since]


def session_lessons(messages: Sequence[Message]) -> list[tuple[int, Candidate]]:
    """(index of the message that closes it, lesson) for every session-level lesson, in the
    order they close."""
    found = [
        *_check_ups(messages),
        *_frustrations(messages),
        *_proven_fixes(messages),
        *repeated_habits(_user_texts(messages)),
    ]
    return sorted(found, key=lambda pair: pair[0])


_NAME_CHECK_UP = {
    "push": "Push finished work without being asked",
    "commit": "Commit finished work without being asked",
    "run": "Run a change before calling it done",
    "test": "Test a change before calling it done",
    "deploy": "Deploy finished work without being asked",
    "merge": "Merge approved work without being asked",
    "update the docs": "Update the docs with every change",
    "document": "Document a change as part of it",
    "tag": "Tag releases without being asked",
    "release": "Carry a release through without being asked",
    "rebase": "Rebase before handing work over",
}
_HOW_CHECK_UP = {
    "push": "After committing finished work, run `git push` before reporting the task as done, "
    "and say that it is pushed.",
    "commit": "Commit finished work before reporting the task as done; never leave it only in "
    "the working tree.",
    "run": "Run the change (and its tests) before saying it works, and report what the run showed.",
    "test": "Run the tests before saying a change is done, and report the result.",
    "deploy": "Deploy once a change is merged and verified, then report where it is live.",
    "merge": "Merge finished work once it is approved, without waiting to be asked.",
    "update the docs": "Update the docs that describe a change in the same piece of work.",
    "document": "Document a change in the same piece of work, before reporting it done.",
    "tag": "Tag a release commit as part of releasing it.",
    "release": "Carry a finished release through to publishing it.",
    "rebase": "Rebase the branch on its base before handing it over.",
}


def _user_texts(messages: Sequence[Message]) -> list[tuple[int, str]]:
    texts = []
    for i, m in enumerate(messages):
        if m.role == "user":
            text = " ".join(b.text for b in m.blocks if isinstance(b, TextBlock)).strip()
            if text and not is_harness_text(text):
                texts.append((i, text))
    return texts


def _check_up_asks(messages: Sequence[Message]) -> dict[str, list[tuple[int, str]]]:
    """verb -> (index, text) of every short check-up the user asked, in order."""
    asks: dict[str, list[tuple[int, str]]] = {}
    for index, text in _user_texts(messages):
        if len(text.split()) > 14:
            continue
        m = next((m for x in sentences(text) if (m := _CHECK_UP.match(x.lower()))), None)
        if m:
            verb = m.group("verb").lower()
            asks.setdefault(_BASE_VERB.get(verb, verb), []).append((index, text.strip()))
    return asks


def _check_ups(messages: Sequence[Message]) -> list[tuple[int, Candidate]]:
    found = []
    for verb, asked in _check_up_asks(messages).items():
        if len(asked) < 2:
            continue  # asked again: an expectation, not a one-off
        source = asked[0][1]
        ask = " ".join(source.split())[:120]
        evidence = f'the user asked "{ask}" and had to ask again later'
        found.append((asked[1][0], _check_up_lesson(verb, source, evidence)))
    return found


def _check_up_lesson(verb: str, source: str, evidence: str | None) -> Candidate:
    return Candidate(
        "save",
        MemoryType.FEEDBACK,
        f"When a task is finished, {verb} without being asked: the user expects it and checks",
        "the user had to check on it more than once in a session",
        "check-up",
        source,
        name=_NAME_CHECK_UP.get(verb, f"Finish work with {verb} without being asked"),
        how=_HOW_CHECK_UP.get(verb, f"Do the {verb} step as part of finishing a task."),
        evidence=evidence,
    )


def session_sightings(messages: Sequence[Message]) -> tuple[str, list[Sighting]]:
    """The session's key and the first ask of each habit and check-up in it, for
    :func:`memdir.extract.sightings.across_sessions`."""
    texts = _user_texts(messages)
    found = habit_sightings(texts) + check_sightings(texts)
    for verb, asked in _check_up_asks(messages).items():
        at, text = asked[0]
        lesson = "check-up-" + verb.replace(" ", "-")
        found.append(Sighting(at, lesson, text, _check_up_lesson(verb, text, None)))
    return session_key(texts[0][1] if texts else ""), found


def _frustrations(messages: Sequence[Message]) -> list[tuple[int, Candidate]]:
    found = []
    for index, text in _user_texts(messages):
        if not _FRUSTRATED.search(text):
            continue
        suggestion = _SUGGESTION.search(text)
        if suggestion is None:
            continue
        ask = suggestion.group("x").strip().rstrip(",;:")
        statement = f"When a problem resists quick fixes, {ask} instead of trying fix after fix"
        said = " ".join(text.split())[:200]
        candidate = Candidate(
            "save",
            MemoryType.FEEDBACK,
            statement,
            "guessing at fixes one after another frustrated the user; they asked for this instead",
            "frustration",
            text,
            name="Stop guessing when fixes keep failing",
            how=f"After a second failed attempt at the same problem, stop guessing: {ask}.",
            evidence=f'the user said: "{said}"',
        )
        found.append((index, candidate))
    return found


def _shell_runs(messages: Sequence[Message]) -> list[tuple[str, str, bool, int]]:
    """(command, output, failed, message index) of every shell call, in order; a file edit in
    between shows as ``("edit <file>", "", False, i)`` so a fix made by editing counts as what
    was run first."""
    calls: dict[str, str] = {}
    runs: list[tuple[str, str, bool, int]] = []
    for i, m in enumerate(messages):
        for b in m.blocks:
            if isinstance(b, ToolUseBlock) and b.name in ("Edit", "MultiEdit", "Write"):
                path = b.input.get("file_path")
                if isinstance(path, str):
                    runs.append((f"edit {path.rsplit('/', 1)[-1]}", "", False, i))
            if isinstance(b, ToolUseBlock) and b.name in ("Bash", "bash", "shell"):
                command = b.input.get("command")
                if isinstance(command, str):
                    calls[b.id] = command.strip()
            elif isinstance(b, ToolResultBlock) and b.tool_use_id in calls:
                failed = b.is_error or bool(re.search(r"exit code [1-9]", b.content, re.I))
                runs.append((calls.pop(b.tool_use_id), b.content, failed, i))
    return runs


def _proven_fixes(messages: Sequence[Message]) -> list[tuple[int, Candidate]]:
    runs = _shell_runs(messages)
    found = []
    for i, (command, output, failed, _at) in enumerate(runs):
        kind = kind_of(output)
        if not failed or kind is None:
            continue
        if _SCRIPTED.search(command) or _SECRET.search(command):
            continue
        name = program(command)
        window = runs[i + 1 : i + 1 + LOOKAHEAD]
        for j, (later, _out, later_failed, at) in enumerate(window):
            other = kind.id in _STAND_IN and stands_in(command, later)
            if later_failed or (program(later) != name and not other):
                continue
            if _SCRIPTED.search(later) or _SECRET.search(later):
                break
            between = [c for c, _o, bad, _a in window[:j] if not bad and not _SECRET.search(c)]
            if later == command and not between:
                continue  # a flaky retry proves nothing
            step = between[-1] if between else None
            proof = Proof(command, output, _error_line(output), later, step, tuple(between))
            candidate = lesson(proof)
            if candidate is not None:
                found.append((at, candidate))
            break
    return found


def _error_line(output: str) -> str:
    """The line of ``output`` that says what went wrong, flattened and cut to 120 characters."""
    kind = kind_of(output)
    match = kind.pattern.search(output) if kind is not None else None
    key = match.group(0) if match else ""
    line = next((ln for ln in output.splitlines() if key and key in ln), output.strip()[:120])
    return " ".join(line.split())[:120]
