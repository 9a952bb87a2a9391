"""memdir inside the real Codex CLI (``codex exec``), asserted on what reached the model.

The user's way, as ``docs/hosts.md`` tells it: ``memdir install codex --project`` in a git
repository, trust the project and the hooks once (what the TUI's folder prompt and ``/hooks``
review write; here through ``codex app-server``, as the TUI does), then work. The fake model
only answers; memdir's hooks decide what Codex adds to each request.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.realhost.codex_host import CodexHost
from tests.realhost.host import ClaudeHost, wait_for

MARKER = "heron-lake-7731"
START_BLOCK = "# Memory (memdir)"
RECALL_INTRO = "Memories that may be relevant to this prompt"


def git_repo(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)


@pytest.fixture
def installed(codex: CodexHost) -> CodexHost:
    """A Codex user whose repository has memdir installed and trusted, following the docs."""
    git_repo(codex.project)
    codex.extra_env["MEMDIR_RECALL_COLD_WAIT"] = "60"  # the first prompt waits for the daemon
    codex.extra_env["MEMDIR_HOST_MODEL"] = "off"  # offline extraction (the rules)
    out = codex.memdir("install", "codex", "--project").stdout
    assert "/hooks" in out  # the one trust step is said at install
    codex.trust_project()
    trusted = codex.trust_hooks()
    assert len(trusted) == 5, trusted
    return codex


def developer_texts(codex: CodexHost) -> str:
    return "\n".join(codex.api.model_requests()[-1].message_texts("developer"))


def add_memory(codex: CodexHost, name: str, description: str, body: str) -> Path:
    codex.memdir("add", name, "--type", "project", "--description", description, "--body", body)
    return codex.memory_dir()


def test_doctor_says_hooks_need_trust_until_the_user_trusts_them(codex: CodexHost) -> None:
    git_repo(codex.project)
    codex.memdir("install", "codex", "--project")
    doctor = json.loads(codex.memdir("--json", "doctor", check=False).stdout)
    kinds = {p["kind"] for p in doctor["problems"]}
    assert "codex-project-untrusted" in kinds
    codex.trust_project()
    doctor = json.loads(codex.memdir("--json", "doctor", check=False).stdout)
    assert "codex-hooks-untrusted" in {p["kind"] for p in doctor["problems"]}
    # what Codex itself reports agrees with memdir's reading, before and after the review
    assert {h["trustStatus"] for h in codex.hooks_list()} == {"untrusted"}
    codex.trust_hooks()
    assert {h["trustStatus"] for h in codex.hooks_list()} == {"trusted"}
    doctor = json.loads(codex.memdir("--json", "doctor", check=False).stdout)
    assert not {p["kind"] for p in doctor["problems"]} & {
        "codex-hooks-untrusted",
        "codex-project-untrusted",
    }


def test_session_start_and_recall_reach_the_model_once(installed: CodexHost) -> None:
    add_memory(
        installed,
        "staging-db",
        "the staging database",
        f"The staging database is called {MARKER}; it is reset every Monday.",
    )
    installed.exec("What is the staging database called, and when is it reset?")
    first = developer_texts(installed)
    assert first.count(START_BLOCK) == 1, "instructions + MEMORY.md at session start"
    assert "staging-db" in first  # MEMORY.md's line
    assert RECALL_INTRO in first and first.count(MARKER) == 1

    installed.api.clear()
    installed.exec("Remind me: what is the staging database called?", resume=True)
    again = installed.api.model_requests()[-1].text()
    assert again.count(MARKER) == 1, "a memory surfaced earlier in the session came back"
    assert again.count(START_BLOCK) == 1, "the resumed session got the start block twice"


def test_extraction_after_a_turn_feeds_the_next_session(installed: CodexHost) -> None:
    said = f"Remember that the staging database is called {MARKER}."
    installed.exec(said)
    memory_dir = installed.memory_dir()

    def saved() -> bool:
        return any(
            MARKER in p.read_text(errors="replace")
            for p in memory_dir.glob("*.md")
            if p.name != "MEMORY.md"
        )

    wait_for(saved, "the extraction worker to save the memory")
    installed.api.clear()
    installed.exec("What is the staging database called?")  # a new session
    last = installed.api.model_requests()[-1]
    assert said not in last.message_texts("user")
    recalled = "\n".join(last.message_texts("developer")).split(RECALL_INTRO, 1)
    assert len(recalled) == 2 and MARKER in recalled[1], "the saved memory was not recalled"


def test_notes_come_back_after_a_compaction(installed: CodexHost) -> None:
    installed.api.script("We deploy to staging-kiwi first, then production.")
    installed.exec("Plan the release: the release branch is named release-mango-42.")
    installed.add_top_level("model_auto_compact_token_limit = 2000")
    installed.api.clear()
    installed.exec("What was the release branch called?", resume=True)
    assert installed.api.compaction_requests(), "Codex did not compact"
    request = installed.api.model_requests()[-1].text()
    notes = request.split("Session notes (kept across the compaction)", 1)
    assert len(notes) == 2, "SessionStart(compact) did not bring the notes back"
    assert "release-mango-42" in notes[1]
    assert request.count(START_BLOCK) == 1


def test_a_resume_that_compacts_gives_memory_md_once(installed: CodexHost) -> None:
    """Issue #38.3: the first run saved a memory (MEMORY.md changed), the resume compacts
    first, then fires SessionStart twice (resume, then compact): one MEMORY.md block, not two."""
    said = f"Remember that the staging database is called {MARKER}."
    installed.exec(f"{said} Plan the release: the release branch is named release-mango-42.")
    memory_dir = installed.memory_dir()
    wait_for(
        lambda: MARKER in (memory_dir / "MEMORY.md").read_text()
        if (memory_dir / "MEMORY.md").exists() else False,
        "the extraction to index the saved memory",
    )  # fmt: skip
    installed.add_top_level("model_auto_compact_token_limit = 2000")
    installed.api.clear()
    installed.exec("What was the release branch called?", resume=True)
    assert installed.api.compaction_requests(), "Codex did not compact"
    request = installed.api.model_requests()[-1].text()
    log = installed.memdir("hook", "log", "--limit", "20").stdout
    assert request.count("## MEMORY.md") == 1, log
    assert request.count(START_BLOCK) == 1, log
    assert "Session notes (kept across the compaction)" in request


def test_a_memory_saved_in_claude_code_surfaces_at_the_next_codex_prompt(
    host: ClaudeHost, installed: CodexHost
) -> None:
    """One repository, one memory dir, whichever host runs (both share HOME and project)."""
    assert host.project == installed.project
    host.install()
    said = f"Remember that the staging database is called {MARKER}."
    host.prompt(said)
    memory_dir = installed.memory_dir()
    assert host.memory_dir() == memory_dir
    wait_for(
        lambda: any(
            MARKER in p.read_text() for p in memory_dir.glob("*.md") if p.name != "MEMORY.md"
        ),
        "Claude Code's extraction to save the memory",
    )
    installed.exec("What is the staging database called?")
    assert MARKER in developer_texts(installed)


def test_uninstall_restores_the_config_bytes(codex: CodexHost) -> None:
    git_repo(codex.project)
    config = codex.project / ".codex" / "config.toml"
    config.parent.mkdir()
    original = (
        "# the team's codex settings\n"
        'model = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    )
    config.write_text(original)
    codex.memdir("install", "codex", "--project")
    assert "[mcp_servers.memdir]" in config.read_text()
    codex.memdir("uninstall", "codex", "--project")
    assert config.read_text() == original
    assert not (codex.project / ".codex" / "hooks.json").exists()


@pytest.mark.parametrize(
    "breakage",
    ["garbage MEMORY.md", "memory dir is a file", "FIFO at MEMORY.md", "no memdir", "bad setting"],
)
def test_a_bad_day_never_blocks_codex(installed: CodexHost, breakage: str) -> None:
    import os

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
    elif breakage == "no memdir":  # the installed commands no longer resolve
        hooks = installed.project / ".codex" / "hooks.json"
        first = json.loads(hooks.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
        hooks.write_text(hooks.read_text().replace(first.split(" ")[0], "memdir-not-on-path"))
        config = installed.project / ".codex" / "config.toml"
        config.write_text(config.read_text().replace('command = "', 'command = "/nonexistent/', 1))
        installed.trust_hooks()  # the user reviews the changed hooks again
    else:
        installed.extra_env["MEMDIR_HOOK_EXTRACT"] = "sometimes"
    installed.api.script("Still here.")
    proc = installed.exec("Say something.", timeout=60)
    assert "Still here." in proc.stdout
    assert installed.api.model_requests(), "no model request: the turn was blocked"


def test_two_hosts_at_the_same_moment_lose_no_write(host: ClaudeHost, installed: CodexHost) -> None:
    """Claude Code and Codex in one repository at once (real processes): both extractions
    write into the one memory dir; neither memory nor its MEMORY.md line is lost."""
    import threading

    host.install()
    errors: list[BaseException] = []

    def run(fn: Any) -> None:
        try:
            fn()
        except BaseException as exc:  # reported below, on the test's thread
            errors.append(exc)

    jobs = [
        threading.Thread(
            target=run, args=(lambda: host.prompt("Remember that the cache server is kiwi-9."),)
        ),
        threading.Thread(
            target=run,
            args=(lambda: installed.exec("Remember that the queue server is mango-4."),),
        ),
    ]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
    assert not errors, errors
    memory_dir = installed.memory_dir()

    def both() -> bool:
        texts = "\n".join(p.read_text() for p in memory_dir.glob("*.md") if p.name != "MEMORY.md")
        return "kiwi-9" in texts and "mango-4" in texts

    wait_for(both, "both hosts' extractions")

    def both_indexed() -> bool:  # a memory file lands a moment before its MEMORY.md line
        index = (memory_dir / "MEMORY.md").read_text()
        return "kiwi-9" in index and "mango-4" in index

    wait_for(both_indexed, "both memories' MEMORY.md lines")


def test_a_memory_the_code_outgrew_reaches_the_model_as_a_note(installed: CodexHost) -> None:
    """Issue #37 in the real CLI: after the commit that replaced psycopg2, ``codex exec`` gets
    the one-line note, not the stale fact; confirmed after a fix, the memory is served again."""
    from tests.evidence.conftest import DB_V1, DB_V2, Repo

    # the hooks give git 0.15 s; on a loaded machine the check would end "unchecked" and the
    # memory be served as it is: this test is about the verdict, not the machine's speed
    installed.extra_env["MEMDIR_EVIDENCE_SECONDS"] = "20"
    repo = Repo(installed.project)  # the user's repository (already a git work tree)
    repo.commit("db layer", {"src/db.py": DB_V1})
    fact = f"`src/db.py` opens connections with `psycopg2` ({MARKER})."
    memory_dir = add_memory(installed, "db-driver", "how the app talks to PostgreSQL", fact)
    [memory] = list(memory_dir.glob("db*driver*.md"))
    repo.written_now(memory)

    installed.exec("How does the app talk to PostgreSQL? I need a query on the orders table.")
    assert MARKER in developer_texts(installed)

    repo.commit("switch src/db.py to asyncpg", {"src/db.py": DB_V2})
    installed.exec("How does the app talk to PostgreSQL? I need a query on the orders table.")
    seen = developer_texts(installed)
    assert MARKER not in seen
    assert "memdir held back the memory" in seen and "psycopg2" in seen

    memory.write_text(memory.read_text().replace("`psycopg2`", "`asyncpg`"))
    installed.memdir("stale", "--confirm", memory.name)
    installed.exec("How does the app talk to PostgreSQL? I need a query on the orders table.")
    assert MARKER in developer_texts(installed)
