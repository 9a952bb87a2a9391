"""``memdir export`` and ``memdir export agents-md`` as a new user runs them."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

from memdir.bundle import restore_bundle
from memdir.cli.main import main


class Run:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.mem = tmp_path / "mem"
        self.home.mkdir()
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.env = {"HOME": str(self.home), "MEMDIR_HOME": str(self.home / ".memdir")}

    def __call__(self, *argv: str, fmt: str = "--text", **env: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        args = ["--dir", str(self.mem), fmt, *argv]
        code = main(args, env={**self.env, **env}, cwd=self.project, stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str, **env: str) -> Any:
        code, out, err = self(*argv, fmt="--json", **env)
        assert code == 0, err
        return json.loads(out)


def _add(run: Run, name: str, kind: str, body: str) -> None:
    code, _out, err = run("add", name, "-d", f"when {name}", "-t", kind, "-b", body)
    assert code == 0, err


def test_export_writes_a_dated_bundle_that_restores_byte_for_byte(tmp_path: Path) -> None:
    run = Run(tmp_path)
    _add(run, "部署流程", "project", "CI 通过后部署")
    _add(run, "Real databases", "feedback", "No mocks.")
    (run.mem / "notes.txt").write_text("not a memory", encoding="utf-8")
    code, out, err = run("export", SOURCE_DATE_EPOCH="1764658800")
    assert code == 0, err
    assert "not exported: notes.txt: not Markdown" in err
    bundle = run.project / "memdir-export-2025-12-02.tar.gz"
    assert f"to {bundle}" in out and "memdir import bundle" in out
    result = restore_bundle(bundle, tmp_path / "fresh", False)
    assert sorted(result.written) == ["MEMORY.md", "real_databases.md", "部署流程.md"]
    for rel in result.written:
        assert (tmp_path / "fresh" / rel).read_bytes() == (run.mem / rel).read_bytes()


def test_export_json_reports_the_manifest_and_refuses_to_overwrite(tmp_path: Path) -> None:
    run = Run(tmp_path)
    _add(run, "Real databases", "feedback", "No mocks.")
    first = run.json("export", "--out", "b.tar.gz", SOURCE_DATE_EPOCH="1764658800")
    assert first["files"] == 2 and first["scope"] == "all" and first["format_version"] == 1
    assert first["exported_at"] == "2025-12-02T07:00:00Z"
    code, _out, err = run("export", "--out", "b.tar.gz")
    assert code == 2 and err.count("\n") == 1 and "already exists" in err
    again = run.json("export", "--out", "b.tar.gz", "--force", SOURCE_DATE_EPOCH="1764658800")
    assert again["archive_sha256"] == first["archive_sha256"]


def test_a_bad_source_date_epoch_is_one_line(tmp_path: Path) -> None:
    run = Run(tmp_path)
    run.mem.mkdir()
    code, _out, err = run("export", SOURCE_DATE_EPOCH="yesterday")
    assert (
        code == 2
        and err == "memdir: error: SOURCE_DATE_EPOCH='yesterday' is not a Unix time in seconds\n"
    )


def test_agents_md_keeps_private_memories_out_of_a_committed_file(tmp_path: Path) -> None:
    run = Run(tmp_path)
    _add(run, "Real databases", "feedback", "No mocks.")
    _add(run, "User is a data scientist", "user", "Explain backend terms.")
    (run.project / "AGENTS.md").write_text("# Project\n", encoding="utf-8")
    dry = run.json("export", "agents-md", "--dry-run")
    assert dry["git_would_commit"] and dry["included"] == [] and len(dry["private_left_out"]) == 2
    assert (run.project / "AGENTS.md").read_text(encoding="utf-8") == "# Project\n"

    code, out, err = run("export", "agents-md", "--include-private", "--dry-run")
    assert code == 0, err
    assert "would change (2 memories" in out and "- **Real databases**" in out
    assert (run.project / "AGENTS.md").read_text(encoding="utf-8") == "# Project\n"

    done = run.json("export", "agents-md", "--include-private")
    assert done["action"] == "write" and len(done["included"]) == 2
    assert "data scientist" in (run.project / "AGENTS.md").read_text(encoding="utf-8")
    assert run.json("export", "agents-md", "--include-private")["action"] == "unchanged"
    assert run.json("export", "agents-md", "--remove")["action"] == "remove"
    assert (run.project / "AGENTS.md").read_text(encoding="utf-8") == "# Project\n"


def test_agents_md_without_the_flag_warns_once_with_the_way_out(tmp_path: Path) -> None:
    run = Run(tmp_path)
    _add(run, "User is a data scientist", "user", "Explain backend terms.")
    code, _out, err = run("export", "agents-md", "--file", "CLAUDE.md")
    assert code == 0
    assert "left out 1 private memories" in err and "--include-private" in err
    assert not (run.project / "CLAUDE.md").exists()  # nothing to write, nothing created


def test_a_dir_built_by_memdirs_own_commands_round_trips(tmp_path: Path) -> None:
    """add (private, team, CJK, nested), log, dream: then export -> restore -> same files."""
    run = Run(tmp_path)
    _add(run, "Real databases", "feedback", "No mocks.\n\n**Why:** a mock hid a migration.")
    _add(run, "数据库测试规范", "project", "集成测试必须使用真实数据库")
    code, _out, err = run(
        "add", "Squash", "-d", "team rule", "-t", "feedback", "-b", "x", "--path", "team/squash.md"
    )
    assert code == 0, err
    code, _out, err = run(
        "add", "Pager", "-d", "who", "-t", "reference", "-b", "y", "--path", "ops/oncall/pager.md"
    )
    assert code == 0, err
    assert run("log", "shipped the billing fix")[0] == 0
    assert run("dream", "--no-embeddings")[0] == 0
    assert (run.mem / "logs" / ".distilled.json").is_file()

    bundle = tmp_path / "b.tar.gz"
    assert run.json("export", "--out", str(bundle))["left_out"] == []
    result = restore_bundle(bundle, tmp_path / "fresh", False)

    def canonical(root: Path) -> dict[str, bytes]:
        return {
            p.relative_to(root).as_posix(): p.read_bytes()
            for p in root.rglob("*")
            if p.is_file() and (not p.name.startswith(".") or p.name == ".distilled.json")
        }

    assert canonical(tmp_path / "fresh") == canonical(run.mem)
    assert {"team/squash.md", "ops/oncall/pager.md", "team/MEMORY.md"} <= set(result.written)
    code, out, err = run("--dir", str(tmp_path / "fresh"), "list", fmt="--json")
    assert code == 0, err
    assert json.loads(out) == json.loads(run("list", fmt="--json")[1])  # same ages: mtimes kept
