"""Keeping session notes within their budgets: every section under its cap, then the whole brought
under the total by taking up to two thirds of each section in turn, least important first
(:func:`fit_sections`).

Invariants: a file path in Files and Functions is never dropped (its function lists go first);
lines dropped from a section are counted in one ``(N earlier lines condensed away)`` marker at
its top, which a later fit adds to; the Task specification sheds by intent (acknowledgements,
then plain questions and pastes, then requests), corrections and decisions last.
"""

from __future__ import annotations

import re

from memdir.session import facts

CONDENSED_CHARS = 140
_FOLDED = re.compile(r"^- \((\d+) earlier lines condensed away\)$")


def fit_sections(bodies: dict[str, str], section_chars: int, total_chars: int) -> None:
    """Every section under its cap, the whole under the total; least important first."""
    for name in list(bodies):
        bodies[name] = shrink(name, bodies[name], section_chars)
    order = (
        "Worklog",
        "Workflow",
        "Key results",
        "Errors & Corrections",
        "Learnings",
        "Codebase and System Documentation",
        "Task specification",
        "Current State",
        "Files and Functions",
    )
    for name in order:
        over = sum(len(b) for b in bodies.values()) - total_chars
        if over <= 0:
            return
        body = bodies.get(name, "")
        bodies[name] = shrink(name, body, max(len(body) - over, len(body) // 3))


def shrink(name: str, body: str, limit: int) -> str:
    """``body`` within ``limit`` chars. Lines leave oldest first, except in the Task
    specification, where they leave by intent: acknowledgements, then plain questions and
    pastes, then (after condensing the rest) requests, and corrections and decisions last."""
    if len(body) <= limit:
        return body
    lines = body.splitlines()
    if name == "Files and Functions":  # drop function lists; never a path
        return "\n".join(re.sub(r" — fn: .*$", "", ln) for ln in lines)
    folded = 0
    if lines and (m := _FOLDED.match(lines[0])):
        folded, lines = int(m.group(1)), lines[1:]
    room = limit - 48  # for the folded-lines marker

    def over() -> bool:
        return len("\n".join(lines)) > room

    def drop(level: int | None) -> int:
        gone, i = 0, 0
        while over() and i < len(lines) and len(lines) > 1:
            if level is None or facts.intent(lines[i]) == level:
                lines.pop(i)
                gone += 1
            else:
                i += 1
        return gone

    if name == "Task specification":
        folded += drop(0) + drop(1)
        for i, line in enumerate(lines):
            if not over():
                break
            if line.startswith("- ") and len(line) > CONDENSED_CHARS:
                lines[i] = "- " + facts.condense(line[2:], CONDENSED_CHARS)
        folded += drop(2)
    folded += drop(None)
    if folded:
        lines.insert(0, f"- ({folded} earlier lines condensed away)")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[: max(0, limit)]


__all__ = ["CONDENSED_CHARS", "fit_sections", "shrink"]
