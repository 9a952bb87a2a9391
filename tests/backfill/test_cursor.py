"""The backfill cursor: exact (size, mtime) per transcript, and a state file that is never torn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.backfill.cursor import BackfillCursor, Done


def test_marks_survive_a_new_process_and_match_exactly(tmp_path: Path) -> None:
    state = tmp_path / "state" / "cursor.json"
    cursor = BackfillCursor(state)
    t = tmp_path / "a.jsonl"
    cursor.mark(t, Done("codex", 10, 111, "u1", "learnt", 2))
    again = BackfillCursor(state)
    assert again.get(t) == Done("codex", 10, 111, "u1", "learnt", 2)
    assert again.is_done(t, 10, 111)
    assert not again.is_done(t, 11, 111) and not again.is_done(t, 10, 112)
    assert not again.is_done(tmp_path / "b.jsonl", 10, 111)
    assert [p.name for p in state.parent.iterdir()] == ["cursor.json"]  # no temp left behind


@pytest.mark.parametrize(
    "raw",
    [
        b"{not json",
        b"[]",
        json.dumps({"version": 99, "done": {"x": {}}}).encode(),
        json.dumps({"version": 1, "done": {"x": {"host": "h"}, "y": 3}}).encode(),
        b"\xff\xfe",
        b"[" * 100_000,
    ],
    ids=["torn", "a list", "a newer version", "rows of another shape", "not UTF-8", "deep"],
)
def test_an_unusable_state_file_is_an_empty_one(tmp_path: Path, raw: bytes) -> None:
    state = tmp_path / "cursor.json"
    state.write_bytes(raw)
    cursor = BackfillCursor(state)
    assert cursor.done == {}
    cursor.mark(tmp_path / "t.jsonl", Done("claude-code", 1, 2, None, "learnt"))
    assert json.loads(state.read_text())["version"] == 1
