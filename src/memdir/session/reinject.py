"""The session notes as re-injected after a compaction: within a budget, by priority, not a cut.

A hard cut at N characters drops whole sections from the end of the file — exactly the ones a
colleague continuing the work needs (errors and fixes, key results) when the early sections are
long. :func:`fit_notes` instead keeps every non-empty section and trims *inside* sections:

* the most recent lines of each section come first (sections grow at the bottom; Current State is
  rewritten each time, so it is read from the top);
* room is handed out by priority: the current task and pending work, then errors and fixes, key
  results, the user's requests, learnings, files, and last the workflow and worklog;
* every trimmed section says how many older lines it left out, and where the full notes are.

Invariant: the result is at most ``budget`` characters whenever the budget can hold the section
headers, and notes that already fit come back unchanged.
"""

from __future__ import annotations

from pathlib import Path

from memdir.session.notes import parse_notes

PRIORITY = (
    "Session Title",
    "Current State",
    "Errors & Corrections",
    "Key results",
    "Task specification",
    "Learnings",
    "Files and Functions",
    "Codebase and System Documentation",
    "Workflow",
    "Worklog",
)
FROM_TOP = frozenset({"Session Title", "Current State"})  # rewritten whole, not appended to
LINE_CHARS = 400  # a single line never takes more than this in a trimmed section


def fit_notes(text: str, budget: int, *, notes_path: Path | None = None) -> str:
    """``text`` (a notes file) within ``budget`` characters; see the module docstring."""
    if len(text) <= budget:
        return text
    notes = parse_notes(text)
    sections = [(s.name, _lines(s.body)) for s in notes.sections if s.body.strip()]
    if not sections:
        return text[:budget]
    footer = (
        f"(Older lines were left out; the full notes are in {notes_path}.)" if notes_path else ""
    )
    rank = {name: i for i, name in enumerate(PRIORITY)}
    order = sorted(range(len(sections)), key=lambda i: rank.get(sections[i][0], len(PRIORITY)))
    kept: dict[int, list[int]] = {i: [] for i in range(len(sections))}

    def size() -> int:
        return len(_render(sections, kept, footer))

    # every section first gets its most recent line, in priority order; then more lines each
    for rounds in (1, None):
        for i in order:
            name, lines = sections[i]
            candidates = _recent_first(name, len(lines))
            taken = 0
            for j in candidates:
                if j in kept[i]:
                    taken += 1
                    continue
                if rounds is not None and taken >= rounds:
                    break
                kept[i].append(j)
                if size() > budget:
                    kept[i].remove(j)
                    break
                taken += 1
    out = _render(sections, kept, footer)
    return out if len(out) <= budget else out[:budget]


def _lines(body: str) -> list[str]:
    lines = [ln.rstrip() for ln in body.splitlines() if ln.strip()]
    return [ln if len(ln) <= LINE_CHARS else ln[: LINE_CHARS - 1] + "…" for ln in lines]


def _recent_first(name: str, n: int) -> list[int]:
    return list(range(n)) if name in FROM_TOP else list(range(n - 1, -1, -1))


def _render(sections: list[tuple[str, list[str]]], kept: dict[int, list[int]], footer: str) -> str:
    parts: list[str] = []
    trimmed = False
    for i, (name, lines) in enumerate(sections):
        chosen = sorted(kept[i])
        left_out = len(lines) - len(chosen)
        body = [lines[j] for j in chosen]
        if left_out:
            trimmed = True
            note = f"- ({left_out} older line{'s' if left_out > 1 else ''} left out)"
            body = [*body, note] if name in FROM_TOP else [note, *body]
        parts.append(f"# {name}\n" + "\n".join(body))
    if trimmed and footer:
        parts.append(footer)
    return "\n\n".join(parts)
