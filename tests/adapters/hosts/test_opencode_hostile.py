"""Hostile input in what OpenCode's plugin forwards: every class the other hosts' hooks hold, as
real processes (``memdir hook --host opencode <event>``, the plugin's fallback and the same
``run_event`` the daemon runs). Each ends with exit 0 well within the plugin's timeout, no
traceback, nothing written outside memdir's dirs, and no secret kept."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters.hosts.opencode import EVENTS, transcript_dir
from tests.adapters.hooks.fakehost import FakeHost
from tests.adapters.hosts.hostile import TOKEN, assert_clean, bad_inputs
from tests.adapters.hosts.hostile import files_outside as outside
from tests.adapters.hosts.opencode_session import OpenCodeSession

SESSION = "ses_dca7c973affe3Fhvaf1vyPB1RU"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"}, host="opencode")
    yield fake
    fake.stop_daemon()


def sessions(host: FakeHost) -> Path:
    return transcript_dir(host.env)


def body(host: FakeHost, event: str, session: str = SESSION, **extra: Any) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(host.project), "hook_event_name": EVENTS[event],
            **extra}  # fmt: skip


def files_outside(host: FakeHost) -> list[str]:
    """Files under the sandbox that are neither memdir's nor the test's own."""
    own = [host.home / ".memdir", host.home / ".cache"]
    return outside(host, [*own, host.project, host.root / "elsewhere"])


@pytest.mark.parametrize(
    ("name", "raw"),
    bad_inputs(
        "session_id",
        ("NUL in an OpenCode id", json.dumps({"session_id": "ses_a\x00b"}).encode()),
        ("non-UTF-8 prompt", b'{"session_id": "ses_x", "prompt": "\xc3\x28"}'),
        ("wrong types", json.dumps({"session_id": SESSION, "prompt": {"a": 1}, "cwd": 5}).encode()),
        ("wrong event", json.dumps({"session_id": SESSION, "hook_event_name": "x"}).encode()),
    ),
)
@pytest.mark.parametrize("event", ["session-start", "user-prompt-submit", "stop", "pre-compact"])
def test_bad_plugin_input_exits_0_quietly(
    host: FakeHost, event: str, name: str, raw: bytes
) -> None:
    started = time.monotonic()
    run = host.run(event, raw)
    assert_clean(run, started)
    assert run.stdout == ""
    assert "memdir hook" in run.stderr  # one line saying why, for the hook log's reader
    assert files_outside(host) == []


@pytest.mark.parametrize("kind", ["symlink out", "fifo", "/dev/zero", "outside the sessions dir"])
def test_a_transcript_path_memdir_must_not_read(host: FakeHost, kind: str) -> None:
    elsewhere = host.root / "elsewhere"
    secret = OpenCodeSession(elsewhere, SESSION)
    secret.turn("Remember that the vault password is hunter2-outside.", "ok")
    root = sessions(host)
    root.mkdir(parents=True)
    path = root / f"{SESSION}.json"
    if kind == "symlink out":
        path.symlink_to(secret.path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "/dev/zero":
        path = Path("/dev/zero")
    else:
        path = secret.path  # a regular file the sender names: read (as for every host), so
        # only the checks below
    for event in ("stop", "pre-compact", "user-prompt-submit"):
        started = time.monotonic()
        extra = {"transcript_path": str(path), "trigger": "auto", "prompt": "hi"}
        run = host.run(event, body(host, event, **extra))
        assert_clean(run, started)
    time.sleep(0.5)  # a worker would have started by now
    if kind != "outside the sessions dir":
        saved = "\n".join(p.read_text() for p in host.memory_dir.rglob("*.md"))
        assert "hunter2" not in saved


def test_garbage_in_the_session_file_saves_nothing(host: FakeHost) -> None:
    root = sessions(host)
    root.mkdir(parents=True)
    path = root / f"{SESSION}.json"
    for raw in (
        b"\xff\xfe\x00",
        b'{"messages": 5}',
        b'[{"info": 1, "parts": "x"}]',
        b"[" * 100_000,
    ):
        path.write_bytes(raw)
        started = time.monotonic()
        assert_clean(host.run("stop", body(host, "stop", transcript_path=str(path))), started)


def test_a_credential_in_the_session_is_never_kept(host: FakeHost) -> None:
    host.env["MEMDIR_PRIVATE_SECRETS"] = "refuse"
    session = OpenCodeSession(sessions(host), SESSION)
    session.turn(f"Remember that my GitHub token is {TOKEN} for the deploy bot.", "I won't.")
    session.turn("Remember that the staging database listens on port 5433.", "Noted.")
    run = host.run("stop", body(host, "stop", transcript_path=str(session.path)))
    assert run.code == 0
    deadline = time.monotonic() + 40
    memory_dir = host.memory_dir

    def saved() -> str:
        return "\n".join(p.read_text() for p in memory_dir.rglob("*.md") if p.name != "MEMORY.md")

    while "5433" not in saved() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "5433" in saved()  # the rest of the session is saved, from the plugin's format
    assert TOKEN not in saved()
    assert TOKEN not in (host.cache_dir / "hooks" / "log.jsonl").read_text()
    prompt = host.run(
        "user-prompt-submit",
        body(host, "user-prompt-submit", prompt="what port does staging use?"),
    )
    assert TOKEN not in prompt.stdout
    assert "5433" in json.loads(prompt.stdout)["context"]
