"""What a :class:`~memdir.runtime.lifecycle.MemoryRuntime` is configured with and reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ExtractionMode = Literal["auto", "llm", "rules", "off"]


@dataclass(frozen=True)
class RuntimeOptions:
    """Limits and switches; every time is in seconds."""

    extraction: ExtractionMode = "auto"
    extract_every_n_turns: int = 1
    session_memory: bool = True
    compaction: bool = True
    dream: bool = True
    recall_wait: float = 0.0
    recall_timeout: float = 15.0
    drain_timeout: float = 60.0
    team_pull_timeout: float = 10.0
    team_debounce: float = 2.0
    dream_timeout: float = 600.0
    warmup_timeout: float = 120.0
    model_name: str = "memdir"
    search_past_context: bool = True
    evidence: bool = True  # check recalled memories against the project's code (memdir.evidence)


@dataclass
class StartReport:
    system_prompt: str
    notices: list[str] = field(default_factory=list)
    snapshot: str | None = None  # none / initialize / prompt-update, when an agent type is set


@dataclass
class EndReport:
    drained: list[str] = field(default_factory=list)
    timed_out: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


__all__ = ["EndReport", "ExtractionMode", "RuntimeOptions", "StartReport"]
