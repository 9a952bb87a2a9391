"""Which names in a memory dir are not memories to write: memdir's control files and hidden paths.

Invariant: every write surface (store API, CLI, MCP, memory-tool backend, extraction agent) goes
through :class:`~memdir.store.MemoryStore`, which asks this module first, so the policy holds
everywhere at once:

- **Hidden paths** (any segment starting with ``.``) are refused for every read, write, delete
  and rename through the store, and as team keys: memdir's lock file and crash marker,
  atomic-write temp files, caches, and whatever else lives hidden in a memory dir that is also a
  git checkout or a project (``.git/…``, ``.env``, editor swap files). Replacing the lock file's
  inode while another process holds it would defeat the lock; a ``.git/hooks`` file from a model
  would run code.
- **MEMORY.md is the index, not a memory.** Creating, saving or renaming a memory as
  ``MEMORY.md`` (any scope) is refused, and so is renaming the index away. Editing the index as
  text stays allowed: that is how the reference's model adds its pointer lines.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from memdir.errors import ReservedPathError
from memdir.index import ENTRYPOINT_NAME


def is_hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in PurePosixPath(rel).parts)


def is_index(rel: str) -> bool:
    return PurePosixPath(rel).name == ENTRYPOINT_NAME


def check_writable(rel: str) -> None:
    """Refuse a read, write, delete or rename of a hidden or control path through the store."""
    if is_hidden(rel):
        raise ReservedPathError(
            f"{rel!r} is a hidden path (memdir's lock, temp and cache files, .git, .env …), "
            "not a memory"
        )


def check_memory_target(rel: str) -> None:
    """Refuse ``rel`` as the file of a memory (create, save, rename source or target)."""
    check_writable(rel)
    if is_index(rel):
        raise ReservedPathError(
            f"{rel!r} is the index memdir maintains from the memory files, not a memory; "
            "choose another file name"
        )
