"""Does a memory's name or description carry one session's specifics? The check behind the rule
that an offline memory states its lesson in general words.

A lesson is read in later sessions, on other branches, about other commits: its name and
description must not hold what only one session had — a branch name, a commit message, a temp
path, an id or hash, a line number, a line of quoted tool output, or a command line cut short.
Those belong in the body's evidence (**Why:**), where they show what happened.

:func:`specific_tokens` finds them in a text: by shape (paths, hashes, uuids, long numbers,
``file:line``, quoted output, error prefixes, a cut "…") and, given the session, by the words the
session itself made up (:func:`session_specifics`: branch names it created or pushed, commit
messages it wrote, temp paths it used). Extraction's tests assert every lesson passes it; the
notes benchmark counts the memories that do not.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence

from memdir.llm.base import Message, ToolResultBlock, ToolUseBlock

_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("path", re.compile(r"(?<![\w.<])(?:~|/(?:tmp|var|home|Users|private|root|mnt|opt))/\S+")),
    ("path", re.compile(r"(?<![\w.<>])/[\w.-]+/[\w.-]+/\S*")),
    ("path", re.compile(r"\b[A-Z]:\\\S+")),
    ("uuid", re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)),
    ("hash", re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b")),
    ("number", re.compile(r"(?<![\w.])#?\d{5,}\b|(?<!\w)#\d+\b")),
    ("line", re.compile(r"\blines? \d+\b|\.\w{1,6}:\d+\b", re.I)),
    ("output", re.compile(r"\b(?:fatal|error|warning|hint):\s|Traceback|\bexit code \d+", re.I)),
    ("output", re.compile(r"\[[\w/.-]+ [0-9a-f]{7,}\]")),
    ("quoted", re.compile(r"[\"“][^\"”]{24,}[\"”]")),
    ("message", re.compile(r"(?:^|\s)-m\s*[\"']")),
    ("cut", re.compile(r"…|\.\.\.$")),
)
# Names every project shares: never session-specific on their own.
_COMMON = frozenset({"main", "master", "develop", "dev", "trunk", "origin", "upstream", "head"})
_BRANCH_CMD = re.compile(
    r"\bgit\s+(?:checkout\s+-[bB]|switch\s+-[cC]|branch(?:\s+-[mM])?|worktree\s+add\s+(?:-b\s+)?)"
    r"\s+(?P<b>[\w./-]+)"
)
_PUSH = re.compile(r"\bgit\s+push\b(?P<rest>[^|;&]*)")
_BRANCH_OUT = re.compile(
    r"\bcurrent branch (?P<b>[\w./-]+) has no upstream|\bbranch '(?P<c>[\w./-]+)' set up to track|"
    r"Switched to (?:a new )?branch '(?P<d>[\w./-]+)'"
)
_MESSAGE = re.compile(r"(?:^|\s)(?:-m|--message)[= ]\s*(?P<q>[\"'])(?P<m>.+?)(?P=q)", re.S)
_TEMP = re.compile(r"/(?:tmp|var/folders|private/tmp)/[\w./-]+")


def specific_tokens(text: str, session: Iterable[str] = ()) -> list[str]:
    """The pieces of ``text`` that only one session would have, each prefixed by its kind
    (``"path: /tmp/x"``); empty when the text is stated in general words. ``session``: words the
    session made up (:func:`session_specifics`), matched as whole words."""
    found: list[str] = []
    for kind, pattern in _SHAPES:
        for m in pattern.finditer(text):
            found.append(f"{kind}: {m.group(0).strip()}")
    low = text.lower()
    for word in session:
        w = word.lower()
        if w in _COMMON or len(w) < 3:
            continue
        if re.search(rf"(?<![\w/.-]){re.escape(w)}(?![\w/-])", low):
            found.append(f"session: {word}")
    return list(dict.fromkeys(found))


def session_specifics(messages: Sequence[Message]) -> frozenset[str]:
    """Words a session made up: the branches it created, pushed or was told about, the commit
    messages it wrote, the temp paths its commands used."""
    words: set[str] = set()
    for m in messages:
        for b in m.blocks:
            if isinstance(b, ToolUseBlock):
                command = b.input.get("command")
                if isinstance(command, str):
                    words |= _from_command(command)
            elif isinstance(b, ToolResultBlock):
                for x in _BRANCH_OUT.finditer(b.content):
                    words.add(x.group("b") or x.group("c") or x.group("d"))
    return frozenset(w for w in words if w.lower() not in _COMMON and len(w) >= 3)


def _from_command(command: str) -> set[str]:
    words = {m.group("b") for m in _BRANCH_CMD.finditer(command)}
    words |= {m.group("m").strip() for m in _MESSAGE.finditer(command)}
    words |= set(_TEMP.findall(command))
    for push in _PUSH.finditer(command):
        try:
            args = shlex.split(push.group("rest"))
        except ValueError:
            args = push.group("rest").split()
        positional = [a for a in args if not a.startswith("-") and not re.match(r"\d?>", a)]
        if len(positional) >= 2:  # git push <remote> <branch>[:<other>]
            words |= set(positional[1].split(":"))
    return words
