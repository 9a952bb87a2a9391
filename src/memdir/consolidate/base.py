"""What a dream returns, and the one method every dreamer (offline rules or an LLM) provides."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

DreamMode = Literal["offline", "llm"]


@dataclass
class DreamReport:
    """One dream: which memory files it changed (relative paths; MEMORY.md not counted).

    ``snapshot`` names the snapshot taken before the first change (``memdir dream undo``
    restores it); None when nothing changed. ``notice`` is the user-facing line.
    """

    mode: DreamMode
    ok: bool = True
    error: str | None = None
    changed: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)  # contradictions left for a person
    snapshot: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def improved(self) -> int:
        return len(dict.fromkeys([*self.changed, *self.retired]))

    @property
    def notice(self) -> str:
        """'Improved 3 memories' (the reference's wording for a dream); empty if none."""
        n = self.improved
        return f"Improved {n} {'memory' if n == 1 else 'memories'}" if n else ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "ok": self.ok,
            "error": self.error,
            "changed": self.changed,
            "retired": self.retired,
            "flagged": self.flagged,
            "snapshot": self.snapshot,
            "notice": self.notice,
            **self.details,
        }


class Dreamer(Protocol):
    """Consolidates one memory dir; ``sessions`` are the transcripts the gate counted."""

    async def dream(self, sessions: Sequence[str]) -> DreamReport: ...
