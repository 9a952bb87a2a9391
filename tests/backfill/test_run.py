"""The backfill runner: whole sessions through the extraction write path, one lesson one memory,
a cursor that makes every run pick up where the last one ended."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memdir.backfill import Backfill, BackfillCursor, Plan, Report, make_plan
from memdir.backfill.run import ExtractorFor, _window
from memdir.errors import BudgetExhaustedError, NotRegularFileError
from memdir.extract.agent import AgentExtractor
from memdir.extract.base import ExtractionResult, Extractor
from memdir.extract.form import MAX_EVIDENCE
from memdir.extract.rule_extractor import RuleExtractor
from memdir.llm.base import Completion, Message, TextBlock, ToolResultBlock
from memdir.llm.scripted import ScriptedProvider
from memdir.store import MemoryStore
from memdir.transcripts import Entry, read_transcript
from tests.backfill.sessions import DAY0, claude_dir, claude_session

LESSON = "Always run the tests with `make check`, never plain pytest."


class Files:
    """A source over plain memdir-shaped files in one dir (what a dialect source does)."""

    host = "claude-code"

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def transcripts(self) -> Sequence[Path]:
        return sorted(self.directory.glob("*.jsonl"))

    def read(self, path: Path) -> list[Entry]:
        return read_transcript(path).entries


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memory")


def rules(store: MemoryStore) -> ExtractorFor:
    return lambda when: RuleExtractor(store, clock=lambda: when)


def run(
    store: MemoryStore, source: Files, cursor: BackfillCursor, **kw: Any
) -> tuple[Plan, Report]:
    import asyncio

    plan = make_plan([source], cursor)
    return plan, asyncio.run(Backfill(rules(store), cursor, [source], **kw).run(plan))


def test_ten_sessions_with_one_lesson_end_as_one_memory_with_ten_sightings(
    home: Path, tmp_path: Path, store: MemoryStore
) -> None:
    for n in range(10):
        when = DAY0 + dt.timedelta(days=n)
        claude_session(
            home, tmp_path, [("user", f"Fix issue #{n}. {LESSON}"), ("assistant", "ok")], when=when
        )
    source = Files(claude_dir(home, tmp_path))
    _plan, report = run(store, source, BackfillCursor(tmp_path / "cursor.json"))
    assert [o.status for o in report.outcomes] == ["learnt"] * 10
    files = [h.filename for h in store.list()]
    assert len(files) == 1, files
    body = store.read(files[0]).body
    # each session updated it with a sighting dated the day it happened; the newest are kept
    days = [f"2026-03-{d:02d}" for d in range(2, 12)]
    kept = [day for day in days if f"- {day}:" in body]
    assert kept == days[-MAX_EVIDENCE:], body
    assert report.outcomes[0].written and all(o.written for o in report.outcomes[1:])


def test_a_habit_asked_once_in_two_past_sessions_is_learnt_dated_by_its_sessions(
    home: Path, tmp_path: Path, store: MemoryStore
) -> None:
    for n, ask in enumerate(["commit, push and open a draft PR", "push, raise a draft PR"]):
        turns = [("user", f"Fix issue #{n}."), ("assistant", "ok"), ("user", ask)]
        claude_session(home, tmp_path, turns, when=DAY0 + dt.timedelta(days=2 * n))
    _plan, report = run(store, Files(claude_dir(home, tmp_path)), BackfillCursor(tmp_path / "c"))
    assert [o.status for o in report.outcomes] == ["learnt"] * 2
    [header] = store.list()
    body = store.read(header.filename).body
    assert "- 2026-03-04: the user asked" in body and "in a session of 2026-03-02, and" in body
    logs = sorted(p.name for p in (store.root / "logs").rglob("*.md"))
    assert logs == ["2026-03-02.md", "2026-03-04.md"]  # each noted on its session's day


def test_oldest_first_and_a_second_run_does_nothing(
    home: Path, tmp_path: Path, store: MemoryStore
) -> None:
    late = claude_session(home, tmp_path, [("user", "ok")], when=DAY0 + dt.timedelta(days=3))
    early = claude_session(home, tmp_path, [("user", LESSON)], when=DAY0)
    source, cursor = Files(claude_dir(home, tmp_path)), BackfillCursor(tmp_path / "c.json")
    plan, _report = run(store, source, cursor)
    assert [i.path for i in plan.items] == [early, late]
    again = make_plan([source], BackfillCursor(tmp_path / "c.json"))  # as a new process reads it
    assert again.items == [] and again.done == 2 and again.total == 2


def test_a_grown_session_is_read_again_for_its_new_messages_only(
    home: Path, tmp_path: Path, store: MemoryStore
) -> None:
    path = claude_session(home, tmp_path, [("user", LESSON), ("assistant", "ok")])
    source, cursor = Files(claude_dir(home, tmp_path)), BackfillCursor(tmp_path / "c.json")
    run(store, source, cursor)
    before = store.read(store.list()[0].filename).body
    # the session goes on a week later: a new statement, the old one not repeated
    more = claude_session(
        home,
        tmp_path,
        [("user", "Remember that the staging database is Postgres 16.")],
        when=DAY0 + dt.timedelta(days=7),
    )
    path.write_bytes(path.read_bytes() + more.read_bytes())
    more.unlink()
    plan, report = run(store, source, cursor)
    assert [(i.path, i.state) for i in plan.items] == [(path, "grown")]
    assert [o.status for o in report.outcomes] == ["learnt"]
    names = sorted(h.filename for h in store.list())
    assert len(names) == 2
    lesson = next(n for n in names if "make" in n or "test" in n)
    assert store.read(lesson).body == before  # the old message was not learnt twice


def test_a_stop_request_is_honoured_between_transcripts(
    home: Path, tmp_path: Path, store: MemoryStore
) -> None:
    for n in range(5):
        claude_session(home, tmp_path, [("user", LESSON)], when=DAY0 + dt.timedelta(days=n))
    source, cursor = Files(claude_dir(home, tmp_path)), BackfillCursor(tmp_path / "c.json")
    seen: list[int] = []
    _, report = run(
        store,
        source,
        cursor,
        should_stop=lambda: len(seen) >= 2,
        on_progress=lambda n, total, outcome: seen.append(n),
    )
    assert report.stopped == "interrupted" and len(report.outcomes) == 2
    assert len(BackfillCursor(tmp_path / "c.json").done) == 2
    _, rest = run(store, source, BackfillCursor(tmp_path / "c.json"))
    assert len(rest.outcomes) == 3 and rest.stopped is None


def test_a_spent_budget_stops_the_run_and_leaves_the_rest(
    home: Path, tmp_path: Path, store: MemoryStore
) -> None:
    claude_session(home, tmp_path, [("user", LESSON)])

    def spent() -> None:
        raise BudgetExhaustedError("today's host-model budget ($0.50, hostModelBudgetUsd) is spent")

    _, report = run(
        store,
        Files(claude_dir(home, tmp_path)),
        BackfillCursor(tmp_path / "c.json"),
        check_budget=spent,
    )
    assert report.outcomes == [] and "budget" in (report.stopped or "")
    assert not (tmp_path / "c.json").exists() and store.list() == []


def test_an_unreadable_transcript_is_skipped_once_a_failed_extraction_is_retried(
    home: Path, tmp_path: Path, store: MemoryStore
) -> None:
    bad = claude_session(home, tmp_path, [("user", "x")])
    good = claude_session(home, tmp_path, [("user", LESSON)], when=DAY0 + dt.timedelta(days=1))

    class Refusing(Files):
        def read(self, path: Path) -> list[Entry]:
            if path == bad:
                raise NotRegularFileError(f"{path} is not a regular file")
            return super().read(path)

    class Failing:
        async def extract(
            self, messages: Sequence[Message], *, new_messages: int
        ) -> ExtractionResult:
            return ExtractionResult(store.root, ok=False, error="model said no")

    import asyncio

    source, cursor = Refusing(claude_dir(home, tmp_path)), BackfillCursor(tmp_path / "c.json")
    plan = make_plan([source], cursor)
    report = asyncio.run(Backfill(lambda when: Failing(), cursor, [source]).run(plan))
    assert [(o.item.path, o.status) for o in report.outcomes] == [
        (bad, "skipped"),
        (good, "failed"),
    ]
    assert "not a regular file" in (report.outcomes[0].reason or "")
    again = make_plan([source], BackfillCursor(tmp_path / "c.json"))
    assert [i.path for i in again.items] == [good]  # the skip is remembered, the failure is not


def test_the_model_run_sees_the_session_dated_and_windowed(
    home: Path, tmp_path: Path, store: MemoryStore
) -> None:
    long = [("user", f"step {n}: " + "x" * 900) for n in range(40)] + [("user", LESSON)]
    claude_session(home, tmp_path, long, when=DAY0 + dt.timedelta(days=30))
    memory = store.root / "feedback_make_check.md"
    content = (
        "---\nname: Run tests with make check\ndescription: the tests run with make check\n"
        "type: feedback\n---\nUse `make check`.\n"
    )
    provider = ScriptedProvider(
        [
            Completion.from_tool_calls([("Write", {"file_path": str(memory), "content": content})]),
            Completion.from_text("Saved."),
        ]
    )

    def model(when: dt.datetime) -> Extractor:
        return AgentExtractor(provider, store, clock=lambda: when)

    import asyncio

    source, cursor = Files(claude_dir(home, tmp_path)), BackfillCursor(tmp_path / "c.json")
    plan = make_plan([source], cursor)
    report = asyncio.run(Backfill(model, cursor, [source], window_chars=10_000).run(plan))
    assert [o.status for o in report.outcomes] == ["learnt"] and memory.exists()
    first = provider.requests[0]
    text = "\n".join(m.text for m in first.messages if m.role == "user")
    assert "Today is 2026-04-01" in text  # the session's day, not the day of the backfill
    steps = [n for n in range(40) if f"step {n}:" in text]
    assert LESSON in text and steps == list(range(40 - len(steps), 40))  # the newest part
    assert 0 < len(steps) <= 10_000 // 900


@pytest.mark.parametrize(
    ("sizes", "limit", "kept"),
    [
        ([10, 10, 10], 100, 3),
        ([10, 10, 10], 20, 2),
        ([10, 10, 10], 5, 1),  # one message larger than the window: its tail
    ],
)
def test_window_keeps_the_newest_messages_within_the_limit(
    sizes: list[int], limit: int, kept: int
) -> None:
    messages = [Message("user", [TextBlock(str(n) * s)]) for n, s in enumerate(sizes)]
    window = _window(messages, limit)
    assert len(window) == kept and window[-1].text.endswith(str(len(sizes) - 1))
    assert sum(len(m.text) for m in window) <= limit


def test_window_never_opens_on_a_tool_result() -> None:
    messages = [
        Message("user", [TextBlock("a" * 50)]),
        Message("user", [ToolResultBlock("t1", "b" * 5)]),
        Message("user", [TextBlock("c" * 5)]),
    ]
    assert [m.text for m in _window(messages, 12)] == ["c" * 5]


def test_a_host_model_that_goes_away_falls_back_offline_and_a_spent_budget_stops_the_run(
    home: Path, tmp_path: Path, store: MemoryStore
) -> None:
    """The hooks' composition (model agent, offline fallback, session rules beside it): the first
    session meets a missing CLI and is learnt offline; the second meets a spent budget (offline
    too); then the budget check stops the run before the third."""
    import asyncio

    from memdir.errors import HostModelUnavailableError
    from memdir.extract.fallback import FallbackExtractor
    from memdir.extract.session_pass import WithSessionLessons

    for n in range(3):
        claude_session(home, tmp_path, [("user", LESSON)], when=DAY0 + dt.timedelta(days=n))
    spent = BudgetExhaustedError("today's host-model budget ($1.00, hostModelBudgetUsd) is spent")
    provider = ScriptedProvider([HostModelUnavailableError("`claude` is not on PATH"), spent])
    checks: list[int] = []

    def check() -> None:
        checks.append(1)
        if len(checks) > 2:
            raise spent

    def model(when: dt.datetime) -> Extractor:
        rules = RuleExtractor(store, clock=lambda: when)
        agent = FallbackExtractor(AgentExtractor(provider, store, clock=lambda: when), rules)
        return WithSessionLessons(agent, store, clock=lambda: when)

    source, cursor = Files(claude_dir(home, tmp_path)), BackfillCursor(tmp_path / "c.json")
    plan = make_plan([source], cursor)
    report = asyncio.run(Backfill(model, cursor, [source], check_budget=check).run(plan))
    assert [o.status for o in report.outcomes] == ["learnt", "learnt"]
    assert "not on PATH" in (report.outcomes[0].reason or "")
    assert "budget" in (report.outcomes[1].reason or "") and "budget" in (report.stopped or "")
    assert len(store.list()) == 1 and len(BackfillCursor(tmp_path / "c.json").done) == 2
