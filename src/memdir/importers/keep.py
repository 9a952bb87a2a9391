"""What the memory rules say not to keep, applied to imported text.

The reference's "What NOT to save" (code patterns, architecture and paths; git history; debugging
recipes; ephemeral task state) holds for an import too: other tools record all of it (claude-mem
logs every change, the MCP memory server's observations read like a work log), and a memory dir
full of "Fixed the modal on July 3" would drown the lessons. Extraction avoids these by
construction (it saves explicit statements only, :mod:`memdir.extract.rules`); an import has
to recognise them, so :func:`not_to_keep` gives the reason an imported text is one of them, or
None. Its markers follow extraction's: the one-off markers of :mod:`memdir.extract.rules`
("for now", "this time", ...) make a statement task state, and a standing-rule cue ("always",
"never", "use X instead of Y") keeps a statement that merely mentions a file or a change.

Precision over recall, as in extraction: a kept work-log line can be retired later; a dropped
rule is gone from the import (it is still in the source, and the dry run lists it).
"""

from __future__ import annotations

import re

_F = re.IGNORECASE
_CHANGE_VERBS = (
    "fixed|implemented|refactored|added|removed|deleted|updated|migrated|completed|converted|"
    "replaced|changed|created|renamed|moved|merged|reverted|bumped|resolved|eliminated|"
    "cleaned up|rewrote|introduced|shipped|released|finished|started|continued|identified|"
    "verified|validated|confirmed|investigated|analy[sz]ed|attempted|tried"
)
_GIT_HISTORY = re.compile(
    rf"^(?:successfully\s+|then\s+|also\s+)?(?:{_CHANGE_VERBS})\b"
    r"|\b(?:commit(?:ted)?\s+[0-9a-f]{7,40}|pushed to|merged (?:into|to)|pull request #?\d+|"
    r"\bPR #\d+|issue #\d+\s+(?:is|was)\s+(?:done|closed|fixed|completed))",
    _F,
)
_TASK_STATE = re.compile(
    r"^(?:next steps?|todo|to do|remaining|in progress|wip|currently|still need|pending)\b"
    r"|\b(?:tests? (?:are |now |all )?(?:passing|green)|\d+ (?:tests? )?passed|"
    r"in progress|for now|right now|at the moment|this session|current task|"
    r"phase \d+ (?:can|is|was)|can now proceed)\b",
    _F,
)
_CODE_TOKEN = re.compile(
    r"`[^`]+`|\b[\w-]+/[\w./-]+\b|\b\w+\.(?:py|ts|tsx|js|jsx|rs|go|java|kt|rb|c|h|cpp|cs|vue)\b|"
    r"\b[a-z]+[A-Z]\w*\(\)|\b[A-Z][a-z]+(?:[A-Z][a-z]+){2,}\b"
)
_RULE_CUE = re.compile(
    r"\b(?:always|never|prefer|must|should|don't|do not|avoid|use|instead of|rather than|"
    r"make sure|remember|requires?|needs? to|only)\b",
    _F,
)
_TRIGGER = re.compile(
    r"^(?:when|whenever|every time|each time|after|before|at the end of every|if|for all|"
    r"always|never)\b",
    _F,
)
ONE_OFF = re.compile(
    r"\b(?:for now|this time|right now|for this (?:task|pr|change|one|file|function)|"
    r"at the moment|just now|in this (?:pr|commit))\b",
    _F,
)


def not_to_keep(text: str) -> str | None:
    """Why ``text`` (an imported fact) is not a memory to keep, or None when it may be one."""
    flat = " ".join(text.split())
    if not flat:
        return "empty"
    standing = bool(_TRIGGER.match(flat))  # "when the user says X, do Y": a rule, not a log
    rule = standing or bool(_RULE_CUE.search(flat))
    if _GIT_HISTORY.search(flat) and not rule:
        return "git history: a record of a change made (the code and git log hold it)"
    if (_TASK_STATE.search(flat) and not standing) or ONE_OFF.search(flat):
        return "ephemeral task state: true of one task or session, not of the project"
    code = len(_CODE_TOKEN.findall(flat))
    words = len(flat.split())
    if not rule and code >= 2 and code * 6 >= words:
        return "code structure: names files and symbols (read the code instead)"
    return None
