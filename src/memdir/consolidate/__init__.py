"""Consolidation ("dream"): gates, the consolidation lock, offline and LLM dreams, snapshots/undo.

Entry points call :func:`maybe_dream` (gates -> lock -> dream -> release or rollback) with a
:class:`DreamGate` and a :class:`Dreamer`; ``memdir dream`` forces a run past the gates.
See ``docs/dream.md``.
"""

from memdir.consolidate.base import Dreamer, DreamReport
from memdir.consolidate.gate import DreamConfig, DreamGate, GateResult
from memdir.consolidate.lock import ConsolidationLock, LockState
from memdir.consolidate.run import DreamOutcome, maybe_dream, maybe_dream_sync

__all__ = [
    "ConsolidationLock",
    "DreamConfig",
    "DreamGate",
    "DreamOutcome",
    "DreamReport",
    "Dreamer",
    "GateResult",
    "LockState",
    "maybe_dream",
    "maybe_dream_sync",
]
