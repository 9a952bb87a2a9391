from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from memdir.paths import sanitize_path


class Run:
    def __init__(self, tmp_path: Path):
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.home.mkdir()
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)

    def __call__(self, *argv: str, stdin: str | None = None) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        env = {"HOME": str(self.home)}
        code = main(list(argv), env=env, cwd=self.project, stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str) -> Any:
        code, out, err = self("--json", *argv)
        assert code == 0, err
        return json.loads(out)


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def test_where_reports_paths_and_sources(run: Run) -> None:
    data = run.json("where")
    slug = sanitize_path(os.path.realpath(run.project))
    assert data["paths"]["memory_dir"] == str(run.home / ".memdir" / "projects" / slug / "memory")
    assert data["decided_by"]["project_root"] == "git root"
    assert data["enabled"] is True


def test_add_list_show_edit_mv_rm_round_trip(run: Run) -> None:
    assert run.json("init")["created_index"] is True
    saved = run.json(
        "add",
        "Testing policy",
        "-d",
        "Integration tests hit a real DB",
        "-t",
        "feedback",
        "-b",
        "Use a real database.\n\nWhy: mocks hid a bug.",
    )
    assert saved["path"] == "testing_policy.md"
    rows = run.json("list")
    assert [(r["path"], r["type"], r["age"]) for r in rows] == [
        ("testing_policy.md", "feedback", "today")
    ]
    shown = run.json("show", "testing_policy.md")
    assert shown["description"] == "Integration tests hit a real DB"
    assert shown["body"].startswith("Use a real database.")
    run.json("edit", "testing_policy.md", "--old", "real database", "--new", "real PostgreSQL")
    assert "real PostgreSQL" in run.json("show", "testing_policy.md")["body"]
    run.json("mv", "testing_policy.md", "feedback/testing.md")
    manifest = run.json("manifest")
    assert manifest[0]["path"] == "feedback/testing.md"
    assert manifest[0]["line"].startswith("- [feedback] feedback/testing.md (")
    code, out, _ = run("--text", "index", "check")
    assert code == 0 and "ok" in out
    run.json("rm", "feedback/testing.md")
    assert run.json("list") == []


def test_text_mode_prints_a_table(run: Run) -> None:
    run.json("add", "Role", "-d", "Go engineer", "-t", "user", "-b", "x")
    code, out, _ = run("--text", "list")
    assert code == 0
    assert out.splitlines()[0].split() == ["PATH", "TYPE", "AGE", "DESCRIPTION"]
    assert "role.md" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show", "../../etc/passwd"], "'..'"),
        (["show", "nope.md"], "no such memory"),
        (["add", "x", "-d", "d", "-t", "user", "-b", "b", "--path", "/abs.md"], "is outside"),
        (["edit", "missing.md", "--old", "a", "--new", "b"], "no such memory"),
        (["rm", "a\x00b.md"], "NUL"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(run: Run, argv: list[str], message: str) -> None:
    code, _out, err = run(*argv)
    assert code == 2
    assert err.startswith("memdir: error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_unknown_type_is_a_usage_error(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run("add", "x", "-d", "d", "-t", "gossip", "-b", "b")
    assert code == 2 and "invalid choice: 'gossip'" in capsys.readouterr().err


def test_index_check_fails_on_drift_and_rebuild_fixes(run: Run) -> None:
    run.json("add", "A", "-d", "first", "-t", "user", "-b", "x")
    memory_dir = Path(run.json("where")["paths"]["memory_dir"])
    (memory_dir / "stray.md").write_text("---\nname: Stray\ndescription: s\ntype: user\n---\n")
    code, out, _ = run("--json", "index", "check")
    assert code == 1 and json.loads(out)[0]["unindexed"] == ["stray.md"]
    assert run.json("index", "rebuild")["rewritten"] == ["MEMORY.md"]
    assert run("index", "check")[0] == 0


def test_doctor_reports_corrupt_and_missing_description(run: Run) -> None:
    run.json("add", "A", "-d", "fine", "-t", "user", "-b", "x")
    memory_dir = Path(run.json("where")["paths"]["memory_dir"])
    (memory_dir / "corrupt.md").write_text("---\nname: [broken\n---\n")
    (memory_dir / "nodesc.md").write_text("---\nname: N\ntype: project\n---\nbody\n")
    code, out, _ = run("--json", "doctor")
    assert code == 1
    kinds = {(p["kind"], Path(p["path"]).name) for p in json.loads(out)["problems"]}
    assert ("frontmatter-quoted", "corrupt.md") in kinds
    assert ("no-description", "nodesc.md") in kinds
    assert (memory_dir / "corrupt.md").read_text() == "---\nname: [broken\n---\n"
