from __future__ import annotations

from pathlib import Path

from memdir.age import DAY_SECONDS
from memdir.recall.surface import (
    MAX_ATTACHMENT_BYTES,
    MAX_ATTACHMENT_LINES,
    RelevantMemory,
    cap_content,
    surface,
)

NOW = 1_800_000_000.0


def test_small_file_is_whole(tmp_path: Path) -> None:
    p = tmp_path / "a.md"
    p.write_text("---\nname: a\n---\nhello\n")
    att = surface(RelevantMemory(p, "a.md", NOW), now=NOW)
    assert att is not None and not att.truncated
    assert att.text == f"Memory (saved today): {p}:\n---\nname: a\n---\nhello\n"


def test_line_cap(tmp_path: Path) -> None:
    text = "".join(f"{i}\n" for i in range(500))
    content, truncated = cap_content(text, tmp_path / "x.md")
    assert truncated
    body, note = content.rsplit("\n[Memory truncated", 1)
    assert len(body.splitlines()) == MAX_ATTACHMENT_LINES
    assert str(tmp_path / "x.md") in note


def test_byte_cap_stops_at_a_complete_line(tmp_path: Path) -> None:
    text = ("é" * 99 + "\n") * 100  # 199 bytes per line
    content, truncated = cap_content(text, tmp_path / "x.md")
    body = content.split("[Memory truncated")[0]
    assert truncated
    assert len(body.encode()) <= MAX_ATTACHMENT_BYTES
    assert all(line == "é" * 99 for line in body.splitlines())


def test_stale_memory_gets_the_reminder(tmp_path: Path) -> None:
    p = tmp_path / "old.md"
    p.write_text("fact\n")
    att = surface(RelevantMemory(p, "old.md", NOW - 40 * DAY_SECONDS), now=NOW)
    assert att is not None
    assert att.header.startswith("<system-reminder>This memory is 40 days old.")


def test_vanished_file_is_none(tmp_path: Path) -> None:
    assert surface(RelevantMemory(tmp_path / "gone.md", "gone.md", NOW)) is None


def test_a_file_swapped_for_a_link_out_of_the_dir_is_not_surfaced(tmp_path: Path) -> None:
    """Chosen while it was a memory, replaced by a link to a file outside before surfacing."""
    root = tmp_path / "mem"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("CANARY\n")
    (root / "m.md").symlink_to(outside)
    assert surface(RelevantMemory(root / "m.md", "m.md", NOW)) is None
    inside = root / "real.md"
    inside.write_text("kept\n")
    (root / "ok.md").symlink_to(inside)
    shown = surface(RelevantMemory(root / "ok.md", "ok.md", NOW))
    assert shown is not None and "kept" in shown.content


def test_a_memory_swapped_for_a_fifo_is_not_surfaced(tmp_path: Path) -> None:
    """Issue #18.2: surfacing runs on the prompt path; a FIFO must not hold it up."""
    import os

    from tests.fifo import returns_promptly

    fifo = tmp_path / "m.md"
    os.mkfifo(fifo)
    for memory in (RelevantMemory(fifo, "m.md", NOW), RelevantMemory(fifo, "", NOW)):
        assert returns_promptly(lambda m=memory: surface(m), [fifo]) is None
