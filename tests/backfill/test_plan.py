"""The plan: this project's transcripts oldest first, minus what is done, within --since/--limit."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from memdir.backfill import BackfillCursor, Done, make_plan
from memdir.transcripts import Entry
from tests.backfill.sessions import DAY0, stamp_file


class Listed:
    def __init__(self, host: str, paths: Sequence[Path]) -> None:
        self.host = host
        self.paths = list(paths)

    def transcripts(self) -> Sequence[Path]:
        return self.paths

    def read(self, path: Path) -> list[Entry]:
        raise AssertionError("the plan never reads a transcript")


def _files(tmp_path: Path, days: Sequence[int]) -> list[Path]:
    out = []
    for day in days:
        path = tmp_path / f"d{day}.jsonl"
        path.write_text("{}\n")
        stamp_file(path, DAY0 + dt.timedelta(days=day))
        out.append(path)
    return out


def test_oldest_first_across_hosts_since_and_limit(tmp_path: Path) -> None:
    a, b, c, d = _files(tmp_path, [5, 1, 9, 3])
    sources = [Listed("claude-code", [a, b]), Listed("codex", [c, d, a])]  # a listed twice
    cursor = BackfillCursor(tmp_path / "c.json")
    plan = make_plan(sources, cursor)
    assert [(i.host, i.path) for i in plan.items] == [
        ("claude-code", b),
        ("codex", d),
        ("claude-code", a),
        ("codex", c),
    ]
    assert plan.total == 4 and plan.bytes == 12
    since = (DAY0 + dt.timedelta(days=3)).astimezone().date()
    assert [i.path for i in make_plan(sources, cursor, since=since).items] == [d, a, c]
    assert [i.path for i in make_plan(sources, cursor, limit=2).items] == [b, d]
    assert make_plan(sources, cursor, limit=0).items == []


def test_done_transcripts_drop_out_until_they_change(tmp_path: Path) -> None:
    (a,) = _files(tmp_path, [1])
    cursor = BackfillCursor(tmp_path / "c.json")
    st = a.stat()
    cursor.mark(a, Done("codex", st.st_size, st.st_mtime_ns, None, "learnt"))
    plan = make_plan([Listed("codex", [a])], cursor)
    assert plan.items == [] and plan.done == 1
    a.write_text("{}\n{}\n")
    (item,) = make_plan([Listed("codex", [a])], cursor).items
    assert item.state == "grown"


def test_a_listed_file_that_vanished_is_reported_not_planned(tmp_path: Path) -> None:
    gone = tmp_path / "gone.jsonl"
    plan = make_plan([Listed("gemini", [gone])], BackfillCursor(tmp_path / "c.json"))
    assert plan.items == [] and plan.total == 0
    assert [(h, p) for h, p, _why in plan.skipped] == [("gemini", gone)]
