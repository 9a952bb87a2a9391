"""maybe_dream: gates -> lock -> dream -> release, or roll the lock back.

Invariant: the lock's last-consolidated time moves forward only when a dream finished; a
failure, an exception or a cancel (``asyncio.CancelledError``, Ctrl-C) puts the prior time back,
so the next session tries again instead of waiting a day. A ``kill -9`` cannot run this code;
:meth:`ConsolidationLock.recover` covers it at the next gate check.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Literal

from memdir.consolidate.base import Dreamer, DreamReport
from memdir.consolidate.gate import DreamGate, GateResult
from memdir.transcripts import list_sessions

OutcomeReason = Literal["ran", "gate-closed", "locked", "failed"]


@dataclass(frozen=True)
class DreamOutcome:
    """Whether a dream ran, why (not), and its report."""

    ran: bool
    reason: OutcomeReason
    gate: GateResult | None = None
    report: DreamReport | None = None

    @property
    def notice(self) -> str:
        return self.report.notice if self.report is not None and self.report.ok else ""


async def maybe_dream(
    gate: DreamGate,
    dreamer: Dreamer,
    *,
    now: float | None = None,
    current_session: str | None = None,
    force: bool = False,
) -> DreamOutcome:
    """Run ``dreamer`` if the gates are open (or ``force``) and the lock is free.

    ``force`` (a manual ``memdir dream``) skips the gates, never the lock: a live dream in
    another process is always respected.
    """
    moment = time.time() if now is None else now
    result: GateResult | None = None
    if force:
        gate.lock.recover()
        sessions: tuple[str, ...] = ()
        if gate.transcripts_dir is not None:
            since = gate.lock.last_consolidated_at()
            listed = list_sessions(gate.transcripts_dir, since=since, exclude=current_session)
            sessions = tuple(s.session_id for s in listed)
    else:
        result = gate.check(moment, current_session)
        if not result.open:
            return DreamOutcome(False, "gate-closed", result)
        sessions = result.sessions
    prior = gate.lock.try_acquire(moment)
    if prior is None:
        return DreamOutcome(False, "locked", result)
    try:
        report = await dreamer.dream(sessions)
    except BaseException:
        gate.lock.rollback(prior)
        raise
    if not report.ok:
        gate.lock.rollback(prior)
        return DreamOutcome(False, "failed", result, report)
    gate.lock.release()
    return DreamOutcome(True, "ran", result, report)


def maybe_dream_sync(
    gate: DreamGate,
    dreamer: Dreamer,
    *,
    now: float | None = None,
    current_session: str | None = None,
    force: bool = False,
) -> DreamOutcome:
    """:func:`maybe_dream` for callers without an event loop (CLI, hooks)."""
    return asyncio.run(
        maybe_dream(gate, dreamer, now=now, current_session=current_session, force=force)
    )
