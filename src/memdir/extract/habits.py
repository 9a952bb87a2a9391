"""Workflow habits a user asks for twice: the way they want routine work done.

"create a draft PR please" once is a request; "commit, push and open a draft PR" again later in
the session says how this user opens pull requests (the gap study of issue #30 found draft PRs
asked for in five sessions of one repository, tests first in nine, replies to each review comment
in six — never with "always"). A habit here is a known workflow choice with its own wording —
the lesson is stated in general words with its own **How to apply:** — and it is saved only when
two separate user messages of one session ask for it, each as a request (not "he's got a draft
PR up", not a negation). The session rules (:mod:`memdir.extract.session_rules`) run it, so it
closes at the second request on the hook path and the CLI path alike. A habit asked for once
in each of two sessions is saved too, through the daily log (:mod:`memdir.extract.sightings`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memdir.extract.rules import Candidate, sentences
from memdir.extract.sightings import Sighting
from memdir.model import MemoryType

_F = re.IGNORECASE


@dataclass(frozen=True, slots=True)
class Habit:
    id: str
    pattern: re.Pattern[str]
    name: str
    statement: str
    how: str
    request: bool = True  # asked for as a request (else the words alone say it)


HABITS = (
    Habit(
        "draft-pr",
        re.compile(r"\bdraft (?:pr|pull request|merge request|mr)s?\b", _F),
        "Open pull requests as drafts",
        "Open pull requests as drafts: the user asks for a draft PR each time",
        "When opening a pull request, create it as a draft (`gh pr create --draft`) unless the "
        "user says it is ready for review.",
    ),
    Habit(
        "test-first",
        re.compile(
            r"\b(?:write|add|create|craft) (?:the |a |an )?(?:failing |new )?(?:unit |e2e )?"
            r"tests? first\b|\btests? first\b|\btdd\b",
            _F,
        ),
        "Write the failing test first",
        "Write the failing test before the fix or the feature: the user asks for tests first",
        "For a bug fix or a new behaviour, first add a test that fails without the change, run "
        "it, then write the code and run it again.",
    ),
    Habit(
        "review-replies",
        re.compile(
            r"\b(?:reply|respond)\w* (?:directly |individually )?to (?:each|every|all|the) "
            r"(?:of the )?(?:pr |review |github )?comments?\b",
            _F,
        ),
        "Reply to each review comment directly",
        "After addressing review feedback, reply to each review comment on the PR itself",
        "Once a review comment is fixed and pushed, answer that comment in its own thread, "
        "naming the commit that fixes it; do not leave the replies to the user.",
    ),
    Habit(
        "conventional-commits",
        re.compile(r"\bconventional commits?\b", _F),
        "Write conventional commit messages",
        "Commit messages follow the Conventional Commits form (`feat:`, `fix:`, `docs:` …)",
        "Start every commit message with its Conventional Commits type and an optional scope "
        "(`fix(cli): …`).",
    ),
    Habit(
        "split-commits",
        re.compile(
            r"\b(?:separate|individual|small|smaller|atomic|logical|meaningful) commits\b|"
            r"\bin (?:two|three|\d) commits\b",
            _F,
        ),
        "Split work into logical commits",
        "Commit work as separate logical commits, not one commit for everything",
        "Before committing, group the changes by purpose and commit each group on its own, "
        "with its own message.",
    ),
    Habit(
        "rebase-main",
        re.compile(r"\brebase (?:on|onto|from|to|with) (?:origin/)?(?:main|master)\b", _F),
        "Rebase on main before starting or handing over",
        "Rebase the branch on main before starting work on it and before opening its PR",
        "Run `git fetch` and `git rebase origin/main` before starting on a branch and again "
        "before opening or updating its pull request.",
    ),
    Habit(
        "show-first",
        re.compile(
            r"\b(?:don'?t|dont|do not)\s+(?:implement|build|code)(?:\s+(?:it|anything|this))?"
            r"(?:\s+yet)?\b|\b(?:don'?t|dont|do not)\s+(?:add|change)\s+(?:it|anything)\s+yet\b|"
            r"\bso i can (?:critique|review)\b|"
            r"\bjust show me (?:your|the) (?:write ?ups?|ideas|options|drafts?)\b",
            _F,
        ),
        "Show ideas for review before building them",
        "For design and writing work, the user wants the ideas or the step-by-step flow shown "
        "for critique before anything is built",
        "Lay out the options or the flow and wait for the user's critique; implement only once "
        "they say which to build.",
        request=False,
    ),
)
# the same words as a request, not a report ("he's got a draft pr up") or a refusal
_REQUEST = re.compile(
    r"\b(?:create|open|raise|make|launch|submit|put up|write|add|do|use|let'?s|please|pls|can "
    r"you|could you|should|reply|respond|rebase|commit|then)\b",
    _F,
)
_REFUSED = re.compile(r"\b(?:not|don'?t|no|never|without)\b(?:\W+\w+){0,3}\W*$", _F)


def _asks(habit: Habit, text: str) -> bool:
    for sentence in sentences(text):
        m = habit.pattern.search(sentence)
        if m and habit.request and not _REQUEST.search(sentence):
            continue
        if m and not _REFUSED.search(sentence[: m.start()]):
            return True
    return False


def repeated_habits(texts: Sequence[tuple[int, str]]) -> list[tuple[int, Candidate]]:
    """(index of the second request, lesson) for every habit two user messages ask for."""
    found = []
    for habit in HABITS:
        asked = _asked(habit, texts)
        if len(asked) < 2:
            continue
        (_, first), (at, second) = asked[0], asked[1]
        evidence = f'the user asked "{_short(first)}" and later "{_short(second)}"'
        found.append((at, _lesson(habit, first, evidence)))
    return found


def habit_sightings(texts: Sequence[tuple[int, str]]) -> list[Sighting]:
    """The first request of each habit in a session (:mod:`memdir.extract.sightings` promotes it
    when another session asked too)."""
    found = []
    for habit in HABITS:
        asked = _asked(habit, texts)
        if asked:
            at, text = asked[0]
            found.append(Sighting(at, habit.id, text, _lesson(habit, text, None)))
    return found


def _asked(habit: Habit, texts: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    return [(i, t) for i, t in texts if len(t) <= 2_000 and _asks(habit, t)]


def _lesson(habit: Habit, source: str, evidence: str | None) -> Candidate:
    return Candidate(
        "save",
        MemoryType.FEEDBACK,
        habit.statement,
        "the user asked for it in two separate requests of one session",
        "habit",
        source,
        name=habit.name,
        how=habit.how,
        evidence=evidence,
    )


def _short(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# "run `bun verify`", "can you check mise run test:ci": the project's own check, asked for by
# name. Once is a request; in two sessions it is how work here is checked (the gap study: "run
# `bun verify`" in three sessions of one repository, `mise run test:ci` in five).
_CHECK_ASK = re.compile(
    r"\b(?:run|rerun|re-run|check|try|use|execute|verify with)\s+(?:the\s+)?"
    r"(?:`(?P<quoted>[^`\n]{3,60})`|(?P<bare>(?:mise run|make|just|npm run|pnpm run|yarn run|"
    r"bun run|task)\s+[\w:.-]+|bun (?:verify|check|test|lint|typecheck)\b))",
    _F,
)
# what runs a project's check; a probe, git or an editor is not one
_CHECK_PROGRAM = re.compile(
    r"^(?:mise|make|just|task|npm|pnpm|yarn|bun|npx|bunx|cargo|go|uv|poetry|pytest|tox|nox|"
    r"ruff|mypy|tsc|eslint|golangci-lint|mix|gradle|\./gradlew|mvn|dotnet|composer|rake|"
    r"bundle)\b"
)
# what it is for: a check, not a dev server, a deploy or a one-off script
_CHECKS = re.compile(
    r"test|check|lint|verify|type|\bci\b|fmt|format|build|e2e|validate|spec|vet|clippy|audit", _F
)
_REPORTED = re.compile(r"\b(?:is|are|was|keeps?|still)\s+(?:failing|broken|red|passing)\b", _F)


def check_sightings(texts: Sequence[tuple[int, str]]) -> list[Sighting]:
    """The first request of each named check command in a session (saved by
    :mod:`memdir.extract.sightings` once another session asks for the same command)."""
    found: dict[str, Sighting] = {}
    for i, text in texts:
        if len(text) > 2_000:
            continue
        for sentence in sentences(text):
            m = _CHECK_ASK.search(sentence)
            if m is None or _REPORTED.search(sentence) or _REFUSED.search(sentence[: m.start()]):
                continue
            command = " ".join((m.group("quoted") or m.group("bare")).split())
            general = command.replace(" ./...", "")  # Go's "every package" is no path
            if not _CHECK_PROGRAM.match(command) or not _CHECKS.search(command):
                continue
            if re.search(r"[/~]|\d{3,}|\s-", general):
                continue  # a path, an id or flags: one run's, not the project's check
            lesson = "run-" + re.sub(r"[^a-z0-9]+", "-", command.lower()).strip("-")[:36]
            if lesson not in found:
                found[lesson] = Sighting(i, lesson, text, _check_lesson(command, text))
    return list(found.values())


def _check_lesson(command: str, source: str) -> Candidate:
    return Candidate(
        "save",
        MemoryType.PROJECT,
        f"Check work here with `{command}`: the user asks for it session after session",
        "the user asked for it in separate sessions",
        "check-command",
        source,
        name=f"Check changes with `{command}`",
        how=f"Before reporting a change as done, run `{command}` and report its result; fix "
        "what it finds first.",
    )


__all__ = ["HABITS", "Habit", "check_sightings", "habit_sightings", "repeated_habits"]
