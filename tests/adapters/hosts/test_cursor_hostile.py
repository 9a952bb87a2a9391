"""Hostile hook input from Cursor: every class the other hosts' hooks hold, as real processes
(``memdir hook --host cursor <event>``). Each ends with exit 0 well within Cursor's timeout, no
traceback, nothing written outside memdir's dirs and the host's own, and no secret kept."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.hooks.fakehost import FakeHost
from tests.adapters.hosts.hostile import TOKEN, assert_clean, bad_inputs
from tests.adapters.hosts.hostile import files_outside as outside

NAMES = {"session-start": "sessionStart", "stop": "stop", "pre-compact": "preCompact"}
NAMES["session-end"] = "sessionEnd"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"}, host="cursor")
    yield fake
    fake.stop_daemon()


def body(host: FakeHost, event: str, conversation: str, **extra: Any) -> dict[str, Any]:
    return {
        "conversation_id": conversation,
        "generation_id": str(uuid.uuid4()),
        "hook_event_name": NAMES[event],
        "workspace_roots": [str(host.project)],
        "model": "claude-4.5-sonnet",
        **extra,
    }


def transcript(path: Path, *turns: tuple[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        for user, assistant in turns:
            for role, text in (
                ("user", f"<user_query>\n{user}\n</user_query>"),
                ("assistant", assistant),
            ):
                line = {"role": role, "message": {"content": [{"type": "text", "text": text}]}}
                fh.write(json.dumps(line) + "\n")
    return path


def files_outside(host: FakeHost) -> list[str]:
    """Files under the root that are neither memdir's nor Cursor's own."""
    own = (".memdir", ".cursor", ".cache")
    return outside(host, [*(host.home / d for d in own), host.project, host.root / "elsewhere"])


@pytest.mark.parametrize(
    ("name", "raw"),
    bad_inputs(
        "conversation_id",
        ("wrong types", json.dumps({"conversation_id": "s", "workspace_roots": {"a": 1}}).encode()),
        ("roots not text", json.dumps({"conversation_id": "s", "workspace_roots": [5]}).encode()),
    ),
)
@pytest.mark.parametrize("event", ["session-start", "stop", "pre-compact", "session-end"])
def test_bad_hook_input_exits_0_quietly(host: FakeHost, event: str, name: str, raw: bytes) -> None:
    started = time.monotonic()
    run = host.run(event, raw)
    assert_clean(run, started)
    assert run.stdout == ""
    assert files_outside(host) == []


def test_a_prompt_hook_memdir_never_installs_is_refused_quietly(host: FakeHost) -> None:
    started = time.monotonic()
    raw = {"conversation_id": "c1", "hook_event_name": "beforeSubmitPrompt", "prompt": "hi there"}
    run = host.run("user-prompt-submit", raw)
    assert_clean(run, started)
    assert run.stdout == "" and "no hook" in run.stderr


@pytest.mark.parametrize("kind", ["symlink out", "fifo", "/dev/zero", "outside cursor dir"])
def test_a_transcript_path_memdir_must_not_read(host: FakeHost, kind: str) -> None:
    conversation = str(uuid.uuid4())
    elsewhere = host.root / "elsewhere" / f"{conversation}.jsonl"
    secret = transcript(elsewhere, ("Remember that the vault password is hunter2-outside.", "ok"))
    transcripts = host.home / ".cursor" / "projects" / "project" / "agent-transcripts"
    transcripts.mkdir(parents=True)
    path = transcripts / f"{conversation}.jsonl"
    if kind == "symlink out":
        path.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "/dev/zero":
        path = Path("/dev/zero")
    else:
        path = secret  # a regular file the host names: read (the host decides where it writes)
    for event in ("stop", "pre-compact", "session-end"):
        started = time.monotonic()
        extra = {"transcript_path": str(path), "trigger": "auto", "status": "completed"}
        run = host.run(event, body(host, event, conversation, **extra))
        assert_clean(run, started)
        assert run.stdout == ""
    time.sleep(0.5)  # a worker would have started by now
    if kind != "outside cursor dir":
        saved = "\n".join(p.read_text() for p in host.memory_dir.rglob("*.md"))
        assert "hunter2" not in saved


def test_a_credential_in_the_transcript_is_never_kept(host: FakeHost) -> None:
    host.env["MEMDIR_PRIVATE_SECRETS"] = "refuse"
    subprocess.run(["git", "init", "-q", str(host.project)], check=True)  # rules file written
    conversation = str(uuid.uuid4())
    path = host.home / ".cursor" / "projects" / "project" / "agent-transcripts" / "t.jsonl"
    transcript(
        path,
        (f"Remember that my GitHub token is {TOKEN} for the deploy bot.", "I won't."),
        ("Remember that the staging database listens on port 5433.", "Noted."),
    )
    run = host.run("stop", body(host, "stop", conversation, transcript_path=str(path)))
    assert run.code == 0
    deadline = time.monotonic() + 40
    memory_dir = host.memory_dir

    def saved() -> str:
        return "\n".join(p.read_text() for p in memory_dir.rglob("*.md") if p.name != "MEMORY.md")

    while "5433" not in saved() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "5433" in saved()  # the rest of the turn is saved, from Cursor's own format
    assert TOKEN not in saved()
    log = (host.cache_dir / "hooks" / "log.jsonl").read_text()
    assert TOKEN not in log
    start = host.run("session-start", body(host, "session-start", str(uuid.uuid4())))
    assert TOKEN not in start.stdout
    rules = (host.project / ".cursor" / "rules" / "memdir.mdc").read_text()
    assert "5433" in rules or "staging" in rules.lower()
    assert TOKEN not in rules


@pytest.mark.parametrize("where", ["the other scope", "its own file"])
def test_a_fifo_for_hooks_json_never_holds_the_install(host: FakeHost, where: str) -> None:
    base = host.home if where == "the other scope" else host.project
    fifo = base / ".cursor" / "hooks.json"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    started = time.monotonic()
    done = host.memdir("install", "cursor", "--project")
    assert time.monotonic() - started < 30 and "Traceback" not in done.stderr
    if where == "its own file":
        assert done.returncode != 0 and "hooks.json" in done.stderr
    else:
        assert done.returncode == 0  # unreadable there: no memdir hooks to run twice
