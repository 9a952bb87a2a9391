"""The backfill's progress: a redrawn bar on a terminal, one plain line per transcript elsewhere."""

from __future__ import annotations

import io
from pathlib import Path

from memdir.backfill import Item, Outcome, Plan, Report
from memdir.cli.backfill_view import Progress, plan_text, report_text


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _outcome(tmp_path: Path, n: int, status: str = "learnt") -> Outcome:
    item = Item("codex", tmp_path / f"rollout-{n}.jsonl", 10, 0, "new")
    written = [tmp_path / "memory" / "a.md"] if status == "learnt" else []
    return Outcome(
        item, status, written, reason="not a regular file" if status != "learnt" else None
    )


def test_a_terminal_gets_one_redrawn_bar(tmp_path: Path) -> None:
    stream = Terminal()
    progress = Progress(stream, tmp_path / "memory")
    for n in (1, 2):
        progress.update(n, 4, _outcome(tmp_path, n))
    progress.close()
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    assert "[############------------] 2/4" in text and "rollout-2.jsonl learnt +1" in text


def test_anything_else_gets_plain_lines(tmp_path: Path) -> None:
    stream = io.StringIO()
    progress = Progress(stream, tmp_path / "memory")
    progress.update(1, 2, _outcome(tmp_path, 1))
    progress.update(2, 2, _outcome(tmp_path, 2, "skipped"))
    progress.close()
    assert stream.getvalue().splitlines() == [
        "memdir: backfill 1/2 codex rollout-1.jsonl learnt +1",
        "memdir: backfill 2/2 codex rollout-2.jsonl skipped: not a regular file",
    ]


def test_plan_and_report_text(tmp_path: Path) -> None:
    learnt, skipped = _outcome(tmp_path, 1), _outcome(tmp_path, 2, "skipped")
    plan = Plan([learnt.item, skipped.item, _outcome(tmp_path, 3).item], 4, 7, [])
    text = plan_text(plan, "claude-code:haiku", "", 0.25)
    assert text.startswith("3 of 7 transcripts to learn from (4 already done)")
    assert "3 transcripts with claude-code:haiku" in text and "$0.25" in text
    assert "Offline rules (--offline): no cost." in plan_text(plan, None, "--offline", None)
    report = report_text(tmp_path / "memory", plan, Report([learnt, skipped], "interrupted"))
    assert "Learnt from 1 transcripts" in report and "  + a.md" in report
    assert "skipped: " in report and "Stopped (interrupted); 1 left" in report
