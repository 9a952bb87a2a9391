from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.consolidate.dates import absolutize

WED = dt.date(2026, 11, 25)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We shipped yesterday.", "We shipped yesterday (2026-11-24)."),
        ("Tomorrow is the freeze", "Tomorrow (2026-11-26) is the freeze"),
        ("met this morning", "met this morning (2026-11-25)"),
        ("demo next Friday", "demo next Friday (2026-11-27)"),
        ("review last Monday", "review last Monday (2026-11-23)"),
        ("review last Wednesday", "review last Wednesday (2026-11-18)"),
        ("next Wednesday", "next Wednesday (2026-12-02)"),
        ("in 3 days", "in 3 days (2026-11-28)"),
        ("two weeks ago", "two weeks ago (2026-11-11)"),
        ("a day ago", "a day ago (2026-11-24)"),
        ("next week", "next week (week of 2026-11-30)"),
        ("last month", "last month (2026-10)"),
        ("this year", "this year (2026)"),
        ("today's standup", "today's standup"),
        ("`yesterday` in code", "`yesterday` in code"),
        ("on Friday", "on Friday"),
        ("yesterday (2026-11-24) already done", "yesterday (2026-11-24) already done"),
        ("昨日 ではなく yesterday だった", "昨日 ではなく yesterday (2026-11-24) だった"),
    ],
)
def test_phrases(text: str, expected: str) -> None:
    assert absolutize(text, WED)[0] == expected


def test_january_last_month_wraps_the_year() -> None:
    assert absolutize("last month", dt.date(2026, 1, 5))[0] == "last month (2025-12)"


def test_fenced_code_is_left_alone() -> None:
    body = "Deployed yesterday.\n```\necho yesterday\n```\n"
    fixed, fixes = absolutize(body, WED)
    assert fixed == "Deployed yesterday (2026-11-24).\n```\necho yesterday\n```\n"
    assert [f.absolute for f in fixes] == ["2026-11-24"]


@given(st.text(alphabet=st.sampled_from(list("abc yesterday next week Friday in 2 days\n`"))))
def test_idempotent(text: str) -> None:
    once, _ = absolutize(text, WED)
    twice, fixes = absolutize(once, WED)
    assert twice == once and fixes == []
