"""Hostile hook input from Codex: every class the Claude Code hooks hold, as real processes
(``memdir hook --host codex <event>``). Each ends with exit 0 well within Codex's timeout, no
traceback, nothing written outside memdir's dirs and the host's own, and no secret kept."""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.hooks.fakehost import FakeHost
from tests.adapters.hosts.codex_rollout import Rollout
from tests.adapters.hosts.hostile import TOKEN, assert_clean, bad_inputs
from tests.adapters.hosts.hostile import files_outside as outside


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"}, host="codex")
    yield fake
    fake.stop_daemon()


def body(host: FakeHost, event: str, session: str, **extra: Any) -> dict[str, Any]:
    names = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit"}
    names |= {"stop": "Stop", "pre-compact": "PreCompact", "session-end": "SessionEnd"}
    return {
        "session_id": session,
        "cwd": str(host.project),
        "hook_event_name": names[event],
        "model": "gpt-5",
        **extra,
    }


def files_outside(host: FakeHost) -> list[str]:
    """Files under the root that are neither memdir's nor Codex's own."""
    own = (".memdir", ".codex", ".cache")
    return outside(host, [*(host.home / d for d in own), host.project, host.root / "elsewhere"])


@pytest.mark.parametrize(
    ("name", "raw"),
    bad_inputs(
        "session_id",
        ("wrong types", json.dumps({"session_id": "s", "prompt": {"a": 1}, "cwd": 5}).encode()),
    ),
)
@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit", "stop", "session-end"])
def test_bad_hook_input_exits_0_quietly(host: FakeHost, event: str, name: str, raw: bytes) -> None:
    started = time.monotonic()
    run = host.run(event, raw)
    assert_clean(run, started)
    assert run.stdout == ""
    assert files_outside(host) == []


@pytest.mark.parametrize("kind", ["symlink out", "fifo", "/dev/zero", "outside codex dir"])
def test_a_transcript_path_memdir_must_not_read(host: FakeHost, kind: str) -> None:
    session = str(uuid.uuid4())
    elsewhere = host.root / "elsewhere"
    elsewhere.mkdir()
    secret = Rollout(elsewhere, session)
    secret.turn("Remember that the vault password is hunter2-outside.", "ok")
    sessions = host.home / ".codex" / "sessions" / "2026" / "01" / "01"
    sessions.mkdir(parents=True)
    path = sessions / f"rollout-{session}.jsonl"
    if kind == "symlink out":
        path.symlink_to(secret.path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "/dev/zero":
        path = Path("/dev/zero")
    else:
        path = secret.path  # a regular file the host names: read (the host decides), so no
        # secret in it may be kept; this one holds no credential, only the check below
    for event in ("stop", "pre-compact", "session-end"):
        started = time.monotonic()
        run = host.run(event, body(host, event, session, transcript_path=str(path), trigger="auto"))
        assert_clean(run, started)
    time.sleep(0.5)  # a worker would have started by now
    if kind != "outside codex dir":
        saved = "\n".join(p.read_text() for p in host.memory_dir.rglob("*.md"))
        assert "hunter2" not in saved


def test_a_credential_in_the_rollout_is_never_kept(host: FakeHost) -> None:
    host.env["MEMDIR_PRIVATE_SECRETS"] = "refuse"
    session = str(uuid.uuid4())
    rollout = Rollout(host.home / ".codex", session)
    rollout.turn(f"Remember that my GitHub token is {TOKEN} for the deploy bot.", "I won't.")
    rollout.turn("Remember that the staging database listens on port 5433.", "Noted.")
    run = host.run("stop", body(host, "stop", session, transcript_path=str(rollout.path)))
    assert run.code == 0
    deadline = time.monotonic() + 40
    memory_dir = host.memory_dir

    def saved() -> str:
        return "\n".join(p.read_text() for p in memory_dir.rglob("*.md") if p.name != "MEMORY.md")

    while "5433" not in saved() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "5433" in saved()  # the rest of the turn is saved, from Codex's own format
    assert TOKEN not in saved()
    log = (host.cache_dir / "hooks" / "log.jsonl").read_text()
    assert TOKEN not in log
    prompt = host.run(
        "user-prompt-submit",
        body(host, "user-prompt-submit", session, prompt="what port does staging use?"),
    )
    assert TOKEN not in prompt.stdout
