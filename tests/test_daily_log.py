from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

from memdir.daily_log import append_log, bullets, log_files, log_rel
from memdir.errors import DreamError
from memdir.store import MemoryStore
from tests.consolidate.procs import spawn

WHEN = dt.datetime(2026, 11, 30, 14, 5).astimezone()


def test_append_format_local_date_and_header(tmp_path: Path) -> None:
    path = append_log(tmp_path, "Decided:\n  ship   on Friday", now=WHEN)
    assert path == tmp_path / "logs" / "2026" / "11" / "2026-11-30.md"
    append_log(tmp_path, "東京 office — café ☕", now=WHEN + dt.timedelta(minutes=1))
    assert path.read_text() == (
        "# 2026-11-30\n\n- 14:05 — Decided: ship on Friday\n- 14:06 — 東京 office — café ☕\n"
    )
    assert log_rel(dt.date(2026, 1, 2)) == "logs/2026/01/2026-01-02.md"


def test_torn_last_line_is_closed_not_glued(tmp_path: Path) -> None:
    path = append_log(tmp_path, "first", now=WHEN)
    with open(path, "a") as fh:
        fh.write("- 14:06 — half a line")  # a crash mid-write
    append_log(tmp_path, "second", now=WHEN)
    assert path.read_text().splitlines()[-2:] == ["- 14:06 — half a line", "- 14:05 — second"]


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_empty_text_is_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(DreamError):
        append_log(tmp_path, text)
    assert not (tmp_path / "logs").exists()


def test_logs_are_never_indexed(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.create("A memory", "something", "project", "Body.\n")
    append_log(tmp_path, "a log line", now=WHEN)
    assert "logs/" not in (tmp_path / "MEMORY.md").read_text()
    store.rebuild_index()
    assert "logs/" not in (tmp_path / "MEMORY.md").read_text()


APPENDER = """
import sys, time
from pathlib import Path
from memdir.daily_log import append_log
root, go, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
while not go.exists():
    time.sleep(0.001)
for i in range(40):
    append_log(root, f"writer {me} entry {i}")
"""


def test_appends_from_many_processes_lose_nothing(tmp_path: Path) -> None:
    root, go = tmp_path / "mem", tmp_path / "go"
    root.mkdir()
    procs = [spawn(APPENDER, str(root), str(go), str(n)) for n in range(5)]
    try:
        time.sleep(0.8)
        go.touch()
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    texts = [b.text for rel, day in log_files(root) for b in bullets(root, rel, day)]
    expected = {f"writer {n} entry {i}" for n in range(5) for i in range(40)}
    assert sorted(texts) == sorted(expected)  # every entry exactly once, none torn
    for rel, _ in log_files(root):
        lines = (root / rel).read_text().splitlines()
        assert all(line.startswith("- ") for line in lines[2:])
