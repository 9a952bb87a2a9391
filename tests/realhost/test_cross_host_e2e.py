"""Issue #27's "done when": one repository, a Codex session teaches, a Gemini CLI session knows.

In a scratch git repository, ``memdir install codex --project`` and ``memdir install gemini
--project`` as a new user would (the docs' trust steps included); a Codex session in which the
user says "don't mock the database in these tests, we got burned by a mocked migration"; then
a Gemini CLI session in the same repository asking how to write the database tests gets that
memory in its model request. Both real CLIs, against fake model APIs on 127.0.0.1.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.realhost.codex_host import CodexHost
from tests.realhost.gemini_host import GeminiHost
from tests.realhost.host import wait_for

LESSON = "Don't mock the database in these tests, we got burned by a mocked migration."


def test_a_lesson_taught_in_codex_reaches_the_next_gemini_request(
    codex: CodexHost, gemini: GeminiHost
) -> None:
    assert codex.project == gemini.project and codex.home == gemini.home
    subprocess.run(["git", "init", "-q", str(codex.project)], check=True, capture_output=True)
    for host in (codex, gemini):
        host.extra_env["MEMDIR_HOST_MODEL"] = "off"  # the offline rules write the memory
        host.extra_env["MEMDIR_RECALL_COLD_WAIT"] = "60"
    codex.memdir("install", "codex", "--project")
    codex.trust_project()  # the folder prompt, then /hooks: the one step docs/hosts.md gives
    codex.trust_hooks()
    gemini.memdir("install", "gemini", "--project")

    codex.exec(LESSON)
    memory_dir: Path = codex.memory_dir()
    where = json.loads(gemini.memdir("--json", "where").stdout)
    assert Path(where["paths"]["memory_dir"]) == memory_dir  # one repository, one memory dir

    def saved() -> bool:
        return any(
            "mocked migration" in p.read_text()
            for p in memory_dir.glob("*.md")
            if p.name != "MEMORY.md"
        )

    wait_for(saved, "Codex's extraction to save the lesson")
    gemini.prompt("How should I write the database tests for the billing module?")
    request = gemini.api.main_requests()[-1].text()
    log = gemini.memdir("hook", "log", "--limit", "30").stdout
    assert "mocked migration" in request, f"the Codex lesson did not reach Gemini's request\n{log}"
