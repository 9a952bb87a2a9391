"""What a whole session shows, beyond single sentences: the rule extractor's second pass.

Users rarely say "remember that…". A careful reader of a session still notices lasting facts:

* **a repeated check-up** — "did you push?" asked twice means the user expects the work pushed,
  not only committed: feedback, "finish with <verb> without being asked";
* **frustration with a way forward** — "we're just guessing… why don't you read the docs"
  says how the user wants a stuck problem approached: feedback, in the user's words;
* **a fix the session proved** — a command failed for an environmental reason (a hook rejected
  the commit, the branch has no upstream, a module is missing, the tool is not on the PATH), and
  a different command then worked: project, "here `Y` works where `X` failed (<error>)".

Precision first, as in :mod:`memdir.extract.rules`: each rule needs its exact shape; commands
that carry a script (``python -c``) or anything that looks like a credential are never saved, and
code structure, git history and task state (reference §4) are out of scope by construction.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from memdir.extract.rules import Candidate, sentences
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
_ENV_ERROR = re.compile(
    r"command not found|not found in PATH|No module named|ModuleNotFoundError|is not installed|"
    r"has no upstream branch|--set-upstream|hook (?:failed|rejected|id:)|pre-commit|"
    r"files were modified by this hook|would reformat|Permission denied|EACCES|"
    r"Cannot find module|not recognized as an internal|unknown command|"
    r"requires a different Python|Python \d\.\d+ is not supported|engine \"node\" is incompatible",
    re.IGNORECASE,
)
_SCRIPTED = re.compile(r"\s-(?:c|e)\s|<<|\bheredoc\b")
_SECRET = re.compile(
    r"pass(?:word)?|secret|token|api[_-]?key|auth=|bearer|://[^/\s]+:[^@\s]+@", re.I
)
LOOKAHEAD = 4  # shell calls after a failure in which the working alternative must come


def session_candidates(messages: Sequence[Message], *, since: int = 0) -> list[Candidate]:
    """Every session-level memory statement in ``messages`` whose last piece of evidence is at
    index ``since`` or later: a hook that extracts after each turn passes the whole session and
    the first new message, so evidence may span turns but old evidence is not saved again."""
    return [
        *_check_ups(messages, since),
        *_frustrations(messages, since),
        *_proven_fixes(messages, since),
    ]


def _user_texts(messages: Sequence[Message]) -> list[tuple[int, str]]:
    texts = []
    for i, m in enumerate(messages):
        if m.role == "user":
            text = " ".join(b.text for b in m.blocks if isinstance(b, TextBlock)).strip()
            if text and not is_harness_text(text):
                texts.append((i, text))
    return texts


def _check_ups(messages: Sequence[Message], since: int) -> list[Candidate]:
    asked: Counter[str] = Counter()
    source: dict[str, str] = {}
    last: dict[str, int] = {}
    for index, text in _user_texts(messages):
        if len(text.split()) > 14:
            continue
        m = next((m for x in sentences(text) if (m := _CHECK_UP.match(x.lower()))), None)
        if m:
            verb = m.group("verb").lower()
            verb = _BASE_VERB.get(verb, verb)
            asked[verb] += 1
            source.setdefault(verb, text.strip())
            last[verb] = index
    found = []
    for verb, n in asked.items():
        if n >= 2 and last[verb] >= since:  # asked again: an expectation, not a one-off
            found.append(
                Candidate(
                    "save",
                    MemoryType.FEEDBACK,
                    f"Finish work with {verb} without being asked; the user expects it done",
                    f'the user had to ask "{source[verb]}" {n} times in one session',
                    "check-up",
                    source[verb],
                )
            )
    return found


def _frustrations(messages: Sequence[Message], since: int) -> list[Candidate]:
    found = []
    for index, text in _user_texts(messages):
        if index < since or not _FRUSTRATED.search(text):
            continue
        suggestion = _SUGGESTION.search(text)
        if suggestion is None:
            continue
        ask = suggestion.group("x").strip().rstrip(",;:")
        statement = f"When a problem resists quick fixes, {ask} instead of trying fix after fix"
        why = " ".join(text.split())[:200]
        found.append(Candidate("save", MemoryType.FEEDBACK, statement, why, "frustration", text))
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


def _proven_fixes(messages: Sequence[Message], since: int) -> list[Candidate]:
    runs = _shell_runs(messages)
    found = []
    for i, (command, output, failed, _at) in enumerate(runs):
        error = _ENV_ERROR.search(output) if failed else None
        if error is None or _SCRIPTED.search(command) or _SECRET.search(command):
            continue
        program = _program(command)
        line = next((ln for ln in output.splitlines() if error.group(0) in ln), error.group(0))
        line = " ".join(line.split())[:120]
        window = runs[i + 1 : i + 1 + LOOKAHEAD]
        for j, (later, _out, later_failed, at) in enumerate(window):
            if later_failed or _program(later) != program:
                continue
            if at < since:
                break  # proved before this window: saved (or not) back then
            if _SCRIPTED.search(later) or _SECRET.search(later):
                break
            between = [c for c, _o, bad, _a in window[:j] if not bad and not _SECRET.search(c)]
            if later != command:
                statement = (
                    f"Here `{_short(later)}` works where `{_short(command)}` failed ({line})"
                )
            elif between:  # the same command passed once something else ran first
                first = between[-1]
                how = (
                    f"`{first[5:]}` is changed" if first.startswith("edit ") else f"`{first}` runs"
                )
                statement = f"Here `{_short(command)}` fails ({line}) until {how} first"
            else:
                continue  # a flaky retry proves nothing
            why = "the session saw the first fail and the second succeed"
            found.append(Candidate("save", MemoryType.PROJECT, statement, why, "proven-fix", line))
            break
    return found


def _program(command: str) -> str:
    """The program of a command's last real step: ``git push`` → ``git push``, ``uv run x`` → x."""
    step = re.split(r"&&|;|\|\|", command)[-1].split()
    words = [
        w for w in step if not re.match(r"^(?:\S+=\S*|sudo|uv|run|npx|poetry|python3?|-m)$", w)
    ]
    if words and words[0] in ("git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "mix"):
        return " ".join(words[:2])
    return words[0] if words else ""


def _short(command: str) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= 100 else flat[:99] + "…"
