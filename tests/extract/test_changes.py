"""extract.changes: a memory file changed since a moment, other than by extraction itself."""

from __future__ import annotations

import os
import time
from pathlib import Path

from memdir.extract.changes import CLOCK_SLACK_NS, OwnWrites, changed_since


def _write(path: Path, text: str, mtime_ns: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_only_memory_files_changed_at_or_after_the_moment_count(tmp_path: Path) -> None:
    now = time.time_ns()
    old = now - 10 * CLOCK_SLACK_NS
    _write(tmp_path / "old.md", "x", old)
    _write(tmp_path / "MEMORY.md", "index", now)  # rewritten with every save: not a memory
    _write(tmp_path / ".git" / "x.md", "hidden", now)
    _write(tmp_path / "notes.txt", "not markdown", now)
    _write(tmp_path / "logs" / "2026" / "12" / "2026-12-02.md", "- a journal line", now)
    assert changed_since(tmp_path, now) is None
    _write(tmp_path / "team" / "new.md", "y", now)
    assert changed_since(tmp_path, now) == tmp_path / "team" / "new.md"


def test_extractions_own_writes_are_skipped_until_edited_again(tmp_path: Path) -> None:
    memory_dir, cache = tmp_path / "mem", tmp_path / "cache"
    now = time.time_ns()
    _write(memory_dir / "saved.md", "by extraction", now)
    own = OwnWrites(cache)
    own.add([memory_dir / "saved.md", memory_dir / "gone.md"])
    assert list(own.load()) == [os.path.abspath(memory_dir / "saved.md")]
    assert changed_since(memory_dir, now, own=own.load()) is None
    _write(memory_dir / "saved.md", "edited by the agent", now + 5)
    assert changed_since(memory_dir, now, own=own.load()) == memory_dir / "saved.md"


def test_a_corrupt_record_means_no_own_writes(tmp_path: Path) -> None:
    own = OwnWrites(tmp_path)
    own.path.parent.mkdir(parents=True)
    own.path.write_text("{not json")
    assert own.load() == {}
