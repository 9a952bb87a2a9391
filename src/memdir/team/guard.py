"""The team write guard: credentials never reach shared memory through a write.

Invariant: any write whose target lies in the team directory is scanned first; if the new text
holds a credential, :class:`~memdir.errors.SecretFoundError` is raised *before* anything is
written and names only the rule labels -- never the value, which the caller already has and
which must not travel further (into logs, tool results sent to a model, or error reports).

"In the team directory" fails closed: the test is case-insensitive (on macOS and Windows
``Team/x.md`` *is* ``team/x.md``), and when the guard knows the memory root it also follows
symlinks, so ``notes/link/x.md`` with ``notes/link -> ../team`` is scanned too. Private memory
is not scanned: it never leaves the machine.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from pathlib import Path

from memdir import pathsafe
from memdir.errors import SecretFoundError, UnsafePathError
from memdir.team.secrets import labels, scan

WriteGuard = Callable[[str, str], None]
DEFAULT_TEAM_PREFIX = "team/"


def _lexically_in_team(rel: str, team_prefix: str) -> bool:
    norm = posixpath.normpath(rel.replace("\\", "/")).casefold()
    prefix = posixpath.normpath(team_prefix.strip("/")).casefold()
    return norm == prefix or norm.startswith(prefix + "/")


def _physically_in_team(root: Path, rel: str, team_prefix: str) -> bool:
    try:
        real_team = pathsafe.realpath_deepest_existing(root / team_prefix.strip("/"))
        real_target = pathsafe.realpath_deepest_existing(root / rel)
    except UnsafePathError:
        return True  # dangling or looping links: cannot tell, so treat as shared
    return pathsafe.is_within(real_team, real_target)


def is_team_path(
    rel: str, *, team_prefix: str = DEFAULT_TEAM_PREFIX, root: Path | None = None
) -> bool:
    """Whether a write to ``rel`` (relative to the memory root) lands in team memory."""
    if _lexically_in_team(rel, team_prefix):
        return True
    if root is None:
        return False
    return _physically_in_team(Path(os.path.abspath(root)), rel, team_prefix)


def check_team_write(
    rel: str, text: str, *, team_prefix: str = DEFAULT_TEAM_PREFIX, root: Path | None = None
) -> None:
    """Raise SecretFoundError (labels only) if ``text`` bound for team memory holds credentials.

    For callers that write outside :class:`~memdir.store.MemoryStore` (memory tools, MCP,
    the memory-tool backend); the store runs the same check through :func:`team_secret_guard`.
    """
    if not is_team_path(rel, team_prefix=team_prefix, root=root):
        return
    found = scan(text)
    if found:
        raise SecretFoundError(labels(found), path=rel)


def team_secret_guard(
    team_prefix: str = DEFAULT_TEAM_PREFIX, *, root: Path | None = None
) -> WriteGuard:
    """A ``MemoryStore(guards=[...])`` guard refusing credentials in team memory.

    Pass the store's ``root`` to also catch writes that reach the team directory via symlinks.
    """

    def guard(rel: str, text: str) -> None:
        check_team_write(rel, text, team_prefix=team_prefix, root=root)

    return guard


__all__ = ["DEFAULT_TEAM_PREFIX", "check_team_write", "is_team_path", "team_secret_guard"]
