"""``memdir agent list | show | snapshot | sync`` through ``main(argv)``."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main


class Run:
    def __init__(self, tmp_path: Path):
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.home.mkdir()
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        env = {"HOME": str(self.home)}
        code = main(list(argv), env=env, cwd=self.project, stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str, code: int = 0) -> Any:
        got, out, err = self("--json", *argv)
        assert got == code, err + out
        return json.loads(out)


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def seed(run: Run, scope: str = "project") -> Path:
    folder = "agent-memory" if scope == "project" else "agent-memory-local"
    root = run.project / ".memdir" / folder / "code-reviewer"
    root.mkdir(parents=True)
    (root / "style.md").write_text(
        "---\nname: Style\ndescription: terse reviews\ntype: feedback\n---\nBe terse.\n", "utf-8"
    )
    (root / "MEMORY.md").write_text("- [Style](style.md) — terse reviews\n", "utf-8")
    return root


def test_list_shows_agents_and_snapshot_only_types(run: Run) -> None:
    assert run.json("agent", "list") == []
    seed(run)
    run.json("agent", "snapshot", "code-reviewer", "--scope", "project")
    other = run.project / ".memdir" / "agent-memory-snapshots" / "tester"
    other.mkdir()
    rows = run.json("agent", "list")
    assert [(r["type"], r["scope"], r["memories"], r["snapshot"]) for r in rows] == [
        ("code-reviewer", "project", 1, "none"),
        ("tester", "-", 0, "available"),
    ]


def test_show_reports_index_and_state(run: Run) -> None:
    seed(run)
    data = run.json("agent", "show", "code-reviewer", "--scope", "project")
    assert data["memories"] == ["style.md"]
    assert "terse reviews" in data["index"]
    assert data["snapshot"]["action"] == "none"
    code, out, _ = run("--text", "agent", "show", "code-reviewer", "--scope", "project")
    assert code == 0 and "project scope" in out and "[Style](style.md)" in out


def test_snapshot_then_sync_into_another_scope(run: Run) -> None:
    seed(run)
    published = run.json("agent", "snapshot", "code-reviewer", "--scope", "project")
    assert sorted(published["copied"]) == ["MEMORY.md", "style.md"]
    synced = run.json("agent", "sync", "code-reviewer", "--scope", "local")
    assert synced["action"] == "initialize"
    local = run.project / ".memdir" / "agent-memory-local" / "code-reviewer"
    assert (local / "style.md").is_file()
    assert run.json("agent", "sync", "code-reviewer", "--scope", "local")["action"] == "none"


def test_sync_asks_before_replacing_and_replaces_with_yes(run: Run) -> None:
    seed(run)
    run.json("agent", "snapshot", "code-reviewer", "--scope", "project")
    local = seed(run, "local")
    (local / "mine.md").write_text("---\nname: Mine\ndescription: x\ntype: user\n---\n", "utf-8")
    pending = run.json("agent", "sync", "code-reviewer", "--scope", "local", code=1)
    assert pending["action"] == "prompt-update"
    assert (local / "mine.md").exists()  # nothing lost without consent
    done = run.json("agent", "sync", "code-reviewer", "--scope", "local", "--yes")
    assert done["action"] == "replace" and "mine.md" in done["removed"]
    assert not (local / "mine.md").exists()


def test_snapshot_of_a_missing_agent_is_a_clear_error(run: Run) -> None:
    code, _, err = run("agent", "snapshot", "nobody")
    assert code == 2 and "has no user memory dir" in err


def test_unsafe_type_name_is_refused(run: Run) -> None:
    code, _, err = run("agent", "show", "../../etc")
    assert code == 2 and "invalid agent type" in err
