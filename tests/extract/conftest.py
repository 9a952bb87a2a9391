from __future__ import annotations

from pathlib import Path

import pytest

from memdir.store import MemoryStore
from tests.extract.support import FIXED_NOW


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    return root


@pytest.fixture
def store(memory_dir: Path) -> MemoryStore:
    return MemoryStore(memory_dir, clock=lambda: FIXED_NOW)
