"""The memory data model: four types, a parsed memory, and the header a scan sees.

A memory is one Markdown file: YAML frontmatter (``name``, ``description``, ``type``, optional
``created``/``updated`` absolute ISO dates, any extra keys kept verbatim) and a free-form body.
An unknown ``type`` value is kept as written (and reported by ``doctor``), never rewritten.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class MemoryType(enum.StrEnum):
    USER = "user"
    FEEDBACK = "feedback"
    PROJECT = "project"
    REFERENCE = "reference"

    @classmethod
    def parse(cls, value: object) -> MemoryType | None:
        """The enum member for ``value``, or None if it is not one of the four types."""
        if isinstance(value, str):
            try:
                return cls(value.strip().lower())
            except ValueError:
                return None
        return None


MEMORY_TYPES: tuple[str, ...] = tuple(t.value for t in MemoryType)


@dataclass(slots=True)
class Memory:
    """A parsed memory file. ``path`` is relative to the memory dir (POSIX separators)."""

    path: str
    name: str
    description: str
    type: str | None
    body: str
    created: str | None = None
    updated: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def memory_type(self) -> MemoryType | None:
        return MemoryType.parse(self.type)

    @property
    def title(self) -> str:
        return self.name or Path(self.path).stem

    def frontmatter(self) -> dict[str, Any]:
        """The frontmatter mapping in canonical key order (extra keys after)."""
        meta: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.type is not None:
            meta["type"] = self.type
        if self.created is not None:
            meta["created"] = self.created
        if self.updated is not None:
            meta["updated"] = self.updated
        for key, value in self.extra.items():
            if key not in meta:
                meta[key] = value
        return meta


@dataclass(frozen=True, slots=True)
class MemoryHeader:
    """What a scan knows about a memory without reading its body."""

    filename: str  # relative to the memory dir, POSIX separators
    path: Path  # absolute
    mtime: float  # seconds since the epoch
    description: str | None
    type: str | None
    name: str | None = None
    # validity frontmatter (expires, superseded_by, retired, retired_reason) as sorted pairs;
    # see memdir.validity. Empty for the vast majority of memories.
    validity: tuple[tuple[str, str], ...] = ()

    @property
    def mtime_ms(self) -> int:
        return int(self.mtime * 1000)
