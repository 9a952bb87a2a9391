from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir import applies_when
from memdir.cli.main import main
from memdir.frontmatter import parse_memory
from memdir.model import Memory
from memdir.paths import sanitize_path
from memdir.recall.applies_model import written_by_person


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


# -- issue #8 items 3 and 5, issue #9 item 1 ---------------------------------------------------


def _one_error_line(code: int, err: str) -> None:
    assert code == 2, err
    assert err.startswith("memdir: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize("size", [238, 246, 255])
def test_names_up_to_255_bytes_work_on_every_command(run: Run, tmp_path: Path, size: int) -> None:
    # Before: the temp-file suffix pushed these names over NAME_MAX (Errno 36 traceback).
    root = str(tmp_path / "mem")
    name = "a" * (size - 3) + ".md"
    other = "b" * (size - 3) + ".md"
    assert (
        run("--dir", root, "add", "N", "-d", "d", "-t", "user", "-b", "x", "--path", name)[0] == 0
    )
    assert run("--dir", root, "show", name)[0] == 0
    assert run("--dir", root, "edit", name, "--old", "x", "--new", "y")[0] == 0
    assert run("--dir", root, "mv", name, other)[0] == 0
    assert (tmp_path / "mem" / other).read_text().endswith("y\n")


def test_a_256_byte_name_is_one_clear_error(run: Run, tmp_path: Path) -> None:
    name = "a" * 253 + ".md"
    for argv in (
        ("add", "N", "-d", "d", "-t", "user", "-b", "x", "--path", name),
        ("show", name),
        ("edit", name, "--old", "x", "--new", "y"),
        ("mv", name, "b.md"),
    ):
        code, _, err = run("--dir", str(tmp_path / "mem"), *argv)
        _one_error_line(code, err)
        assert "name too long" in err


def test_non_utf8_arguments_are_one_clear_error(run: Run, tmp_path: Path) -> None:
    code, _, err = run("--dir", str(tmp_path / "mem"), "add", "caf\udce9", "-d", "d", "-t", "user")
    _one_error_line(code, err)
    assert "not valid UTF-8" in err


def test_non_utf8_bytes_from_a_real_command_line(tmp_path: Path) -> None:
    argv = [sys.executable.encode(), b"-m", b"memdir", b"--dir", str(tmp_path).encode()]
    argv += [b"add", b"caf\xe9", b"-d", b"d", b"-t", b"user", b"-b", b"x"]
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.count(b"\n") == 1 and b"not valid UTF-8" in done.stderr
    assert b"Traceback" not in done.stderr


def test_writing_where_a_directory_of_that_name_exists(run: Run, tmp_path: Path) -> None:
    root = tmp_path / "mem"
    (root / "taken.md").mkdir(parents=True)
    (root / "file.md").write_text("---\nname: f\n---\n")
    for path in ("taken.md", "file.md/child.md"):
        code, _, err = run(
            "--dir", str(root), "add", "N", "-d", "d", "-t", "user", "-b", "x", "--path", path,
            "--force",
        )  # fmt: skip
        _one_error_line(code, err)
    assert (root / "taken.md").is_dir() and (root / "file.md").read_text() == "---\nname: f\n---\n"


def test_a_bad_field_value_is_that_files_problem(run: Run, tmp_path: Path) -> None:
    # Before: `created: 2020-13-45` made list, manifest and doctor exit with a traceback.
    root = tmp_path / "mem"
    assert run("--dir", str(root), "add", "Good", "-d", "fine", "-t", "user", "-b", "x")[0] == 0
    (root / "bad.md").write_text(
        "---\nname: Bad\ndescription: odd date\ncreated: 2020-13-45\n---\n"
    )
    code, out, _ = run("--dir", str(root), "--json", "list")
    assert code == 0 and {r["path"] for r in json.loads(out)} == {"good.md", "bad.md"}
    code, out, _ = run("--dir", str(root), "--json", "manifest")
    assert code == 0 and len(json.loads(out)) == 2
    code, out, _ = run("--dir", str(root), "--json", "doctor")
    bad = [p for p in json.loads(out)["problems"] if p["kind"] == "bad-value"]
    assert code == 1 and len(bad) == 1 and bad[0]["path"].endswith("bad.md")


def test_doctor_fix_repairs_only_what_is_asked(run: Run, tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    a = "---\nname: A\ndescription: Q2 goal: ship A\ntype: project\n---\nbody A: x\n"
    b = "---\nname: B\ndescription: [WIP] B\ntags: [x, y]\n---\nbody B\n"
    broken = "---\nname: x\n- y\n---\nbody\n"
    (root / "a.md").write_text(a)
    (root / "b.md").write_text(b)
    (root / "broken.md").write_text(broken)
    code, out, _ = run("--dir", str(root), "--json", "doctor")
    kinds = {(Path(p["path"]).name, p["kind"]) for p in json.loads(out)["problems"]}
    assert {("a.md", "frontmatter-quoted"), ("b.md", "frontmatter-quoted")} <= kinds
    assert ("broken.md", "frontmatter-dropped") in kinds
    assert (root / "a.md").read_text() == a  # doctor alone changes nothing

    code, out, _ = run("--dir", str(root), "--json", "doctor", "--fix", "a.md")
    assert json.loads(out)["fixed"] == [
        {"path": "a.md", "action": "quoted the header values that did not parse", "ok": True}
    ]
    assert (root / "a.md").read_text() == a.replace("Q2 goal: ship A", '"Q2 goal: ship A"')
    assert (root / "b.md").read_text() == b and (root / "broken.md").read_text() == broken

    code, out, _ = run("--dir", str(root), "--json", "doctor", "--fix")
    fixed = {f["path"]: f["ok"] for f in json.loads(out)["fixed"]}
    assert fixed == {"b.md": True}
    assert (root / "b.md").read_text() == b.replace("[WIP] B", '"[WIP] B"')  # tags stay a list
    assert (root / "broken.md").read_text() == broken  # never guessed at
    code, out, _ = run("--dir", str(root), "--json", "doctor", "--fix", "broken.md")
    assert code == 1  # the broken header is still a problem
    [result] = json.loads(out)["fixed"]
    assert not result["ok"] and "edit it by hand" in result["action"]
    assert (root / "broken.md").read_text() == broken


ADD = ["add", "Lokalise", "-d", "UI copy is managed in Lokalise", "-t", "feedback", "-b", "x"]


def _stored(run: Run, rel: str) -> Memory:
    root = Path(run.json("where")["paths"]["memory_dir"])
    return parse_memory((root / rel).read_text(encoding="utf-8"), rel)


def test_add_stores_a_persons_applies_when_as_given_and_unmarked(run: Run) -> None:
    mine = ["renaming a menu item", "adding a new language: Portuguese"]
    run.json(*ADD, "--applies-when", mine[0], "--applies-when", mine[1])
    memory = _stored(run, "lokalise.md")
    assert memory.extra[applies_when.FIELD] == mine  # not combined with the rules' list
    assert applies_when.BY_FIELD not in memory.extra
    assert written_by_person(memory)  # so a background model leaves it alone


def test_add_without_applies_when_stores_the_rules_list(run: Run) -> None:
    run.json(*ADD)
    memory = _stored(run, "lokalise.md")
    rules = applies_when.derive("feedback", "Lokalise", "UI copy is managed in Lokalise", "x\n")
    assert rules and memory.extra[applies_when.FIELD] == rules
    assert applies_when.BY_FIELD not in memory.extra


@pytest.mark.parametrize(
    ("situations", "message"),
    [
        ([f"s{i}" for i in range(applies_when.MAX_ITEMS + 1)], "at most 8 situations"),
        (["y" * (applies_when.MAX_CHARS + 1)], "at most 160 characters"),
    ],
)
def test_add_refuses_an_applies_when_it_would_cut(
    run: Run, situations: list[str], message: str
) -> None:
    argv = [arg for s in situations for arg in ("--applies-when", s)]
    code, _out, err = run(*ADD, *argv)
    _one_error_line(code, err)
    assert message in err
    assert run.json("list") == []
