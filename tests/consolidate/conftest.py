from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdir.consolidate.snapshot import Snapshots
from memdir.frontmatter import dump
from memdir.store import MemoryStore


def put(
    root: Path,
    rel: str,
    name: str,
    desc: str,
    body: str,
    *,
    type_: str = "project",
    day: str = "2026-11-01",
    mtime: float | None = None,
    **extra: str,
) -> Path:
    """Write a memory file directly (as another tool or a person would)."""
    meta: dict[str, object] = {"name": name, "description": desc, "type": type_}
    meta.update({"created": day, "updated": day, **extra})
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(meta, body), encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def tree(root: Path) -> dict[str, bytes]:
    """Every non-hidden file under ``root`` (logs included), as bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    root = tmp_path / "mem"
    root.mkdir()
    return MemoryStore(root)


@pytest.fixture
def snaps(store: MemoryStore, tmp_path: Path) -> Snapshots:
    return Snapshots(store, tmp_path / "cache" / "snapshots")
