"""memdir inside the real Gemini CLI (``gemini -p``), asserted on what reached the model.

The user's way, as ``docs/hosts.md`` tells it: ``memdir install gemini --project`` in a git
repository, the folder trusted (headless: ``GEMINI_CLI_TRUST_WORKSPACE=true``, which the
harness sets), then work. The fake model only answers; memdir's hooks decide what Gemini adds
to each request. A missing CLI fails the suite (``conftest.gemini_cli``), it never skips.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.realhost.gemini_host import GeminiHost
from tests.realhost.host import wait_for

MARKER = "heron-lake-7731"
START_BLOCK = "# Memory (memdir)"
RECALL_INTRO = "Memories that may be relevant to this prompt"
NOTES = "Session notes (kept across the compaction)"


@pytest.fixture
def installed(gemini: GeminiHost) -> GeminiHost:
    """A Gemini CLI user whose repository has memdir installed, following the docs."""
    subprocess.run(["git", "init", "-q", str(gemini.project)], check=True, capture_output=True)
    gemini.extra_env["MEMDIR_RECALL_COLD_WAIT"] = "60"  # the first prompt waits for the daemon
    gemini.extra_env["MEMDIR_HOST_MODEL"] = "off"  # offline extraction (the rules)
    out = gemini.memdir("install", "gemini", "--project").stdout
    assert "GEMINI_CLI_TRUST_WORKSPACE=true" in out  # the trust step is said at install
    return gemini


def last_request(gemini: GeminiHost) -> str:
    return gemini.api.main_requests()[-1].text()


def saved_texts(memory_dir: Path) -> str:
    return "\n".join(
        p.read_text(errors="replace") for p in memory_dir.glob("*.md") if p.name != "MEMORY.md"
    )


def test_session_start_and_recall_reach_the_model_once_across_resumes(
    installed: GeminiHost,
) -> None:
    installed.memdir(
        "add",
        "staging-db",
        "--type",
        "project",
        "--description",
        "the staging database",
        "--body",
        f"The staging database is called {MARKER}; it is reset every Monday.",
    )
    first_prompt = "What is the staging database called, and when is it reset?"
    installed.prompt(first_prompt)
    first = last_request(installed)
    assert first.count(START_BLOCK) == 1, "instructions + MEMORY.md at session start"
    assert "staging-db" in first  # MEMORY.md's line
    assert RECALL_INTRO in first and first.count(MARKER) == 1

    for again in ("Remind me: what is the staging database called?", "And its reset day?"):
        installed.api.clear()
        installed.prompt(again, resume=True)
        resumed = last_request(installed)
        # regression: a resume drops a stored prompt that starts with <hook_context>
        assert first_prompt in resumed, "the resume lost the first prompt"
        assert resumed.count(START_BLOCK) == 1, "the start block is not there exactly once"
        assert resumed.count(MARKER) == 1, "a memory surfaced earlier came back"


def test_extraction_after_a_turn_feeds_the_next_session(installed: GeminiHost) -> None:
    said = f"Remember that the staging database is called {MARKER}."
    installed.prompt(said)
    memory_dir = installed.memory_dir()
    wait_for(lambda: MARKER in saved_texts(memory_dir), "the extraction worker to save it")
    installed.api.clear()
    installed.prompt("What is the staging database called?")  # a new session
    request = installed.api.main_requests()[-1]
    assert said not in request.user_texts()  # a new session: the turn itself is not replayed
    recalled = request.text().split(RECALL_INTRO, 1)
    assert len(recalled) == 2 and MARKER in recalled[1], "the saved memory was not recalled"


def test_notes_come_back_after_a_compression(installed: GeminiHost) -> None:
    plan = (
        "Plan the release with me. The release branch is named release-mango-42; we deploy to "
        "staging-kiwi first, then production, after the smoke tests pass on staging. "
    ) * 3  # longer than the compression's summary, so compressing pays off
    installed.prompt(plan)
    settings = json.loads(installed.user_settings_path.read_text())
    settings["model"] = {"compressionThreshold": 0.0001}  # compress before every turn
    installed.user_settings_path.write_text(json.dumps(settings))
    installed.prompt("Which smoke tests come first?", resume=True)  # compresses
    installed.api.clear()
    installed.prompt("What was the release branch called?", resume=True)
    assert installed.api.side_requests(), "no compression request"
    request = last_request(installed)
    notes = request.split(NOTES, 1)
    log = installed.memdir("hook", "log", "--limit", "30").stdout
    assert len(notes) == 2, f"the notes did not come back after the compression\n{log}"
    assert "release-mango-42" in notes[1]
    assert request.count(START_BLOCK) == 1


def test_uninstall_restores_the_settings_bytes(gemini: GeminiHost) -> None:
    subprocess.run(["git", "init", "-q", str(gemini.project)], check=True, capture_output=True)
    original = (
        '{\n    "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": '
        '[{"type": "command", "command": "echo guard"}]}]},\n'
        '    "mcpServers": {"docs": {"command": "docs-mcp"}},\n    "ui": {"theme": "ANSI"}\n}'
    )
    path = gemini.project_settings_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(original)
    gemini.memdir("install", "gemini", "--project")
    assert '"memdir"' in path.read_text()
    gemini.api.script("Installed and answering.")
    assert "Installed and answering." in gemini.prompt("Say something.").stdout
    gemini.memdir("uninstall", "gemini", "--project")
    assert path.read_text() == original


@pytest.mark.parametrize(
    "breakage",
    ["garbage MEMORY.md", "memory dir is a file", "FIFO at MEMORY.md", "no memdir", "bad setting"],
)
def test_a_bad_day_never_blocks_gemini(installed: GeminiHost, breakage: str) -> None:
    memory_dir = installed.memory_dir()
    memory_dir.mkdir(parents=True, exist_ok=True)
    if breakage == "garbage MEMORY.md":
        (memory_dir / "MEMORY.md").write_bytes(b"\xff\xfe\x00garbage" * 1000)
    elif breakage == "memory dir is a file":
        for p in memory_dir.iterdir():
            p.unlink()
        memory_dir.rmdir()
        memory_dir.write_text("not a dir")
    elif breakage == "FIFO at MEMORY.md":
        os.mkfifo(memory_dir / "MEMORY.md")
    elif breakage == "no memdir":  # the installed commands no longer resolve: exit 127
        path = installed.project_settings_path
        settings = json.loads(path.read_text())
        command = settings["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
        text = path.read_text().replace(command.split(" ")[0], "memdir-not-on-path")
        path.write_text(text)
    else:
        installed.extra_env["MEMDIR_HOOK_EXTRACT"] = "sometimes"
    installed.api.script("Still here.")
    proc = installed.prompt("Say something about the staging database.", timeout=60)
    assert proc.returncode == 0 and "Still here." in proc.stdout
    assert installed.api.main_requests(), "no model request: the turn was blocked"
