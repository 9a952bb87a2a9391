"""``memdir install`` / ``uninstall`` on real files: merge, idempotence, dry run, exact undo."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost
from tests.adapters.hooks.test_settings_merge import REAL_USER_SETTINGS

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


def _hooks(settings: dict[str, Any]) -> list[dict[str, Any]]:
    return [h for groups in settings["hooks"].values() for g in groups for h in g["hooks"]]


def test_no_hook_is_async_and_a_reinstall_drops_an_old_async(cli: Cli) -> None:
    """Issue #18.8: in `claude -p` the host kills an `async` hook still running at exit and then
    waits ~1.5 s; `stop` and `session-end` answer at once instead (their work is detached)."""
    assert cli("install", "claude-code", "--project")[0] == 0
    path = cli.project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    assert not any("async" in hook for hook in _hooks(settings))
    # what an earlier memdir wrote: stop and session-end async, session-end with 60 s
    for event in ("Stop", "SessionEnd"):
        hook = settings["hooks"][event][0]["hooks"][0]
        hook["async"], hook["timeout"] = True, 60
    settings["hooks"]["Stop"][0]["hooks"].append(
        {"type": "command", "command": "mine", "async": True}
    )
    path.write_text(json.dumps(settings, indent=2) + "\n")

    code, out, _ = cli("install", "claude-code", "--project")
    assert code == 0 and out["files"][0]["changed"] is True
    after = json.loads(path.read_text())
    mine = [h for h in _hooks(after) if h["command"] == "mine"]
    assert mine == [{"type": "command", "command": "mine", "async": True}]  # not memdir's
    ours = [h for h in _hooks(after) if h["command"] != "mine"]
    assert len(ours) == 5 and not any("async" in hook for hook in ours)
    assert after["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == 15


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
    # no hooks: the agent's memory_recall is the only recall, so the server preloads it
    assert server["args"][-2:] == ["mcp", "--preload"]
    if host == "claude-desktop":  # no project dir: the memory dir is pinned
        assert server["args"][0] == "--dir"
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
    # saved well before this session (a write within the clock slack of a turn counts as the
    # agent's own, and Stop extraction would rightly skip that turn)
    old = time.time() - 3600
    os.utime(host.memory_dir / "release_checklist.md", (old, old))
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
    s.wait_ended()  # its worker finishes before the project goes
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


VENV_BIN = Path(sys.executable).parent


def _installed_command(cli: Cli, env: dict[str, str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    argv = ["--json", "install", "claude-code", "--project"]
    assert main(argv, env=env, cwd=cli.project, stdout=out, stderr=err) == 0, err.getvalue()
    settings = json.loads((cli.project / ".claude" / "settings.json").read_text())
    return str(settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"])


def test_an_activated_venv_is_not_the_hosts_path_so_install_writes_the_absolute_path(
    cli: Cli,
) -> None:
    """The real-host defect: installed from a terminal with the venv on PATH, the host started
    without it got exit 127 on every hook. The hook must run from a shell without the venv."""
    env = {"HOME": str(cli.home), "PATH": f"{VENV_BIN}:/usr/bin:/bin"}
    command = _installed_command(cli, env)
    assert command == f"{VENV_BIN / 'memdir'} hook user-prompt-submit"
    payload = json.dumps({"session_id": "s1", "cwd": str(cli.project), "prompt": "hi there"})
    host_env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    host_env.update(HOME=str(cli.home), PATH="/usr/bin:/bin", MEMDIR_HOOK_DAEMON="0")
    proc = subprocess.run(
        ["/bin/sh", "-c", command],
        input=payload,
        capture_output=True,
        text=True,
        cwd=cli.project,
        env=host_env,
        timeout=120,
    )
    assert proc.returncode == 0 and "memdir hook" not in proc.stderr, proc.stderr


def test_plain_memdir_when_a_login_shell_finds_this_install(cli: Cli) -> None:
    (cli.home / ".profile").write_text(f'PATH="{VENV_BIN}:$PATH"\n')
    env = {"HOME": str(cli.home), "PATH": "/usr/bin:/bin"}
    assert _installed_command(cli, env) == "memdir hook user-prompt-submit"


def test_doctor_names_installed_commands_the_host_would_not_find(cli: Cli) -> None:
    (cli.home / ".profile").write_text(f'PATH="{VENV_BIN}:$PATH"\n')
    env = {"HOME": str(cli.home), "PATH": "/usr/bin:/bin"}
    _installed_command(cli, env)  # plain `memdir`: found today
    code, out, _ = cli("doctor")
    assert [p for p in out["problems"] if p["kind"] == "install-unresolved"] == []
    (cli.home / ".profile").unlink()  # the user's PATH changed since
    code, out, _ = cli("doctor")
    unresolved = [p for p in out["problems"] if p["kind"] == "install-unresolved"]
    assert code == 1
    assert sorted(Path(p["path"]).name for p in unresolved) == [".mcp.json", "settings.json"]
    assert "exit 127" in unresolved[0]["detail"]


def test_doctor_names_an_earlier_installs_async_hooks(cli: Cli) -> None:
    assert cli("install", "claude-code", "--project")[0] == 0
    code, out, _ = cli("doctor")
    assert [p for p in out["problems"] if p["kind"] == "install-async"] == []
    path = cli.project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    for event in ("Stop", "SessionEnd"):  # what memdir wrote before it stopped using async
        settings["hooks"][event][0]["hooks"][0]["async"] = True
    path.write_text(json.dumps(settings, indent=2) + "\n")
    code, out, _ = cli("doctor")
    [problem] = [p for p in out["problems"] if p["kind"] == "install-async"]
    assert code == 1 and Path(problem["path"]) == path
    assert (
        "session-end and stop" in problem["detail"] and "install claude-code" in problem["detail"]
    )
    assert cli("install", "claude-code", "--project")[0] == 0  # what the message says to do
    code, out, _ = cli("doctor")
    assert [p for p in out["problems"] if p["kind"] == "install-async"] == []


def _plugin(cli: Cli, *, enabled: bool | None = None) -> None:
    plugins = cli.home / ".claude" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    entry = {"scope": "user", "installPath": str(plugins / "cache"), "version": "0.1.0"}
    (plugins / "installed_plugins.json").write_text(
        json.dumps({"version": 2, "plugins": {"memdir@memdir": [entry]}})
    )
    if enabled is not None:
        settings = {"enabledPlugins": {"memdir@memdir": enabled}}
        (cli.home / ".claude" / "settings.json").write_text(json.dumps(settings))


def test_install_refuses_when_the_plugin_already_runs_the_hooks(cli: Cli) -> None:
    _plugin(cli)
    code, _, err = cli("install", "claude-code", "--project")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "plugin memdir@memdir" in err and "twice" in err
    assert not (cli.project / ".claude" / "settings.json").exists()
    _plugin(cli, enabled=False)  # disabled in the host: no duplicate
    code, _, err = cli("install", "claude-code", "--project")
    assert code == 0, err


def test_install_refuses_a_second_scope(cli: Cli) -> None:
    assert cli("install", "claude-code", "--project")[0] == 0
    code, _, err = cli("install", "claude-code", "--user")
    assert code == 2 and "memdir uninstall claude-code --project" in err
    assert cli("install", "claude-code", "--project")[0] == 0  # the same scope again is fine


def test_doctor_names_a_plugin_installed_after_a_project_install(cli: Cli) -> None:
    assert cli("install", "claude-code", "--project")[0] == 0
    _plugin(cli)  # installed in Claude Code afterwards: install could not refuse it
    code, out, _ = cli("doctor")
    duplicate = [p for p in out["problems"] if p["kind"] == "install-duplicate"]
    assert code == 1 and len(duplicate) == 1
    assert "plugin memdir@memdir" in duplicate[0]["detail"]
