"""`memdir stale`, `doctor` and MCP `memory_recall` on a repository the code moved on in."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters.mcp_tools import MemoryTools
from memdir.cli.main import main
from memdir.recall.keyword import KeywordSelector
from memdir.store import MemoryStore
from tests.evidence.conftest import DB_V1, DB_V2, Repo


class Project:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.memory = tmp_path / "memory"
        self.repo = Repo(tmp_path / "repo")
        self.repo.commit("db", {"src/db.py": DB_V1})
        self.store = MemoryStore(self.memory)
        for name, body in (("driver", "`src/db.py` uses `psycopg2`."),
                           ("never", "Never add `psycopg2` back."),
                           ("terse", "The user likes terse answers.")):  # fmt: skip
            rel = self.store.create(name, f"about {name}", "project", body).path
            self.repo.written_now(self.memory / rel)

    def __call__(self, *argv: str) -> tuple[int, Any, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(["--json", "--dir", str(self.memory), *argv], env={"HOME": str(self.home)},
                    cwd=self.repo.root, stdout=out, stderr=err)  # fmt: skip
        text = out.getvalue()
        return code, json.loads(text) if text.strip() else None, err.getvalue()


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_stale_lists_what_the_code_outgrew_and_diff_sees_it_coming(project: Project) -> None:
    assert project("stale")[:2] == (0, [])
    project.repo.git("checkout", "-q", "-b", "asyncpg")
    project.repo.commit("asyncpg", {"src/db.py": DB_V2})
    project.repo.git("checkout", "-q", "main")
    code, rows, _ = project("stale", "--diff", "asyncpg")  # what merging it would do
    assert code == 1 and [r["path"] for r in rows] == ["driver.md"]
    assert rows[0]["state"] == "held back"
    assert project("stale")[:2] == (0, [])  # HEAD itself is still fine
    project.repo.git("merge", "-q", "asyncpg")
    code, rows, _ = project("stale")
    assert code == 1 and [r["path"] for r in rows] == ["driver.md"]
    code, report, _ = project("doctor")
    assert report["stale"] == [{"path": "driver.md", "state": "gone", "held_back": True}]

    code, out, _ = project("stale", "--retire", "driver.md", "--reason", "we use asyncpg now")
    assert code == 0 and out["retired"] == "driver.md"
    assert project("stale")[:2] == (0, [])
    code, _, err = project("stale", "--retire", "never.md")
    assert code != 0 and "--reason" in err


def test_confirm_outside_git_or_of_a_missing_memory_is_a_clear_error(project: Project) -> None:
    code, _, err = project("stale", "--confirm", "nope.md")
    assert code != 0 and "nope.md" in err


def test_mcp_recall_carries_the_evidence_and_holds_back(project: Project) -> None:
    project.repo.commit("asyncpg", {"src/db.py": DB_V2})
    tools = MemoryTools(project.store, KeywordSelector(), evidence=(project.repo.root, None))
    found = asyncio.run(tools.recall("about driver never psycopg2"))["memories"]
    by = {m["path"]: m for m in found}
    assert by["driver.md"]["held_back"] is True
    assert by["driver.md"]["content"].startswith("memdir held back the memory")
    assert by["never.md"]["held_back"] is False  # it names psycopg2 only to rule it out
    assert "Never add" in by["never.md"]["content"]
