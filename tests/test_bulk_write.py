"""Many atomic writes on threads: every file whole, the first failure raised, never hidden."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir import atomic
from memdir.bulk_write import BulkWriter


def test_every_file_is_written_whole_with_its_mtime(tmp_path: Path) -> None:
    with BulkWriter() as writer:
        for i in range(300):
            writer.write(
                tmp_path / f"d{i % 7}" / f"m{i}.md", f"memory {i}\n".encode(), 1_700_000_000.5
            )
    files = sorted(tmp_path.rglob("*.md"))
    assert len(files) == 300
    assert all(p.read_text() == f"memory {p.stem[1:]}\n" for p in files)
    assert {p.stat().st_mtime for p in files} == {1_700_000_000.5}
    assert not [p for p in tmp_path.rglob(".*")]  # no temp file left


def test_a_failed_write_is_raised_when_the_block_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = atomic.atomic_write

    def fail_on_three(path: Path, data: bytes, *, mtime: float | None = None) -> None:
        if path.name == "m3.md":
            raise OSError(28, "No space left on device")
        real(path, data, mtime=mtime)

    monkeypatch.setattr(atomic, "atomic_write", fail_on_three)
    with pytest.raises(OSError, match="No space"), BulkWriter() as writer:
        for i in range(5):
            writer.write(tmp_path / f"m{i}.md", b"x", 0.0)
    assert not (tmp_path / "m3.md").exists()


def test_the_blocks_own_error_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def always_fail(path: Path, data: bytes, *, mtime: float | None = None) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "atomic_write", always_fail)
    with pytest.raises(KeyError), BulkWriter() as writer:
        writer.write(tmp_path / "a.md", b"x", 0.0)
        raise KeyError("the caller's own failure")
