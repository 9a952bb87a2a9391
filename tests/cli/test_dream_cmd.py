"""``memdir dream --dry-run`` -> ``memdir dream`` -> ``memdir dream undo``, as a new user would."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from tests.consolidate.conftest import tree
from tests.consolidate.test_plan import messy


class Run:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.mem = tmp_path / "mem"
        self.home.mkdir()
        self.project.mkdir()
        self.mem.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)

    def __call__(self, *argv: str, fmt: str = "--text") -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        env = {"HOME": str(self.home), "MEMDIR_HOME": str(self.home / ".memdir")}
        args = ["--dir", str(self.mem), fmt, *argv]
        code = main(args, env=env, cwd=self.project, stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str) -> Any:
        code, out, err = self(*argv, fmt="--json")
        assert code == 0, err
        return json.loads(out)


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def test_dry_run_then_dream_then_undo(run: Run) -> None:
    messy(run.mem)
    before = tree(run.mem)
    code, out, err = run("dream", "--dry-run", "--no-embeddings")
    assert code == 0, err
    assert "--- a/pnpm.md\n+++ b/pnpm.md\n" in out and "+superseded_by: pnpm_again.md" in out
    assert "# contradiction (left for you): cache.md vs cache_b.md" in out
    assert tree(run.mem) == before

    code, out, err = run("dream", "--no-embeddings")
    assert code == 0, err
    assert out.startswith("Improved ") and "  - pnpm.md (retired)" in out
    assert "undo with: memdir dream undo" in out
    after = tree(run.mem)
    assert after != before

    status = run.json("dream", "status")
    assert (
        status["runs"][0]["reason"] == "offline dream" and "pnpm.md" in status["runs"][0]["changed"]
    )
    assert status["lock"]["holder_pid"] == os.getpid() and status["last_consolidated"]

    code, out, err = run("dream", "undo")
    assert code == 0, err
    assert tree(run.mem) == before
    code, out, err = run("dream", "undo")
    assert code == 2 and "no dream snapshot to undo" in err


def test_undo_refuses_over_a_later_edit_unless_forced(run: Run) -> None:
    messy(run.mem)
    assert run.json("dream", "--no-embeddings")["ran"] is True
    (run.mem / "launch.md").write_text("a person edited this after the dream\n")
    code, _, err = run("dream", "undo")
    assert code == 2 and "launch.md" in err and "--force" in err
    assert run.json("dream", "undo", "--force")["restored"]


def test_auto_respects_the_gates(run: Run) -> None:
    messy(run.mem)
    result = run.json("dream", "--auto", "--no-embeddings")
    assert result == {"ran": False, "reason": "gate-closed", "gate": result["gate"]}
    assert result["gate"]["reason"] == "disabled"


def test_log_appends_and_dream_distils(run: Run) -> None:
    result = run.json("log", "remember", "that", "the", "VPN", "is", "needed", "for", "staging")
    path = Path(result["log"])
    assert path.parent.parent.parent == run.mem / "logs" and path.read_text().count("\n- ") == 1
    _, out, _ = run("dream", "--dry-run", "--no-embeddings")
    assert "# would distil from daily logs:" in out and "VPN" in out
    report = run.json("dream", "--no-embeddings")
    assert any("vpn" in rel for rel in report["changed"])
    assert run.json("dream", "--no-embeddings")["changed"] == []


def test_llm_needs_a_model(run: Run) -> None:
    code, _, err = run("dream", "--llm")
    assert code == 2 and "--llm needs a model" in err


def test_empty_dir_has_nothing_to_do(run: Run) -> None:
    code, out, _ = run("dream", "--no-embeddings")
    assert code == 0 and out.strip() == "Nothing to improve."
    code, out, _ = run("dream", "--dry-run", "--no-embeddings")
    assert out.strip() == "No changes planned."
