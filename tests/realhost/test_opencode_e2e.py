"""The real OpenCode CLI (pinned ``opencode-ai``) with memdir's plugin, against a fake
OpenAI-compatible API on 127.0.0.1: what reaches the model request, what extraction saves,
what an uninstall leaves, and that a broken memdir never blocks a prompt."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.realhost.host import ClaudeHost, wait_for
from tests.realhost.opencode_host import OpenCodeHost, is_title

DEPLOY = "We deploy with `make ship`, never `kubectl apply` by hand."
LESSON = "Don't mock the database in these tests, we got burned by a mocked migration."


def _setup(host: OpenCodeHost, *scope: str) -> None:
    subprocess.run(["git", "init", "-q", str(host.project)], check=True, capture_output=True)
    host.extra_env["MEMDIR_HOST_MODEL"] = "off"  # the offline rules extract
    host.extra_env["MEMDIR_RECALL_COLD_WAIT"] = "60"  # the first prompt waits for the daemon
    host.memdir("install", "opencode", *(scope or ("--project",)))


def _add_deploy_memory(host: OpenCodeHost) -> None:
    host.memdir(
        "add", "Deploy with make ship", "-t", "project",
        "-d", "how we deploy: make ship, never kubectl apply", "-b", DEPLOY,
    )  # fmt: skip


def _saved(memory_dir: Path, needle: str) -> bool:
    return any(needle in p.read_text() for p in memory_dir.glob("*.md") if p.name != "MEMORY.md")


def test_recall_reaches_the_request_once_per_session(opencode: OpenCodeHost) -> None:
    _setup(opencode)
    _add_deploy_memory(opencode)
    opencode.prompt("How do I deploy this service to production?")
    first = opencode.main_requests()[-1]
    assert "make ship" in first.text(), opencode.memdir("hook", "log").stdout
    assert "# Memory (memdir)" in first.text()  # session start: instructions + MEMORY.md
    opencode.prompt("And how do I deploy the hotfix for staging?", resume=True)
    second = opencode.main_requests()[-1]
    assert "hotfix for staging" in second.text()
    # the first turn's recall is in the history, once; the second turn adds nothing again
    assert second.text().count(DEPLOY) == 1
    assert second.text().count("# Memory (memdir)") == 1
    assert not opencode.api.escapes or all("127.0.0.1" not in e for e in opencode.api.escapes)


def test_extraction_at_idle_feeds_the_next_session(opencode: OpenCodeHost) -> None:
    _setup(opencode)
    opencode.prompt(LESSON)
    memory_dir = opencode.memory_dir()
    wait_for(lambda: _saved(memory_dir, "mocked migration"), "extraction at session.idle")
    opencode.prompt("How should I write the database tests for billing?")
    assert "mocked migration" in opencode.main_requests()[-1].text()
    stops = [r for r in opencode.hook_log() if r["event"] == "stop"]
    assert stops and all(r.get("host", "opencode") == "opencode" for r in stops)


def test_a_claude_code_memory_surfaces_in_opencode(
    host: ClaudeHost, opencode: OpenCodeHost
) -> None:
    """Issue #28's "done when": a Claude Code session saves the deploy rule, the next OpenCode
    request about deploying carries it. Both real CLIs, one scratch repository."""
    assert host.project == opencode.project and host.home == opencode.home
    _setup(opencode)
    host.extra_env["MEMDIR_HOST_MODEL"] = "off"
    host.install()
    host.prompt("Remember this: we deploy with `make ship`, never `kubectl apply` by hand.")
    memory_dir = host.memory_dir()
    assert opencode.memory_dir() == memory_dir  # one repository, one memory dir
    wait_for(lambda: _saved(memory_dir, "make ship"), "Claude Code's extraction")
    opencode.prompt("How do I deploy the new release?")
    request = opencode.main_requests()[-1].text()
    log = json.dumps(opencode.hook_log(), indent=1)[-6000:]
    assert "make ship" in request and "kubectl apply" in request, log


def test_notes_come_back_after_opencodes_own_compaction(opencode: OpenCodeHost) -> None:
    """A turn that reports more tokens than the model's context makes OpenCode compact the
    session (its summariser request, then a synthetic "Continue"); the next prompt — a new
    ``opencode run --continue`` process — carries memdir's instructions and notes again."""
    _setup(opencode)
    config = json.loads(opencode.user_config_path.read_text())
    model = config["provider"]["fake"]["models"]["fake-model"]
    model["limit"] = {"context": 8000, "output": 1000}
    opencode.user_config_path.write_text(json.dumps(config))
    overflowed: list[str] = []

    def tokens(request: Any) -> int:
        if is_title(request) or overflowed:
            return 10
        overflowed.append(request.path)
        return 20_000  # the first turn fills the context: OpenCode compacts after it

    opencode.api.prompt_tokens = tokens
    opencode.prompt("We are moving billing to Postgres 16; the schema diff is the next step.")
    summariser = [r for r in opencode.main_requests() if "<conversation>" in r.text()]
    assert overflowed and summariser, [r.text()[:200] for r in opencode.main_requests()]
    assert "pre-compact" in [row["event"] for row in opencode.hook_log()]
    opencode.prompt("What was the next step again?", resume=True)
    after = opencode.main_requests()[-1].text()
    assert "What was the next step again?" in after
    assert "# Memory (memdir)" in after  # the instructions left with the compacted turns
    assert "## Session notes" in after and "Postgres 16" in after.split("## Session notes")[1]


