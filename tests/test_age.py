from __future__ import annotations

import pytest

from memdir.age import DAY_SECONDS, attachment_header, freshness_note, memory_age, memory_age_days

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("age_seconds", "days", "text"),
    [
        (0, 0, "today"),
        (DAY_SECONDS - 1, 0, "today"),
        (DAY_SECONDS, 1, "yesterday"),
        (2 * DAY_SECONDS + 5, 2, "2 days ago"),
        (-3600, 0, "today"),  # clock skew never gives a negative age
    ],
)
def test_age(age_seconds: float, days: int, text: str) -> None:
    assert memory_age_days(NOW - age_seconds, NOW) == days
    assert memory_age(NOW - age_seconds, NOW) == text


def test_staleness_note_only_after_one_day() -> None:
    assert freshness_note(NOW - DAY_SECONDS, NOW) is None
    note = freshness_note(NOW - 3 * DAY_SECONDS, NOW)
    assert note is not None and "3 days old" in note and "Verify" in note


def test_attachment_header_fresh_and_stale() -> None:
    assert attachment_header("/m/a.md", NOW, NOW) == "Memory (saved today): /m/a.md:"
    stale = attachment_header("/m/a.md", NOW - 10 * DAY_SECONDS, NOW)
    assert stale.startswith("<system-reminder>") and stale.endswith("\n\nMemory: /m/a.md:")
