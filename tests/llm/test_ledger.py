"""The host-model cost ledger: per-day and per-session spend, the budget, and its bookkeeping."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memdir.errors import BudgetExhaustedError
from memdir.llm import ledger as ledger_mod
from memdir.llm.ledger import CostLedger, day_of


class Clock:
    def __init__(self) -> None:
        self.now = time.mktime((2026, 3, 4, 12, 0, 0, 0, 0, -1))

    def __call__(self) -> float:
        return self.now


def test_spend_per_day_and_session_and_the_budget(tmp_path: Path) -> None:
    clock = Clock()
    ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=0.05, clock=clock)
    ledger.record({"session": "a", "cost_usd": 0.02, "input_tokens": 100, "output_tokens": 10})
    ledger.record({"session": "b", "cost_usd": 0.01, "input_tokens": 50, "output_tokens": 5})
    spend = ledger.spend()
    assert spend.calls == 2 and spend.cost_usd == pytest.approx(0.03)
    assert (spend.input_tokens, spend.output_tokens) == (150, 15)
    assert spend.by_session == {"a": pytest.approx(0.02), "b": pytest.approx(0.01)}
    assert ledger.spend(session="a").calls == 1
    assert ledger.check() == pytest.approx(0.02)
    ledger.record({"session": "a", "cost_usd": 0.02})
    with pytest.raises(BudgetExhaustedError, match=r"\$0\.05"):
        ledger.check()
    clock.now += 24 * 3600  # a new day: a new budget
    assert ledger.check() == pytest.approx(0.05)
    assert ledger.spend(day_of(clock.now - 24 * 3600)).calls == 3


def test_no_budget_never_refuses_and_zero_always_does(tmp_path: Path) -> None:
    assert CostLedger(tmp_path / "a.jsonl", budget_usd=None).check() is None
    with pytest.raises(BudgetExhaustedError):
        CostLedger(tmp_path / "b.jsonl", budget_usd=0.0).check()


def test_torn_lines_are_skipped_and_the_file_rotates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "costs.jsonl"
    ledger = CostLedger(path, budget_usd=1.0)
    ledger.record({"cost_usd": 0.25})
    with path.open("ab") as f:
        f.write(b'{"cost_usd": 9, "da')  # a killed writer's torn last line
    assert ledger.spend().cost_usd == pytest.approx(0.25)
    monkeypatch.setattr(ledger_mod, "MAX_BYTES", 10)
    ledger.record({"cost_usd": 0.25})  # rotates first: the old file is kept as costs.1.jsonl
    assert path.with_name("costs.1.jsonl").is_file()
    assert ledger.spend().cost_usd == pytest.approx(0.5)


def test_a_write_problem_is_logged_not_raised(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    ledger = CostLedger(blocker / "costs.jsonl", budget_usd=1.0)
    ledger.record({"cost_usd": 0.1})  # the parent is a file: cannot be written, must not raise
    assert ledger.spend().calls == 0
