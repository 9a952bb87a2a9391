"""Hostile hook input from Gemini CLI: every class the Claude Code hooks hold, as real processes
(``memdir hook --host gemini <event>``). Each ends with exit 0 well within the timeouts memdir
installs (15-60 s), no traceback, nothing written outside memdir's dirs and Gemini's own, and
no secret kept or injected."""

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
from tests.adapters.hosts.hostile import TOKEN, assert_clean, bad_inputs
from tests.adapters.hosts.hostile import files_outside as outside

NAMES = {
    "session-start": "SessionStart",
    "user-prompt-submit": "BeforeAgent",
    "stop": "AfterAgent",
    "pre-compact": "PreCompress",
    "session-end": "SessionEnd",
}


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"}, host="gemini")
    yield fake
    fake.stop_daemon()


def write_session(path: Path, session: str, turns: list[tuple[str, str]]) -> Path:
    """A Gemini CLI 0.61 session file (``tests/fixtures/hosts/gemini``'s shapes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = [{"sessionId": session, "startTime": "2026-12-01T10:00:00Z"}]
    for n, (said, answer) in enumerate(turns):
        stamp = f"2026-12-01T10:00:{n:02d}.000Z"
        rows.append(
            {"id": f"u-{n}", "timestamp": stamp, "type": "user", "content": [{"text": said}]}
        )
        rows.append({"id": f"g-{n}", "timestamp": stamp, "type": "gemini", "content": answer})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def chats(host: FakeHost) -> Path:
    return host.home / ".gemini" / "tmp" / "project" / "chats"


def body(host: FakeHost, event: str, session: str, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "cwd": str(host.project),
        "hook_event_name": NAMES[event],
        "timestamp": "2026-12-01T10:00:00.000Z",
        **extra,
    }


def files_outside(host: FakeHost) -> list[str]:
    """Files under the test's root that are neither memdir's nor Gemini's own (an
    onnxruntime device id under ``~/.cache/Microsoft`` would be one)."""
    own = [host.home / ".memdir", host.home / ".gemini", host.cache_dir]
    return outside(host, [*own, host.project, host.root / "elsewhere"])


@pytest.mark.parametrize(
    ("name", "raw"),
    bad_inputs(
        "session_id",
        ("wrong types", json.dumps({"session_id": "s", "prompt": {"a": 1}, "cwd": 5}).encode()),
        ("bad timestamp", json.dumps({"session_id": "s", "timestamp": [1], "source": 3}).encode()),
    ),
)
@pytest.mark.parametrize("event", list(NAMES))
def test_bad_hook_input_exits_0_quietly(host: FakeHost, event: str, name: str, raw: bytes) -> None:
    started = time.monotonic()
    run = host.run(event, raw)
    assert_clean(run, started)
    assert run.stdout == ""
    assert files_outside(host) == []


@pytest.mark.parametrize("kind", ["symlink out", "fifo", "/dev/zero", "outside gemini dir"])
def test_a_session_path_memdir_must_not_read(host: FakeHost, kind: str) -> None:
    session = str(uuid.uuid4())
    secret = write_session(
        host.root / "elsewhere" / "session.jsonl",
        session,
        [("Remember that the vault password is hunter2-outside.", "ok")],
    )
    path = chats(host) / f"session-2026-12-01T10-00-{session[:8]}.jsonl"
    path.parent.mkdir(parents=True)
    if kind == "symlink out":
        path.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "/dev/zero":
        path = Path("/dev/zero")
    else:
        path = secret  # a regular file the host names: read (the host decides), so this one
        # holds no credential, only the check below
    # every event that reads the session file: the prompt too (recall context, compressions)
    for event in ("user-prompt-submit", "stop", "pre-compact", "session-end"):
        extra = {"prompt": "what is the vault password?", "trigger": "manual"}
        started = time.monotonic()
        run = host.run(event, body(host, event, session, transcript_path=str(path), **extra))
        assert_clean(run, started)
    time.sleep(0.5)  # a worker would have started by now
    if kind != "outside gemini dir":
        saved = "\n".join(p.read_text() for p in host.memory_dir.rglob("*.md"))
        assert "hunter2" not in saved
    assert files_outside(host) == []


def test_a_credential_in_the_session_is_never_kept_or_injected(host: FakeHost) -> None:
    host.env["MEMDIR_PRIVATE_SECRETS"] = "refuse"
    session = str(uuid.uuid4())
    path = write_session(
        chats(host) / f"session-2026-12-01T10-00-{session[:8]}.jsonl",
        session,
        [
            (f"Remember that my GitHub token is {TOKEN} for the deploy bot.", "I won't."),
            ("Remember that the staging database listens on port 5433.", "Noted."),
        ],
    )
    run = host.run("stop", body(host, "stop", session, transcript_path=str(path)))
    assert run.code == 0
    memory_dir = host.memory_dir

    def saved() -> str:
        return "\n".join(p.read_text() for p in memory_dir.rglob("*.md") if p.name != "MEMORY.md")

    deadline = time.monotonic() + 40
    while "5433" not in saved() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "5433" in saved()  # the rest of the turn is saved, from Gemini's own format
    assert TOKEN not in saved()
    # the user pastes the token into a prompt: not in the answer, not in the hook log
    for event in ("session-start", "user-prompt-submit"):
        extra = {"source": "startup", "prompt": f"deploy with {TOKEN} to the staging database"}
        run = host.run(event, body(host, event, session, transcript_path=str(path), **extra))
        assert run.code == 0 and TOKEN not in run.stdout
    log = (host.cache_dir / "hooks" / "log.jsonl").read_text()
    assert TOKEN not in log and "[REDACTED]" in log
    assert files_outside(host) == []
