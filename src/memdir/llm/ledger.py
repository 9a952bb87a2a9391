"""The host-model cost ledger: what each call through the user's own agent CLI cost, and the
daily budget that stops further calls.

Invariants:
- One JSONL file per memdir home (``<memdir home>/host-model/costs.jsonl``), appended with the
  transcripts' single locked ``O_APPEND`` write, so parallel hook processes of every project add
  whole lines to one ledger: the budget is the user's, not a project's.
- The budget is checked before a call (:meth:`CostLedger.check` raises
  :class:`~memdir.errors.BudgetExhaustedError`, nothing is started) and the remainder is handed to
  the CLI as ``--max-budget-usd``, so one call cannot overspend by much either.
- Days are local calendar days. The file is derived bookkeeping: torn lines are skipped, past
  :data:`MAX_BYTES` it is rotated once (``costs.1.jsonl``), and a write problem is logged, never
  raised — a memory task is worth more than its receipt.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.errors import BudgetExhaustedError, MemdirError
from memdir.transcripts import append_entries, read_transcript

log = logging.getLogger(__name__)

MAX_BYTES = 2 * 1024 * 1024


def ledger_path(memdir_home: Path) -> Path:
    return memdir_home / "host-model" / "costs.jsonl"


def day_of(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


@dataclass(frozen=True)
class Spend:
    """Totals over a set of ledger rows."""

    calls: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    by_session: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cost_usd": round(self.cost_usd, 6),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "by_session": {k: round(v, 6) for k, v in self.by_session.items()},
        }


class CostLedger:
    """Records host-model calls and enforces ``budget_usd`` per local day (None: no cap)."""

    def __init__(
        self,
        path: Path,
        *,
        budget_usd: float | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.budget_usd = budget_usd
        self.clock = clock

    def rows(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for candidate in (self.path.with_name("costs.1.jsonl"), self.path):
            try:
                out += read_transcript(candidate).entries  # torn lines are skipped there
            except (MemdirError, OSError):
                continue
        return out

    def spend(self, day: str | None = None, *, session: str | None = None) -> Spend:
        """Totals of ``day`` (default today), optionally of one session."""
        day = day or day_of(self.clock())
        calls, cost, tin, tout = 0, 0.0, 0, 0
        by_session: dict[str, float] = {}
        for row in self.rows():
            if row.get("day") != day or (session is not None and row.get("session") != session):
                continue
            usd = _number(row.get("cost_usd"))
            calls, cost = calls + 1, cost + usd
            tin += int(_number(row.get("input_tokens")))
            tout += int(_number(row.get("output_tokens")))
            key = str(row.get("session") or "-")
            by_session[key] = by_session.get(key, 0.0) + usd
        return Spend(calls, cost, tin, tout, by_session)

    def remaining(self) -> float | None:
        if self.budget_usd is None:
            return None
        return max(self.budget_usd - self.spend().cost_usd, 0.0)

    def check(self) -> float | None:
        """The dollars left today (None: no cap); raises when none are."""
        left = self.remaining()
        if left is not None and left <= 0:
            raise BudgetExhaustedError(
                f"today's host-model budget (${self.budget_usd:.2f}, hostModelBudgetUsd) is spent"
            )
        return left

    def record(self, entry: Mapping[str, Any]) -> None:
        now = self.clock()
        row = {"ts": round(now, 3), "day": day_of(now), **entry}
        try:
            with contextlib.suppress(FileNotFoundError):
                if self.path.stat().st_size > MAX_BYTES:
                    os.replace(self.path, self.path.with_name("costs.1.jsonl"))
            append_entries(self.path, [row])
        except Exception as exc:  # bookkeeping must not fail the memory task
            log.warning("could not write the host-model ledger %s: %s", self.path, exc)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


__all__ = ["CostLedger", "Spend", "day_of", "ledger_path"]
