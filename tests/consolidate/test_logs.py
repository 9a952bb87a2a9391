from __future__ import annotations

import datetime as dt
from pathlib import Path

from memdir.consolidate.logs import DistilledRecord
from memdir.daily_log import append_log

WHEN = dt.datetime(2026, 11, 30, 14, 5).astimezone()


def test_distilled_record_marks_bullets_once(tmp_path: Path) -> None:
    append_log(tmp_path, "one", now=WHEN)
    append_log(tmp_path, "two", now=WHEN)
    record = DistilledRecord(tmp_path)
    first = record.pending()
    assert [b.text for b in first] == ["one", "two"]
    record.mark(first)
    record.save()
    append_log(tmp_path, "three", now=WHEN)
    assert [b.text for b in DistilledRecord(tmp_path).pending()] == ["three"]
    (tmp_path / "logs" / ".distilled.json").write_text("{not json")
    assert len(DistilledRecord(tmp_path).pending()) == 3  # damaged record: distil again, safely