def test_uninstall_restores_the_config_and_the_plugin_dir(opencode: OpenCodeHost) -> None:
    before = opencode.user_config_path.read_bytes()
    plugins = opencode.config_home / "opencode" / "plugins"
    _setup(opencode, "--user")
    assert (plugins / "memdir.js").is_file()
    config = json.loads(opencode.user_config_path.read_text())
    assert config["mcp"]["memdir"]["type"] == "local"
    _add_deploy_memory(opencode)
    opencode.prompt("How do I deploy?")  # the user plugin is loaded from outside the project
    assert "make ship" in opencode.main_requests()[-1].text()
    opencode.memdir("uninstall", "opencode", "--user")
    assert opencode.user_config_path.read_bytes() == before
    assert not plugins.exists()
    opencode.memdir("install", "opencode", "--project")
    opencode.prompt("How do I deploy?")  # OpenCode adds its own "$schema" and a .gitignore
    assert (opencode.project / ".opencode" / ".gitignore").is_file()
    opencode.memdir("uninstall", "opencode", "--project")
    assert not (opencode.project / ".opencode").exists()
    assert not (opencode.project / "opencode.json").exists()


def test_a_bad_day_never_blocks_opencode(opencode: OpenCodeHost) -> None:
    _setup(opencode)
    memory_dir = opencode.memory_dir()
    memory_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / "MEMORY.md").write_bytes(b"\xff\xfe garbage \x00\n- [x](../../etc/passwd)\n")
    opencode.prompt("First prompt with a garbage MEMORY.md")
    opencode.stop_daemon()  # the daemon down: the plugin falls back to a process
    opencode.prompt("Second prompt with the daemon down")
    for child in memory_dir.iterdir():
        child.unlink()
    memory_dir.rmdir()
    memory_dir.write_text("not a directory\n")  # the memory dir is a file
    opencode.prompt("Third prompt with the memory dir a file")
    plugin = opencode.project / ".opencode" / "plugins" / "memdir.js"
    text = plugin.read_text()
    start = text.index("const COMMAND = ") + len("const COMMAND = ")
    end = text.index("\n", start)
    plugin.write_text(text[:start] + json.dumps(["/nonexistent/memdir"]) + text[end:])
    opencode.extra_env["PATH"] = f"{os.path.dirname(opencode.cli)}:/usr/bin:/bin"
    opencode.prompt("Fourth prompt with memdir gone")  # memdir missing from PATH
    asked = [r.text() for r in opencode.main_requests()]
    for n in ("First", "Second", "Third", "Fourth"):
        assert any(n in t for t in asked), f"the {n.lower()} prompt never reached the model"
