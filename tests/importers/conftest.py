from __future__ import annotations

from pathlib import Path

import pytest

from memdir.consolidate.snapshot import Snapshots
from memdir.store import MemoryStore
from memdir.team.guard import guarded_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return guarded_store(tmp_path / "mem")


@pytest.fixture
def snapshots(store: MemoryStore, tmp_path: Path) -> Snapshots:
    return Snapshots(store, tmp_path / "cache" / "import" / "snapshots")
