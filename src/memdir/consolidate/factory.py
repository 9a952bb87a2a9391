"""Wiring for entry points: the gate, lock and snapshot store of a resolved project.

Library code receives these objects; only entry points (CLI, runtime, hooks) build them from
:class:`~memdir.config.Settings` and :class:`~memdir.paths.ResolvedPaths`.
"""

from __future__ import annotations

from pathlib import Path

from memdir.config import Settings
from memdir.consolidate.gate import DreamConfig, DreamGate
from memdir.consolidate.lock import ConsolidationLock
from memdir.consolidate.snapshot import DEFAULT_KEEP, Snapshots
from memdir.paths import ResolvedPaths
from memdir.store import MemoryStore


def dream_state_dir(paths: ResolvedPaths) -> Path:
    """Where dream keeps derived state (crash record, snapshots): the cache dir."""
    return paths.cache_dir / "dream"


def dream_enabled(settings: Settings) -> bool:
    """Automatic dreams: ``autoDreamEnabled`` and auto memory on (manual runs ignore this)."""
    return settings.auto_dream_enabled and settings.auto_memory_enabled


def consolidation_lock(paths: ResolvedPaths) -> ConsolidationLock:
    return ConsolidationLock(paths.memory_dir, state_dir=dream_state_dir(paths))


def dream_gate(
    settings: Settings, paths: ResolvedPaths, *, config: DreamConfig | None = None
) -> DreamGate:
    """The gate a runtime or hook checks at session start/end (cheap when closed)."""
    return DreamGate(
        consolidation_lock(paths),
        paths.transcripts_dir,
        enabled=dream_enabled(settings),
        config=config,
    )


def snapshots(store: MemoryStore, paths: ResolvedPaths, *, keep: int = DEFAULT_KEEP) -> Snapshots:
    return Snapshots(store, dream_state_dir(paths) / "snapshots", keep=keep)
