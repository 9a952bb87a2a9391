"""One table of hostile names and planted links, shared by every surface's traversal tests.

Each surface (store API, CLI, MCP tools, memory-tool backend, team keys) runs *these* names, so a
new trick added here is tried everywhere at once. Import :data:`HOSTILE_NAMES` (refused by every
write surface), :data:`INDEX_AS_MEMORY` (refused where a *memory* is written) and
:func:`plant` (the symlinks out of the memory dir that readers must never follow).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CANARY = "CANARY-OUTSIDE-THE-MEMORY-DIR"


@dataclass(frozen=True)
class Hostile:
    name: str  # relative to the memory dir, as a user, model or server would send it
    why: str

    def __str__(self) -> str:
        return self.why


HOSTILE_NAMES: tuple[Hostile, ...] = (
    Hostile("../escape.md", "parent traversal"),
    Hostile("a/../../escape.md", "traversal after a segment"),
    Hostile("/etc/escape.md", "absolute path"),
    Hostile("..%2Fescape.md", "URL-encoded separator"),
    Hostile("%2e%2e/escape.md", "URL-encoded dots"),
    Hostile("\uff0e\uff0e/escape.md", "full-width dots (NFKC)"),
    Hostile("a\\..\\escape.md", "backslashes"),
    Hostile("nul\x00.md", "NUL byte"),
    Hostile("bad\udcff.md", "lone surrogate (non-UTF-8 argv)"),
    Hostile("x" * 253 + ".md", "256-byte name"),
    Hostile("d/" * 2100 + "x.md", "a path longer than the OS allows (ENAMETOOLONG)"),
    Hostile("out/escape.md", "through a symlinked dir out of the root"),
    Hostile("passwd.md", "a symlink to a file outside"),
    Hostile(".memdir.lock", "the lock file"),
    Hostile(".memdir.dirty", "the crash marker"),
    Hostile(".note.md.123-abcdef01.tmp", "a temp file"),
    Hostile(".git/hooks/pre-commit", "a git hook"),
    Hostile(".env", "a dotenv file"),
    Hostile("sub/.hidden.md", "a hidden memory-looking file"),
)

INDEX_AS_MEMORY: tuple[Hostile, ...] = (
    Hostile("MEMORY.md", "the index as a memory"),
    Hostile("team/MEMORY.md", "the team index as a memory"),
)


def plant(root: Path, outside: Path) -> dict[str, bytes]:
    """Create ``root`` with links out of it into ``outside``; return outside's snapshot."""
    root.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    secret = outside / "secret.md"
    secret.write_text(f"---\nname: secret\ndescription: {CANARY}\ntype: user\n---\n{CANARY}\n")
    (outside / "escape.md").write_text(f"{CANARY}\n")
    (root / "passwd.md").symlink_to(secret)
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "team").mkdir(exist_ok=True)  # the same links where team keys resolve
    (root / "team" / "passwd.md").symlink_to(secret)
    (root / "team" / "out").symlink_to(outside, target_is_directory=True)
    (root / ".memdir.lock").write_bytes(b"")
    return snapshot(outside)


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file below ``directory`` (links not followed) with its bytes."""
    found: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(directory):
        for name in files:
            path = Path(dirpath) / name
            found[path.relative_to(directory).as_posix()] = (
                b"<link>" if path.is_symlink() else path.read_bytes()
            )
    return found
