"""``memdir status`` and ``doctor`` speak of this repository's installs and the user's, and name
another repository's as elsewhere (issue #38.2: they listed every repository's, problems too)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from memdir.cli.main import main


def run(home: Path, project: Path, *argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    code = main(["--json", *argv], env=env, cwd=project, stdout=out, stderr=err)
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else err.getvalue()


def repo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    (path / ".git").mkdir(parents=True)
    return path


def test_another_repositorys_install_and_its_problem_are_named_as_elsewhere(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    other, here = repo(tmp_path, "other"), repo(tmp_path, "here")
    assert run(home, other, "install", "codex", "--project")[0] == 0
    # that install's hooks now point at a program that is gone: the other repository's problem
    settings = other / ".codex" / "hooks.json"
    settings.write_text(settings.read_text().replace("memdir", "/gone/memdir"))

    code, doctor = run(home, here, "doctor")
    assert code == 0, doctor  # nothing is installed here, so nothing here is broken
    assert [h["where"] for h in doctor["hosts"]] == ["elsewhere"]
    assert not [p for p in doctor["problems"] if str(other) in p["path"]]
    code, status = run(home, here, "status")
    assert [(h["host"], h["where"]) for h in status["hosts"]] == [("codex", "elsewhere")]

    code, there = run(home, other, "doctor")
    assert code == 1 and any(str(other) in p["path"] for p in there["problems"])
    assert [h["where"] for h in there["hosts"]] == ["here"]


def test_a_user_install_runs_everywhere(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    here = repo(tmp_path, "here")
    assert run(home, repo(tmp_path, "elsewhere"), "install", "gemini", "--user")[0] == 0
    _code, status = run(home, here, "status")
    assert [(h["host"], h["where"]) for h in status["hosts"]] == [("gemini", "here")]


def test_status_headlines_the_model_of_the_hosts_installed_here(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    here = repo(tmp_path, "here")
    for host in ("codex", "gemini"):
        assert run(home, here, "install", host, "--project")[0] == 0
    code, status = run(home, here, "status")
    assert code == 0
    models = {h["host"]: h["background_model"] for h in status["hosts"]}
    assert models["codex"].startswith("codex:") and models["gemini"].startswith("gemini:")
    # not Claude Code's, which is not installed here
    assert status["background_model"] in models.values()
