"""When a dream may run: enabled, time gate, scan throttle, session gate (then the lock).

Order and thresholds follow the reference: the cheapest checks first, so the common answer
("not yet") costs one ``stat`` of the lock file and no directory listing.

1. enabled (a setting, passed in by the entry point);
2. time gate: at least ``min_hours`` since the last consolidation (the lock file's mtime);
3. scan throttle: the transcripts dir is listed at most once per ``scan_throttle_s`` per gate
   object (a long-running agent calls the gate at every session start/end);
4. session gate: at least ``min_sessions`` transcripts touched since the last consolidation,
   the current session excluded (it is still being written and cannot review itself).

The lock is the caller's next step (:func:`memdir.consolidate.run.maybe_dream`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memdir.consolidate.lock import ConsolidationLock
from memdir.transcripts import list_sessions

GateReason = Literal["open", "disabled", "too-soon", "throttled", "too-few-sessions"]


@dataclass(frozen=True, slots=True)
class DreamConfig:
    min_hours: float = 24.0
    min_sessions: int = 5
    scan_throttle_s: float = 600.0


@dataclass(frozen=True, slots=True)
class GateResult:
    """The gate's answer. ``sessions`` are the ids a dream should review (newest first)."""

    open: bool
    reason: GateReason
    last_consolidated_at: float
    sessions: tuple[str, ...] = ()
    detail: str = ""


class DreamGate:
    """Decides whether an automatic dream is due for one memory dir."""

    def __init__(
        self,
        lock: ConsolidationLock,
        transcripts_dir: Path | None,
        *,
        enabled: bool,
        config: DreamConfig | None = None,
    ) -> None:
        self.lock = lock
        self.transcripts_dir = transcripts_dir
        self.enabled = enabled
        self.config = config or DreamConfig()
        self._last_scan = float("-inf")
        self._guard = threading.Lock()

    def check(self, now: float | None = None, current_session: str | None = None) -> GateResult:
        """Evaluate the gates in order; never raises for a missing dir or transcript."""
        moment = time.time() if now is None else now
        if not self.enabled:
            return GateResult(False, "disabled", 0.0, detail="auto dream is off (autoDreamEnabled)")
        cfg = self.config
        last = self.lock.last_consolidated_at()
        if moment - last < cfg.min_hours * 3600 and self.lock.recover():
            last = self.lock.last_consolidated_at()  # a killed dream's stamp was rolled back
        hours = (moment - last) / 3600
        if hours < cfg.min_hours:
            detail = f"last consolidation {hours:.1f} h ago (needs {cfg.min_hours:g} h)"
            return GateResult(False, "too-soon", last, detail=detail)
        with self._guard:
            since_scan = moment - self._last_scan
            if since_scan < cfg.scan_throttle_s:
                detail = (
                    f"sessions scanned {since_scan:.0f} s ago (every {cfg.scan_throttle_s:g} s)"
                )
                return GateResult(False, "throttled", last, detail=detail)
            self._last_scan = moment
        found: list[str] = []
        if self.transcripts_dir is not None:
            found = [
                s.session_id
                for s in list_sessions(self.transcripts_dir, since=last, exclude=current_session)
            ]
        if len(found) < cfg.min_sessions:
            detail = (
                f"{len(found)} sessions since the last consolidation (needs {cfg.min_sessions})"
            )
            return GateResult(False, "too-few-sessions", last, tuple(found), detail)
        return GateResult(True, "open", last, tuple(found), f"{len(found)} sessions to review")
