"""The team write guard: credentials never reach shared memory through a write.

Invariant: any write whose target lies in the team directory is scanned first; if the new text
holds a credential, :class:`~memdir.errors.SecretFoundError` is raised *before* anything is
written and names only the rule labels -- never the value, which the caller already has and
which must not travel further (into logs, tool results sent to a model, or error reports).

"In the team directory" fails closed: the test is case-insensitive (on macOS and Windows
``Team/x.md`` *is* ``team/x.md``), and when the guard knows the memory root it also follows
symlinks, so ``notes/link/x.md`` with ``notes/link -> ../team`` is scanned too.

Private memory never leaves the machine, but it is recalled into prompts and read by tools, so
a credential there is worth knowing about: :func:`private_secret_guard` warns (or, with the
``privateSecrets: refuse`` setting, refuses). A warning names the file and the rule labels,
never the value; it is logged on the ``memdir.team.guard`` logger (the CLI prints it as one
``memdir: warning:`` line on stderr) and added to the notes of any
:func:`collect_credential_notes` block around the write, which is how the MCP tools and the
memory tool put it into their results.
"""

from __future__ import annotations

import functools
import logging
import os
import posixpath
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec

from memdir import pathsafe
from memdir.errors import PrivateSecretError, SecretFoundError, UnsafePathError
from memdir.team.secrets import labels, scan

if TYPE_CHECKING:
    from memdir.store import MemoryStore

WriteGuard = Callable[[str, str], None]
DEFAULT_TEAM_PREFIX = "team/"
PRIVATE_SECRET_POLICIES = ("warn", "refuse")
P = ParamSpec("P")
log = logging.getLogger(__name__)
_notes: ContextVar[list[str] | None] = ContextVar("memdir_credential_notes", default=None)


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


def private_credential_note(rel: str, found_labels: Sequence[str]) -> str:
    """The warning for a private file holding credentials: path and labels, never a value."""
    return (
        f"{rel} holds what looks like a credential ({', '.join(found_labels)}); private memory "
        "is not shared, but it is recalled into prompts -- consider removing it"
    )


def private_secret_guard(
    policy: str = "warn", *, team_prefix: str = DEFAULT_TEAM_PREFIX, root: Path | None = None
) -> WriteGuard:
    """A ``MemoryStore(guards=[...])`` guard for credentials in *private* memory.

    ``warn`` lets the write through and reports it (log + :func:`collect_credential_notes`);
    ``refuse`` raises :class:`~memdir.errors.PrivateSecretError` before anything is written.
    Team paths are left to :func:`team_secret_guard`, which always refuses.
    """
    if policy not in PRIVATE_SECRET_POLICIES:
        raise ValueError(f"privateSecrets must be one of {PRIVATE_SECRET_POLICIES}: {policy!r}")

    def guard(rel: str, text: str) -> None:
        if is_team_path(rel, team_prefix=team_prefix, root=root):
            return
        found = labels(scan(text))
        if not found:
            return
        if policy == "refuse":
            raise PrivateSecretError(found, path=rel)
        note = private_credential_note(rel, found)
        log.warning(note)
        notes = _notes.get()
        if notes is not None:
            notes.append(note)

    return guard


def write_guards(
    root: Path, *, private_secrets: str = "warn", team_prefix: str = DEFAULT_TEAM_PREFIX
) -> list[WriteGuard]:
    """The guards every memdir surface installs: team credentials refused, private ones noted."""
    return [
        team_secret_guard(team_prefix, root=root),
        private_secret_guard(private_secrets, team_prefix=team_prefix, root=root),
    ]


def guarded_store(
    root: Path, private_secrets: str = "warn", header_cache: Path | None = None
) -> MemoryStore:
    """A store for ``root`` with :func:`write_guards` installed: how every writer opens a memory
    dir (CLI, MCP, memory tool, hooks and their background workers, the runtime), so a setting
    such as ``privateSecrets: refuse`` holds on every path a write can take.

    Credentials are refused in ``team/``; in private memory they are noted in the command's
    result (``private_secrets="refuse"`` refuses them there too).
    """
    from memdir.store import MemoryStore

    root = Path(root).expanduser()
    return MemoryStore(
        root,
        guards=write_guards(root, private_secrets=private_secrets),
        header_cache=header_cache,
    )


@contextmanager
def collect_credential_notes() -> Iterator[list[str]]:
    """Collect the private-credential warnings of the writes made inside the block.

    A context variable, so concurrent requests (threads, asyncio tasks) each see only their own.
    """
    notes: list[str] = []
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def with_credential_notes(fn: Callable[P, dict[str, Any]]) -> Callable[P, dict[str, Any]]:
    """Decorate a tool returning a dict: add ``warnings`` when its writes held credentials."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        with collect_credential_notes() as notes:
            result = fn(*args, **kwargs)
        if notes:
            result = {**result, "warnings": list(dict.fromkeys(notes))}
        return result

    return run


__all__ = [
    "DEFAULT_TEAM_PREFIX",
    "PRIVATE_SECRET_POLICIES",
    "check_team_write",
    "collect_credential_notes",
    "guarded_store",
    "is_team_path",
    "private_credential_note",
    "private_secret_guard",
    "team_secret_guard",
    "with_credential_notes",
    "write_guards",
]
