"""What the host dialects share about the host's own files: reading a JSONL transcript without
raising, one memdir entry from a host's message, and the refusal of a second copy of a file
memdir owns whole (an extension or plugin at user and project scope would run twice)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.errors import InstallError, MemdirError

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Locations
    from memdir.transcripts import Entry


def jsonl_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a host's JSONL file, in order ([] when it cannot be read)."""
    from memdir.transcripts import read_transcript

    try:
        return read_transcript(path).entries
    except (MemdirError, OSError, ValueError, RecursionError):
        return []


def entry(kind: str, uuid: str, stamp: Any, blocks: list[dict[str, Any]]) -> Entry:
    """One memdir transcript entry (Claude Code's shape) from a host's message."""
    return {
        "type": kind,
        "uuid": uuid,
        "timestamp": stamp if isinstance(stamp, str) else "",
        "message": {"role": kind, "content": blocks},
    }


def refuse_second_scope(
    title: str, name: str, scope: str, loc: Locations, path_of: Callable[[str, Locations], Path]
) -> None:
    """InstallError when memdir's file for host ``name`` is already at the other scope."""
    other = "user" if scope == "project" else "project"
    path = path_of(other, loc)
    if path.is_file():
        raise InstallError(
            f"memdir's {title} file is already installed at {path}; {title} would run both: "
            f"`memdir uninstall {name} --{other}` first"
        )


__all__ = ["entry", "jsonl_records", "refuse_second_scope"]
