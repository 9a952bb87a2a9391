"""Turn a chosen memory into the attachment the agent sees, within hard size caps.

Invariants: an attachment never exceeds 200 lines or 4,096 bytes of memory content (cut at the
last complete line, with a note pointing at the full file); its header (age, staleness note) is
computed once when the attachment is made, so a re-sent prompt stays byte-identical (cacheable).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from memdir.age import attachment_header
from memdir.errors import UnsafePathError
from memdir.pathsafe import open_inside, open_regular

MAX_ATTACHMENT_LINES = 200
MAX_ATTACHMENT_BYTES = 4_096


@dataclass(frozen=True, slots=True)
class RelevantMemory:
    """A memory recall chose: absolute path, path relative to the memory dir, mtime."""

    path: Path
    filename: str
    mtime: float
    score: float | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Attachment:
    """What is injected into the conversation for one memory."""

    path: Path
    filename: str
    header: str
    content: str
    truncated: bool

    @property
    def text(self) -> str:
        return f"{self.header}\n{self.content}"

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))


def cap_content(text: str, path: Path) -> tuple[str, bool]:
    """Keep at most 200 lines / 4,096 UTF-8 bytes, ending at a complete line."""
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    used = 0
    truncated = len(lines) > MAX_ATTACHMENT_LINES
    for line in lines[:MAX_ATTACHMENT_LINES]:
        size = len(line.encode("utf-8"))
        if used + size > MAX_ATTACHMENT_BYTES:
            truncated = True
            break
        kept.append(line)
        used += size
    content = "".join(kept)
    if truncated:
        if content and not content.endswith("\n"):
            content += "\n"
        content += (
            f"[Memory truncated: only the first {len(kept)} lines are shown. "
            f"Use the Read tool to see the full file at {path}]"
        )
    return content, truncated


def _read_prefix(path: Path, filename: str) -> str:
    # Read a little more than the cap so the line cut is exact, never the whole of a huge file.
    # The memory dir is the path minus its relative name: a file swapped for a link out of it
    # after it was indexed is refused here too (UnsafePathError), like every other reader.
    full = str(path)
    if filename and full.endswith(filename):
        root = os.path.realpath(full[: len(full) - len(filename)] or ".")
        fd = open_inside(Path(root), path)
    else:  # no root to check against; still never wait on a FIFO put in the memory's place
        fd = open_regular(path)
    with open(fd, "rb") as fh:
        data = fh.read(MAX_ATTACHMENT_BYTES * 2)
    return data.decode("utf-8", errors="replace")


def surface(memory: RelevantMemory, *, now: float | None = None) -> Attachment | None:
    """Build the attachment for ``memory``; None if the file vanished or is unreadable."""
    try:
        raw = _read_prefix(memory.path, memory.filename)
    except (OSError, UnsafePathError):
        return None
    content, truncated = cap_content(raw, memory.path)
    header = attachment_header(str(memory.path), memory.mtime, time.time() if now is None else now)
    return Attachment(memory.path, memory.filename, header, content, truncated)
