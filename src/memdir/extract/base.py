"""What the extraction service and its extractors exchange.

An extractor turns the conversation (and how many of its messages are new) into written memory
files. The service does not care how — an LLM agent in a sandbox (:mod:`memdir.extract.agent`)
or pattern rules (:mod:`memdir.extract.rule_extractor`) — only whether it succeeded (the cursor
advances only then) and which files it wrote (for the "Saved N memories" notice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from memdir.agent.runner import RunResult
from memdir.index import ENTRYPOINT_NAME
from memdir.llm.base import Message
from memdir.pathsafe import is_within

TEAM_DIR = "team"


class ConversationMessage(Protocol):
    """A message with a stable id: what the cursor points at (transcript entries qualify)."""

    @property
    def uuid(self) -> str: ...

    @property
    def message(self) -> Message: ...


@dataclass(frozen=True, slots=True)
class Turn:
    """The plain implementation of :class:`ConversationMessage`."""

    uuid: str
    message: Message


@dataclass
class ExtractionResult:
    """One extraction: files written (unique, MEMORY.md excluded) and removed, and whether it
    succeeded. ``notice`` is the user-facing line ("Saved 2 memories"), empty if nothing changed.
    """

    memory_dir: Path
    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    ok: bool = True
    error: str | None = None
    run: RunResult | None = None
    skipped: str | None = None  # why no extraction ran ("main agent wrote memory", ...)
    fallback: str | None = None  # set when the offline path ran because the model could not

    @property
    def team_count(self) -> int:
        team = self.memory_dir / TEAM_DIR
        return sum(1 for p in self.written if is_within(team, p))

    @property
    def notice(self) -> str:
        saved = saved_notice(len(self.written) - self.team_count, self.team_count)
        if not self.removed:
            return saved
        forgot = f"{len(self.removed)} {'memory' if len(self.removed) == 1 else 'memories'}"
        return f"{saved}; forgot {forgot}" if saved else f"Forgot {forgot}"


def saved_notice(private: int, team: int, *, verb: str = "Saved") -> str:
    """'Saved 2 memories · 1 team memory'; empty when nothing was saved."""
    parts = []
    if private:
        parts.append(f"{private} {'memory' if private == 1 else 'memories'}")
    if team:
        parts.append(f"{team} team {'memory' if team == 1 else 'memories'}")
    return f"{verb} {' · '.join(parts)}" if parts else ""


def unique_written(paths: Sequence[Path]) -> list[Path]:
    """Unique paths in first-seen order, without the MEMORY.md index files."""
    seen: dict[Path, None] = {}
    for path in paths:
        if path.name != ENTRYPOINT_NAME:
            seen.setdefault(path, None)
    return list(seen)


class Extractor(Protocol):
    async def extract(
        self, messages: Sequence[Message], *, new_messages: int
    ) -> ExtractionResult: ...
