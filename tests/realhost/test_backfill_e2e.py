"""``memdir backfill`` over sessions the real host CLIs wrote (Claude Code, Codex CLI, Gemini
CLI against their fake APIs, memdir not installed in them): each host's own transcript files are
found for the project, read by its dialect, learnt from once, and a re-run reads nothing."""

from __future__ import annotations

import json
from typing import Any

from tests.realhost.codex_host import CodexHost
from tests.realhost.gemini_host import GeminiHost
from tests.realhost.host import ClaudeHost, MemdirUser

SAID = "Remember that the billing service deploys on Tuesdays only."
AGAIN = "Please remember that the billing service deploys on Tuesdays only."


def backfill(user: MemdirUser, host: str) -> dict[str, Any]:
    proc = user.memdir("--json", "backfill", "--offline", "--host", host)
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def check(user: MemdirUser, host: str, sessions: int) -> None:
    first = backfill(user, host)
    assert first["found"] == sessions and first["learnt"] == sessions, first
    assert first["skipped"] == [] and first["failed"] == []
    memories = [p for p in user.memory_dir().glob("*.md") if p.name != "MEMORY.md"]
    billing = [p for p in memories if "tuesday" in p.read_text(encoding="utf-8").lower()]
    assert len(billing) == 1, [p.name for p in memories]  # both sessions said it: one memory
    again = backfill(user, host)
    assert again["processed"] == 0 and again["done_before"] == sessions


def test_claude_code_sessions(host: ClaudeHost) -> None:
    host.prompt(SAID)
    host.prompt(AGAIN)
    check(host, "claude-code", 2)


def test_codex_rollouts(codex: CodexHost) -> None:
    codex.exec(SAID)
    codex.exec(AGAIN)
    assert len(codex.rollouts()) == 2
    check(codex, "codex", 2)


def test_gemini_sessions(gemini: GeminiHost) -> None:
    gemini.prompt(SAID)
    gemini.prompt(AGAIN)
    assert len(gemini.session_files()) == 2
    check(gemini, "gemini", 2)
