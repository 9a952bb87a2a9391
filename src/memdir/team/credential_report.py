"""Which memory files hold credentials: the ``memdir doctor`` check.

Invariant: a problem names the file, the line and the rule label, never the value. Team files
are ``secret`` problems (push skips them, so teammates never get them); private files are
``private-secret`` problems (they stay on this machine, but recall puts them into prompts).
The same scanner and placeholder checks as the write guards decide, so doctor lists exactly what
a write would have warned about or refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from memdir.errors import MemdirError
from memdir.team.guard import DEFAULT_TEAM_PREFIX, is_team_path
from memdir.team.secrets import scan_file


def credential_problems(
    files: Iterable[tuple[str, Path]], *, team_prefix: str = DEFAULT_TEAM_PREFIX
) -> list[dict[str, str]]:
    """``{"kind", "path", "detail"}`` per credential found in ``(relative name, path)`` files."""
    problems: list[dict[str, str]] = []
    for rel, path in files:
        try:
            findings = scan_file(path)
        except MemdirError:  # vanished or unreadable since the scan: the scan reports those
            continue
        kind = "secret" if is_team_path(rel, team_prefix=team_prefix) else "private-secret"
        problems += [
            {"kind": kind, "path": rel, "detail": f"line {f.line}: {f.label}"} for f in findings
        ]
    return problems


__all__ = ["credential_problems"]
