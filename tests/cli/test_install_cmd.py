"""``memdir install`` / ``uninstall`` on real files: merge, idempotence, dry run, exact undo."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from memdir.store import MemoryStore
from tests.adapters.claude_code.fakehost import FakeHost
from tests.adapters.claude_code.test_settings_merge import REAL_USER_SETTINGS

BIG_CLAUDE_JSON = {
    "numStartups": 212,
    "installMethod": "npm",
    "autoUpdates": True,
    "projects": {
        "/home/u/app": {"allowedTools": [], "mcpServers": {}, "hasTrustDialogAccepted": True}
    },
    "mcpServers": {"github": {"type": "stdio", "command": "github-mcp", "args": [], "env": {}}},
    "oauthAccount": {"emailAddress": "u@example.com"},
}


class Cli:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.home.mkdir()
        (self.project / ".git").mkdir(parents=True)

    def __call__(self, *argv: str) -> tuple[int, Any, str]:
        out, err = io.StringIO(), io.StringIO()
        env = {"HOME": str(self.home), "PATH": "/usr/bin:/bin"}
        code = main(["--json", *argv], env=env, cwd=self.project, stdout=out, stderr=err)
        return code, json.loads(out.getvalue()) if out.getvalue().strip() else None, err.getvalue()


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_install_project_then_uninstall_leaves_no_trace(cli: Cli) -> None:
    code, out, _ = cli("install", "claude-code", "--project")
    assert code == 0
    settings = json.loads((cli.project / ".claude" / "settings.json").read_text())
    events = sorted(settings["hooks"])
    assert events == ["PreCompact", "SessionEnd", "SessionStart", "Stop", "UserPromptSubmit"]
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command.endswith(" hook user-prompt-submit")
    mcp = json.loads((cli.project / ".mcp.json").read_text())
    assert mcp["mcpServers"]["memdir"]["args"][-1] == "mcp"
    assert out["backups"] == []  # nothing existed, nothing to back up

    code, again, _ = cli("install", "claude-code", "--project")
    assert code == 0 and [f["changed"] for f in again["files"]] == [False, False]

    code, _, _ = cli("uninstall", "claude-code", "--project")
    assert code == 0
    assert not (cli.project / ".claude" / "settings.json").exists()
    assert not (cli.project / ".mcp.json").exists()


def test_user_install_merges_into_existing_files_and_uninstall_restores_bytes(cli: Cli) -> None:
    settings = cli.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(REAL_USER_SETTINGS)
    settings.chmod(0o640)
    claude_json = cli.home / ".claude.json"
    original_json = json.dumps(BIG_CLAUDE_JSON, indent=2)  # no final newline, as the host writes
    claude_json.write_text(original_json)

    code, out, _ = cli("install", "claude-code", "--user")
    assert code == 0
    merged = json.loads(settings.read_text())
    assert merged["someFutureKey"] == {"nested": [1, 2, {"x": None}]}
    assert merged["hooks"]["PostToolUse"][0]["matcher"] == "Edit|Write"
    assert len(merged["hooks"]["Stop"]) == 2
    assert settings.stat().st_mode & 0o777 == 0o640
    servers = json.loads(claude_json.read_text())["mcpServers"]
    assert sorted(servers) == ["github", "memdir"]
    assert len(out["backups"]) == 2
    assert {Path(b).read_text() for b in out["backups"]} == {REAL_USER_SETTINGS, original_json}

    code, _, _ = cli("uninstall", "claude-code", "--user")
    assert code == 0
    assert settings.read_text() == REAL_USER_SETTINGS  # byte for byte, layout included
    assert claude_json.read_text() == original_json


def test_dry_run_prints_the_diff_and_writes_nothing(cli: Cli) -> None:
    settings = cli.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "model": "sonnet"\n}\n')
    code, out, _ = cli("install", "claude-code", "--project", "--dry-run")
    assert code == 0 and out["dry_run"] is True
    assert '+  "hooks": {' in out["diff"] and '-  "model": "sonnet"\n' in out["diff"]
    assert settings.read_text() == '{\n  "model": "sonnet"\n}\n'
    assert not (cli.project / ".mcp.json").exists()
    assert not (cli.home / ".memdir" / "installs.json").exists()


def test_a_broken_settings_file_is_refused_untouched(cli: Cli) -> None:
    settings = cli.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"Stop": "oops"}}')
    code, _, err = cli("install", "claude-code", "--project")
    assert code == 2 and "hooks.Stop is not a list" in err
    assert settings.read_text() == '{"hooks": {"Stop": "oops"}}'


@pytest.mark.parametrize(
    ("host", "scope", "rel"),
    [
        ("cursor", "--user", "home/.cursor/mcp.json"),
        ("cursor", "--project", "project/.cursor/mcp.json"),
        ("claude-desktop", "--user", "home/.config/Claude/claude_desktop_config.json"),
    ],
)
def test_mcp_hosts(cli: Cli, tmp_path: Path, host: str, scope: str, rel: str) -> None:
    target = tmp_path / rel
    target.parent.mkdir(parents=True)
    target.write_text('{"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}\n')
    assert cli("install", host, scope)[0] == 0
    config = json.loads(target.read_text())
    server = config["mcpServers"]["memdir"]
    assert config["theme"] == "dark" and config["mcpServers"]["other"] == {"command": "x"}
    if host == "claude-desktop":  # no project dir: the memory dir is pinned
        assert server["args"][0] == "--dir" and server["args"][-1] == "mcp"
    assert cli("uninstall", host, scope)[0] == 0
    assert json.loads(target.read_text()) == {
        "mcpServers": {"other": {"command": "x"}},
        "theme": "dark",
    }


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[tuple[FakeHost, dict[str, str]]]:
    host = FakeHost(tmp_path)
    done = host.memdir("install", "claude-code", "--project")
    assert done.returncode == 0, done.stderr
    settings = json.loads((host.project / ".claude" / "settings.json").read_text())
    commands = {
        event: groups[0]["hooks"][0]["command"] for event, groups in settings["hooks"].items()
    }
    yield host, commands
    host.stop_daemon()


def test_new_user_flow_install_then_a_session_through_the_installed_commands(
    installed: tuple[FakeHost, dict[str, str]],
) -> None:
    host, commands = installed
    MemoryStore(host.memory_dir).create(
        "Release checklist",
        "run the release checklist before tagging a release",
        "project",
        "Before tagging: bump CHANGELOG, run the smoke tests, tag from main.\n",
    )
    s = host.session()

    def run(event: str, **extra: Any) -> subprocess.CompletedProcess[str]:
        payload = json.dumps(s.payload(event, **extra))
        return subprocess.run(
            commands[{"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit",
                      "stop": "Stop", "session-end": "SessionEnd"}[event]],
            shell=True, input=payload, capture_output=True, text=True,
            cwd=host.project, env=host.env, timeout=120,
        )  # fmt: skip

    assert "Release checklist" in run("session-start", source="startup").stdout
    answer = json.loads(
        run("user-prompt-submit", prompt="what do I do before tagging a release?").stdout
    )
    assert "tag from main" in answer["hookSpecificOutput"]["additionalContext"]
    s.transcript.user("Remember that release tags are signed with the team GPG key.")
    s.reply("Will do.")
    assert run("stop").returncode == 0
    s.wait_extracted()
    notice = json.loads(
        run("user-prompt-submit", prompt="anything else to know about tags?").stdout
    )
    assert notice["systemMessage"] == "Saved 1 memory"
    assert run("session-end", reason="other").returncode == 0
    assert host.memdir("uninstall", "claude-code", "--project").returncode == 0
    assert not (host.project / ".claude" / "settings.json").exists()
    assert sys.executable  # the hooks ran under this interpreter's install


def test_uninstall_keeps_what_the_user_changed_since_the_install(cli: Cli) -> None:
    settings = cli.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "sonnet"}')
    assert cli("install", "claude-code", "--project")[0] == 0
    merged = json.loads(settings.read_text())
    merged["permissions"] = {"allow": ["Bash(make)"]}
    settings.write_text(json.dumps(merged, indent=2) + "\n")
    assert cli("uninstall", "claude-code", "--project")[0] == 0
    assert json.loads(settings.read_text()) == {
        "model": "sonnet",
        "permissions": {"allow": ["Bash(make)"]},
    }
