from __future__ import annotations

from pathlib import Path

import pytest

from memdir.agent.tools import memory_tools
from memdir.agent.toolset import ToolBox
from memdir.store import MemoryStore


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    return root


@pytest.fixture
def store(memory_dir: Path) -> MemoryStore:
    return MemoryStore(memory_dir)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the memory dir, standing in for the user's project."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    return root


@pytest.fixture
def tools(store: MemoryStore, outside: Path) -> ToolBox:
    return memory_tools(store, cwd=outside)
