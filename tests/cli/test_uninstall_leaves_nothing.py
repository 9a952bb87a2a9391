"""`memdir uninstall <host> --project` leaves the repository as it was (issue #38.1): no empty
`.claude/`, `.codex/`, `.gemini/`, `.cursor/` the install created, and no package install a host
made into a directory only memdir's install created (OpenCode's plugin SDK: 64 MB of
`node_modules`). What the user put there stays."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from memdir.adapters.hosts import DIALECTS
from memdir.cli.main import main


def run(home: Path, project: Path, *argv: str) -> int:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    return main(["--json", *argv], env=env, cwd=project, stdout=io.StringIO(), stderr=io.StringIO())


def status(project: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(project), "status", "--porcelain", "--ignored", "--untracked-files=all"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip


@pytest.fixture(params=["project", "项目 café"])  # a careless user's folder name too
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / request.param
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "README.md").write_text("hello\n")
    return home, project


@pytest.mark.parametrize("host", sorted(DIALECTS))
def test_a_project_install_and_uninstall_leave_git_status_as_it_was(
    repo: tuple[Path, Path], host: str
) -> None:
    home, project = repo
    before = status(project)
    dirs_before = sorted(p for p in project.rglob("*") if ".git" not in p.parts)
    assert run(home, project, "install", host, "--project") == 0
    assert status(project) != before  # it did write something
    assert run(home, project, "uninstall", host, "--project") == 0
    assert status(project) == before
    assert sorted(p for p in project.rglob("*") if ".git" not in p.parts) == dirs_before


def test_a_dir_the_user_put_files_in_stays(repo: tuple[Path, Path]) -> None:
    home, project = repo
    assert run(home, project, "install", "claude-code", "--project") == 0
    (project / ".claude" / "settings.local.json").write_text("{}\n")  # the user's own
    assert run(home, project, "uninstall", "claude-code", "--project") == 0
    assert (project / ".claude" / "settings.local.json").read_text() == "{}\n"


def _opencode_installs_its_sdk(directory: Path, extra: dict[str, str] | None = None) -> None:
    """What OpenCode does in a config dir it loads plugins from: `npm install` of its plugin
    SDK (package.json, a lock file, node_modules)."""
    deps = {"@opencode-ai/plugin": "1.18.33", **(extra or {})}
    (directory / "package.json").write_text(json.dumps({"dependencies": deps}, indent=2) + "\n")
    (directory / "package-lock.json").write_text("{}\n")
    module = directory / "node_modules" / "@opencode-ai" / "plugin"
    module.mkdir(parents=True)
    (module / "index.js").write_text("export {}\n")
    (directory / ".gitignore").write_text(
        "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore"
    )


def test_opencodes_own_sdk_install_goes_with_the_dir_memdir_made(repo: tuple[Path, Path]) -> None:
    home, project = repo
    before = status(project)
    assert run(home, project, "install", "opencode", "--project") == 0
    _opencode_installs_its_sdk(project / ".opencode")
    assert run(home, project, "uninstall", "opencode", "--project") == 0
    assert not (project / ".opencode").exists()
    assert status(project) == before


def test_a_package_the_user_added_keeps_the_install(repo: tuple[Path, Path]) -> None:
    home, project = repo
    assert run(home, project, "install", "opencode", "--project") == 0
    _opencode_installs_its_sdk(project / ".opencode", {"left-pad": "1.3.0"})
    assert run(home, project, "uninstall", "opencode", "--project") == 0
    assert (project / ".opencode" / "node_modules").is_dir()  # the user's dependency: kept
    assert json.loads((project / ".opencode" / "package.json").read_text())["dependencies"]
