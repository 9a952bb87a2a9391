"""A project, its settings and a runtime factory for runtime tests."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memdir.config import Settings, load_settings
from memdir.paths import ResolvedPaths, resolve_paths
from memdir.recall.engine import MemoryRecall
from memdir.recall.keyword import KeywordSelector
from memdir.runtime import MemoryRuntime
from memdir.store import MemoryStore


@dataclass
class Project:
    root: Path
    home: Path
    env: dict[str, str]

    def settings(self, **env: str) -> Settings:
        return load_settings(
            {**self.env, **env},
            cwd=self.root,
            flag_settings=None,
            claude_mode=False,
            memory_dir_flag=None,
            policy_dir=self.home / "no-policy",
        )

    def paths(self, settings: Settings | None = None) -> ResolvedPaths:
        return resolve_paths(settings or self.settings(), cwd=self.root)

    def store(self) -> MemoryStore:
        return MemoryStore(self.paths().memory_dir)

    def runtime(self, *, env: Mapping[str, str] | None = None, **kwargs: Any) -> MemoryRuntime:
        settings = self.settings(**dict(env or {}))
        paths = self.paths(settings)
        if "recall" not in kwargs:  # fast and deterministic; the local selector has its own test
            kwargs["recall"] = MemoryRecall(paths.memory_dir, KeywordSelector())
        return MemoryRuntime(settings, paths, **kwargs)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    return Project(root, home, {"HOME": str(home)})


def seed(store: MemoryStore) -> None:
    store.create(
        "Database tests",
        "integration tests must hit a real postgres database",
        "feedback",
        "Use the postgres fixture.\n\nWhy: mocks hid a broken migration.",
    )
    store.create("Release freeze", "merge freeze starts december tenth", "project", "No merges.")
    store.create("Dashboard", "latency dashboard lives in grafana", "reference", "grafana/d/api")
