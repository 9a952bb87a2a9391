"""Qwen Code and GitHub Copilot CLI, each the real pinned CLI with memdir installed as a user
would, against a fake OpenAI-compatible API on 127.0.0.1: recall reaches the request once per
session (one-shot, continued, and across tool-result continuations), what extraction saves
reaches the next session, and an uninstall leaves the repository as it was."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.realhost.fake_openai import FakeOpenAI, FunctionCall, Reply
from tests.realhost.host import wait_for
from tests.realhost.npm_host import KINDS, NpmHost

DEPLOY = "We deploy with `make ship`, never `kubectl apply` by hand."
LESSON = "Don't mock the database in these tests, we got burned by a mocked migration."
ECHO = {"command": "echo hi", "description": "hi"}
SHELL_TOOL = {
    "qwen": ("run_shell_command", ECHO),
    "copilot": ("bash", ECHO),
    "pi": ("bash", ECHO),
    "cline": ("run_commands", {"commands": ["echo hi"]}),
}


def _git(project: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(project), *args], check=True, capture_output=True, text=True
    ).stdout


def _setup(host: NpmHost, scope: str = "--project") -> None:
    _git(host.project, "init", "-q")
    host.extra_env["MEMDIR_HOST_MODEL"] = "off"  # the offline rules extract
    host.extra_env["MEMDIR_RECALL_COLD_WAIT"] = "60"  # the first prompt waits for the daemon
    host.memdir("install", host.kind.name, scope)
    host.trust_project()


def _add_deploy_memory(host: NpmHost) -> None:
    host.memdir(
        "add", "Deploy with make ship", "-t", "project",
        "-d", "how we deploy: make ship, never kubectl apply", "-b", DEPLOY,
    )  # fmt: skip


def _saved(memory_dir: Path, needle: str) -> bool:
    return any(needle in p.read_text() for p in memory_dir.glob("*.md") if p.name != "MEMORY.md")


def test_recall_reaches_the_request_once_per_session(npm_host: NpmHost) -> None:
    _setup(npm_host)
    _add_deploy_memory(npm_host)
    # a tool call first: Qwen Code fires its prompt hook again for the continuation
    call = FunctionCall(*SHELL_TOOL[npm_host.kind.name])
    npm_host.api.script(Reply(calls=(call,)), "Deploy with make ship.")
    npm_host.prompt("How do I deploy this service to production?")
    requests = npm_host.main_requests()
    log = npm_host.memdir("hook", "log", "--limit", "20").stdout
    assert len(requests) >= 2, log
    for request in requests:  # the first turn and its tool-result continuation
        assert request.text().count(DEPLOY) == 1, log
        assert request.text().count("# Memory (memdir)") == 1, log
    npm_host.prompt("And how do I deploy the hotfix for staging?", resume=True)
    second = npm_host.main_requests()[-1].text()
    assert "hotfix for staging" in second
    assert second.count(DEPLOY) == 1  # in the history once, not recalled again
    assert second.count("# Memory (memdir)") == 1
    assert not npm_host.escapes()


def test_extraction_feeds_the_next_session(npm_host: NpmHost) -> None:
    _setup(npm_host)
    npm_host.prompt(LESSON)
    memory_dir = npm_host.memory_dir()
    wait_for(lambda: _saved(memory_dir, "mocked migration"), "extraction at the turn's end")
    npm_host.prompt("How should I write the database tests for billing?")
    assert "mocked migration" in npm_host.main_requests()[-1].text()


def test_uninstall_leaves_the_repository_and_home_as_they_were(npm_host: NpmHost) -> None:
    _git(npm_host.project, "init", "-q")
    before = _git(npm_host.project, "status", "--porcelain", "--ignored")
    home_before = sorted(str(p) for p in npm_host.home.rglob("*") if p.is_file())
    configs = {p: p.read_bytes() for p in npm_host.home.rglob("*.json") if p.is_file()}
    npm_host.memdir("install", npm_host.kind.name, "--project")
    npm_host.memdir("uninstall", npm_host.kind.name, "--project")
    assert _git(npm_host.project, "status", "--porcelain", "--ignored") == before
    assert {p: p.read_bytes() for p in configs} == configs
    left = sorted(str(p) for p in npm_host.home.rglob("*") if p.is_file())
    assert [p for p in left if p not in home_before and "/.memdir/" not in p] == []


def test_a_lesson_taught_in_pi_reaches_copilot_then_qwen_then_cline_once_each(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """Issue #38's "done when": one repository with pi, Copilot CLI, Qwen Code and Cline
    installed from npm; a lesson taught in a pi session is in the next Copilot CLI prompt's
    request, then in Qwen Code's and Cline's, once each."""
    hosts: dict[str, NpmHost] = {}
    for name in ("pi", "copilot", "qwen", "cline"):
        kind = KINDS[name]
        cli = kind.find_cli()
        assert cli is not None, kind.missing
        hosts[name] = NpmHost(kind=kind, cli=cli, api=fake_openai, root=tmp_path)
    try:
        _git(tmp_path / "project", "init", "-q")
        for host in hosts.values():
            host.extra_env.update(MEMDIR_HOST_MODEL="off", MEMDIR_RECALL_COLD_WAIT="60")
            host.memdir("install", host.kind.name, "--project")
            host.trust_project()
        hosts["pi"].prompt(LESSON)
        memory_dir = hosts["pi"].memory_dir()
        wait_for(lambda: _saved(memory_dir, "mocked migration"), "pi's extraction")
        [saved] = [p for p in memory_dir.glob("*.md") if "mocked migration" in p.read_text()]
        for name in ("copilot", "qwen", "cline"):
            host = hosts[name]
            assert host.memory_dir() == memory_dir  # one repository, one memory dir
            fake_openai.clear()
            host.prompt("How should I write the database tests for the billing module?")
            request = host.main_requests()[-1].text()
            log = host.memdir("hook", "log", "--limit", "20").stdout
            assert request.count(f"{saved.name}:") == 1, f"{name}\n{log}"  # once, recalled
    finally:
        for host in hosts.values():
            host.stop_daemon()
