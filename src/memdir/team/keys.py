"""Hardened validation of team-memory keys: names that arrive from a sync server or a tool.

Invariant: :func:`validate_team_key` returns an absolute path that lies strictly inside the
team directory -- lexically, and physically after following every symlink that exists -- or
raises :class:`~memdir.errors.PathTraversalError`. A key is attacker-controlled (any member
of the team, or the server, can write one), so every doubt fails closed.

The checks run in the reference order: NUL byte; URL-decoding (malformed escapes are taken
raw) that reveals ``..`` or ``/``; NFKC folding that reveals ``..``, ``/``, ``\\`` or NUL
(full-width ``．．／``); a backslash; a leading ``/``. The logic itself lives in
:mod:`memdir.pathsafe` (one implementation for every path in memdir); this module binds it to
``PathTraversalError`` and adds the team-specific containment test. pathsafe is slightly
stricter than the reference: it also rejects empty keys, ``..`` segments before joining, a
drive-letter prefix and URL-encoded backslashes.

Before any of that, :func:`check_key_shape` refuses what no file system can take: a lone
surrogate (``\\ud800`` is legal JSON but not UTF-8, so every ``os`` call on it raises) and keys
over ``wire.MAX_KEY_BYTES`` or with a segment over ``wire.MAX_KEY_SEGMENT_BYTES`` bytes. So a
hostile key is one :class:`~memdir.errors.PathTraversalError`, never an ``OSError`` or
``UnicodeEncodeError`` from deep inside a path call.
"""

from __future__ import annotations

import os
from pathlib import Path

from memdir import pathsafe
from memdir.errors import PathTraversalError
from memdir.team import wire

_SHOWN_CHARS = 120


def check_key_shape(key: str) -> None:
    """PathTraversalError unless ``key`` is valid Unicode and short enough for a file system."""
    try:
        encoded = key.encode("utf-8")
    except UnicodeEncodeError:
        raise PathTraversalError(f"key {display_key(key)} is not valid Unicode") from None
    if len(encoded) > wire.MAX_KEY_BYTES:
        raise PathTraversalError(
            f"key {display_key(key)} is {len(encoded)} bytes; the limit is {wire.MAX_KEY_BYTES}"
        )
    if any(len(part) > wire.MAX_KEY_SEGMENT_BYTES for part in encoded.split(b"/")):
        raise PathTraversalError(
            f"key {display_key(key)} has a name over {wire.MAX_KEY_SEGMENT_BYTES} bytes"
        )


def display_key(key: str) -> str:
    """``key`` safe to print anywhere: escapes instead of surrogates and controls, and cut short.

    Keys come from other people; a lone surrogate would make writing the report fail, and a
    4 KB key would drown it.
    """
    shown = "".join(
        ch if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF else ascii(ch)[1:-1]
        for ch in key[:_SHOWN_CHARS]
    )
    return shown + "…" if len(key) > _SHOWN_CHARS else shown


def sanitize_key(key: str) -> str:
    """The key in normal POSIX form (``a//./b`` -> ``a/b``), or PathTraversalError."""
    check_key_shape(key)
    return pathsafe.check_relative(key, error=PathTraversalError)


def realpath_deepest_existing(path: Path) -> Path:
    """Realpath of the deepest existing ancestor of ``path`` with the missing tail re-joined.

    Dangling symlinks and loops raise; ENOTDIR/ENAMETOOLONG keep walking up; anything else
    fails closed.
    """
    return pathsafe.realpath_deepest_existing(path, error=PathTraversalError)


def validate_team_key(team_dir: Path, key: str) -> Path:
    """The absolute path for ``key`` under ``team_dir``, guaranteed not to escape it."""
    check_key_shape(key)
    return pathsafe.resolve_inside(team_dir, key, error=PathTraversalError)


def is_real_path_within_team_dir(team_dir: Path, real_path: Path) -> bool:
    """Whether an already-resolved path lies in (or is) the real team directory.

    A team directory that does not exist yet cannot have been redirected by a symlink, so
    every path counts as inside (the lexical check has already run). Any other error --
    including a team directory that is itself a dangling symlink -- answers False.
    """
    team = Path(os.path.abspath(team_dir))
    try:
        real_team = Path(os.path.realpath(team, strict=True))
    except FileNotFoundError:
        return not team.is_symlink()
    except (OSError, RuntimeError):
        return False
    return pathsafe.is_within(real_team, real_path)


def check_team_path(team_dir: Path, path: Path) -> Path:
    """Validate an absolute (or team-relative) path a tool wants to write under the team dir."""
    team = Path(os.path.abspath(team_dir))
    candidate = Path(path)
    if candidate.is_absolute():
        norm = Path(os.path.normpath(candidate))
        if norm == team or not pathsafe.is_within(team, norm):
            raise PathTraversalError(f"{path} is not inside the team directory")
        rel = norm.relative_to(team).as_posix()
    else:
        rel = candidate.as_posix()
    target = validate_team_key(team, rel)
    if not is_real_path_within_team_dir(team, realpath_deepest_existing(target)):
        raise PathTraversalError(f"{path} resolves outside the team directory")
    return target


__all__ = [
    "check_key_shape",
    "check_team_path",
    "display_key",
    "is_real_path_within_team_dir",
    "realpath_deepest_existing",
    "sanitize_key",
    "validate_team_key",
]
