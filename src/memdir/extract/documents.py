"""What in a user's turn is not the user's standing word: documents and task briefs.

A host puts documents in the user's turn (a skill file, an accepted plan), and users paste the
brief of one task ("CONSTRAINTS: - don't add new dependencies"). Their "always", "never" and
"don't" lines are that file's or that task's: :func:`memdir.extract.rules.candidates` keeps
nothing from a document and, from a brief, only what says it outlives the task.
"""

from __future__ import annotations

import re

from memdir.extract import standing

_SKILL = re.compile(r"^\s*Base directory for this skill:")
# Claude Code starts the session that carries out an accepted plan with the plan itself, in the
# user's turn: the agent's own words, however many "must"s it holds.
_PLAN = re.compile(r"^\s*Implement the following plan:")
_HEADING = re.compile(r"^#{1,3} \S", re.MULTILINE)


def injected_document(text: str) -> bool:
    """True for a document the host put in the user's turn — a skill or command file expanded
    into it (``Base directory for this skill: …``, or a Markdown file: a title and two or more
    sections), or an accepted plan handed to the session that carries it out: its "always" /
    "never" / "must" lines are that file's or the agent's, not the user speaking."""
    if _SKILL.match(text) or _PLAN.match(text):
        return True
    return bool(re.match(r"\s*# \S", text)) and len(_HEADING.findall(text)) >= 3


# A task brief: a long message laid out as a spec ("CONSTRAINTS:", "TASK 1:", a list of
# requirements). Its "don't change the data structure" lines bound that task; only what says it
# outlives the task (remember, from now on, the standing forms, facts told) is kept from it.
BRIEF_CHARS = 1_000
_BRIEF_LAYOUT = re.compile(  # "CONSTRAINTS:", "=====", "## Goal", "TASK 1: …"
    r"^\s*(?:[A-Z][A-Z0-9 /&-]{2,40}:\s*$|={4,}|-{4,}\s*$|#{1,4} \S|(?i:task|step|phase|part) "
    r"\d+\b)",
    re.MULTILINE,
)
_LIST_LINE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+\S", re.MULTILINE)
_OUTLIVES = frozenset({"remember", "forget", "from-now-on", "location", "tracker", "deployed"})


def outlives_brief(rule: str) -> bool:
    """True for a rule whose words say by themselves that they outlive the task of a brief."""
    return rule in _OUTLIVES or standing.lasting(rule)


def task_brief(text: str) -> bool:
    """True for a long message laid out as the spec of one task."""
    if len(text) < BRIEF_CHARS:
        return False
    return bool(_BRIEF_LAYOUT.search(text)) or len(_LIST_LINE.findall(text)) >= 4


__all__ = ["BRIEF_CHARS", "injected_document", "outlives_brief", "task_brief"]
