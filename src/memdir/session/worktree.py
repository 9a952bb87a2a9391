"""Whether the session's file changes are committed: the state a handover must not lose.

A host summary says "changes are unstaged/uncommitted" or names the commit that holds them; the
notes can tell the same from the tool calls alone. Edits and writes after the last successful
``git commit`` are uncommitted; a commit after the last edit clears the line; a batch with
neither keeps what the notes said before (the state has not changed).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memdir.session import facts
from memdir.session.messages import readable_result

PREFIX = "Uncommitted:"
SHOWN_FILES = 4
_COMMIT = re.compile(r"\bgit\b[^|;&]*\bcommit\b")


def uncommitted(turns: Sequence[facts.Turn], previous_state: str) -> str | None:
    """The Current State line for changed files no commit holds yet, or None."""
    changed: list[str] = []
    seen_change = seen_commit = False
    for turn in turns:
        results = {str(b.get("tool_use_id")): b for b in turn.results}
        for use in turn.tool_uses:
            name = str(use.get("name", ""))
            if facts.file_action(name, use) in ("edited", "written"):
                path = facts.tool_path(use) or "?"
                changed = [p for p in changed if p != path] + [path]
                seen_change = True
            command = facts.tool_command(use) if name in facts.SHELL_TOOLS else None
            if command and _COMMIT.search(command) and _succeeded(results.get(str(use.get("id")))):
                changed, seen_commit = [], True
    if changed:
        names = [p.rsplit("/", 1)[-1] for p in changed]
        shown = ", ".join(dict.fromkeys(names[-SHOWN_FILES:]))
        more = f" and {len(names) - SHOWN_FILES} more" if len(names) > SHOWN_FILES else ""
        return f"{PREFIX} {len(names)} file(s) changed since the last commit ({shown}{more})"
    if seen_change or seen_commit:
        return None
    return next((ln for ln in previous_state.splitlines() if ln.startswith(PREFIX)), None)


def _succeeded(block: object) -> bool:
    if not isinstance(block, Mapping):
        return False  # no result yet: the commit may still fail
    text = readable_result(block.get("content"))
    return not block.get("is_error") and not facts.FAILURE_MARK.search(text)
