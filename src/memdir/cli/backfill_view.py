"""How ``memdir backfill`` shows itself: the plan, a progress bar, the report.

The bar is drawn on stderr only when stderr is a terminal (one line redrawn with ``\\r``);
anywhere else each transcript is one plain line, so a log or a CI job reads it as it goes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TextIO

from memdir.backfill import Outcome, Plan, Report, estimate

BAR_WIDTH = 24


class Progress:
    def __init__(self, stream: TextIO, memory_dir: Path) -> None:
        self.stream = stream
        self.memory_dir = memory_dir
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self._drawn = False

    def update(self, number: int, total: int, outcome: Outcome) -> None:
        what = outcome.status
        if outcome.written:
            what += f" +{len(outcome.written)}"
        if outcome.reason and outcome.status != "learnt":
            what += f": {outcome.reason}"
        name = f"{outcome.item.host} {outcome.item.path.name}"
        if not self.tty:
            self.stream.write(f"memdir: backfill {number}/{total} {name} {what}\n")
            self.stream.flush()
            return
        filled = BAR_WIDTH * number // max(total, 1)
        rate = number / max(time.monotonic() - self.started, 1e-6)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        line = f"[{bar}] {number}/{total} {rate:.1f}/s {name[:40]} {what[:30]}"
        self.stream.write("\r\x1b[2K" + line)
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()


def plan_text(plan: Plan, spec: str | None, offline_why: str, left: float | None) -> str:
    lines = [
        f"{len(plan.items)} of {plan.total} transcripts to learn from "
        f"({plan.done} already done), oldest first:"
    ]
    for item in plan.items:
        when = item.modified.strftime("%Y-%m-%d %H:%M")
        lines.append(f"  {when}  {item.host:<11} {item.size:>10,} B  {item.state:<5} {item.path}")
    if spec is None:
        lines.append(f"Offline rules ({offline_why or 'no model'}): no cost.")
    else:
        lines.append(estimate(spec, (i.size for i in plan.items)).line(spec))
        if left is not None:
            lines.append(f"Today's host-model budget left: ${left:.2f} (the run stops there).")
    for host, path, why in plan.skipped:
        lines.append(f"  not readable: {host} {path}: {why}")
    return "\n".join(lines)


def report_text(memory_dir: Path, plan: Plan, report: Report) -> str:
    written = sorted({p for o in report.outcomes for p in o.written})
    lines = [
        f"Learnt from {report.count('learnt')} transcripts "
        f"({report.count('nothing new')} had nothing new, {report.count('skipped')} skipped, "
        f"{report.count('failed')} failed); {len(written)} memories written or updated."
    ]
    for path in written:
        shown = path.relative_to(memory_dir) if path.is_relative_to(memory_dir) else path
        lines.append(f"  + {shown}")
    for o in report.outcomes:
        if o.status in ("skipped", "failed"):
            lines.append(f"  {o.status}: {o.item.path}: {o.reason}")
    left = len(plan.items) - len(report.outcomes)
    if report.stopped:
        lines.append(f"Stopped ({report.stopped}); {left} left: run `memdir backfill` again.")
    return "\n".join(lines)


__all__ = ["Progress", "plan_text", "report_text"]
