"""Hostile inputs to `memdir hook <event>` under the fake host (issues #21 and #18.2).

Real hook processes: a credential setting every writer obeys (the detached extraction worker
included), a transcript line nested 200,000 deep, a ``transcript_path`` that is a link out of the
host's projects dir or a FIFO, and a FIFO at ``MEMORY.md``. None may block the host, and nothing
read through a refused path may reach a memory or the model.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.adapters.hooks import hooklog
from memdir.transcripts import Transcript, new_uuid
from tests.adapters.hooks.fakehost import FakeHost, FakeSession

TOKEN = "ghp_R8kq2ZfLw0Tn5YbV3cXa9PdM1sHj7UeG4oQi"  # shaped like a GitHub PAT, not a real one


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"})
    yield fake
    fake.stop_daemon()


def memory_texts(host: FakeHost) -> str:
    return "\n".join(p.read_text() for p in sorted(host.memory_dir.rglob("*.md")))


def hook_log(host: FakeHost, session: str, event: str) -> list[dict[str, object]]:
    rows = hooklog.read(host.cache_dir, session=session, limit=100)
    return [r for r in rows if r.get("event") == event]


def test_private_secrets_refuse_holds_for_stop_extraction(host: FakeHost) -> None:
    """Issue #21.1: the detached worker wrote the pasted token with the setting on."""
    host.env["MEMDIR_PRIVATE_SECRETS"] = "refuse"
    s = host.session()
    s.start()
    s.prompt(f"Remember that my GitHub token is {TOKEN} for the deploy bot.")
    s.reply("I will not keep that token.")
    s.prompt("Remember that the staging database listens on port 5433.")
    s.reply("Noted.")
    assert s.stop().code == 0
    state = s.wait_extracted()  # the refusal is not a failure to retry forever
    assert TOKEN not in memory_texts(host)
    assert "5433" in memory_texts(host)  # the rest of the turn is still saved
    assert state.notices == ["Saved 1 memory"]
    [extract] = hook_log(host, s.session_id, "extract")
    assert TOKEN not in json.dumps(extract)


def test_a_200k_deep_line_costs_only_that_line(host: FakeHost) -> None:
    """Issue #21.2: the worker saved nothing for the session and pre-compact failed."""
    s = host.session()
    s.start()
    s.prompt("Remember that the staging database listens on port 5433.")
    s.reply("Noted.")
    with open(s.transcript.path, "ab") as fh:
        fh.write(b'{"type":"user","message":' + b"[" * 200_000 + b"]" * 200_000 + b"}\n")
    s.prompt("Remember that releases are cut on Thursdays.")
    s.reply("Noted too.")
    assert s.stop().code == 0
    s.wait_extracted()
    saved = memory_texts(host)
    assert "5433" in saved and "Thursdays" in saved
    run = s.hook("pre-compact", trigger="manual", custom_instructions=None)
    assert run.code == 0 and run.stderr == ""
    [compact] = hook_log(host, s.session_id, "pre-compact")
    assert str(compact["notes"]).startswith(("updated", "unchanged")), compact


# -- transcript_path: the host names it; memdir reads only a regular file it can trust ----------


def outside_transcript(host: FakeHost) -> Path:
    """A file out of the host's projects dir that looks like a transcript."""
    outside = host.root / "elsewhere" / "notes.jsonl"
    t = Transcript(outside, new_uuid(), str(host.project))
    t.user("Remember that the vault password is hunter2-outside.")
    return outside


def session_with_transcript_at(host: FakeHost, path: Path) -> FakeSession:
    s = host.session()
    s.transcript.path = path
    return s


def test_a_transcript_link_out_of_the_projects_dir_is_refused(host: FakeHost) -> None:
    """Issue #21.3: a symlinked transcript_path was read and its content injected later."""
    projects = host.home / ".claude" / "projects" / "-p"
    projects.mkdir(parents=True)
    link = projects / f"{new_uuid()}.jsonl"
    link.symlink_to(outside_transcript(host))
    s = session_with_transcript_at(host, link)
    for event in ("stop", "pre-compact", "session-end"):
        run = s.hook(event, stop_hook_active=False, trigger="manual", reason="exit")
        assert run.code == 0 and run.stdout == "" and run.stderr == ""
    time.sleep(0.5)  # a worker would have been spawned by now
    assert "hunter2" not in memory_texts(host)
    [stop] = hook_log(host, s.session_id, "stop")
    assert "leaves the host's transcript dirs" in str(stop["skipped"])
    [compact] = hook_log(host, s.session_id, "pre-compact")
    assert "leaves the host's transcript dirs" in str(compact["notes"])
    assert not any(hook_log(host, s.session_id, "extract"))


def test_a_transcript_link_inside_the_projects_dir_is_read(host: FakeHost) -> None:
    projects = host.home / ".claude" / "projects" / "-p"
    projects.mkdir(parents=True)
    real = projects / "real.jsonl"
    Transcript(real, new_uuid(), str(host.project)).user(
        "Remember that the build cache lives in /var/cache/ci."
    )
    link = projects / f"{new_uuid()}.jsonl"
    link.symlink_to(real)
    s = session_with_transcript_at(host, link)
    assert s.stop().code == 0
    s.wait_extracted()
    assert "/var/cache/ci" in memory_texts(host)


def test_a_fifo_transcript_path_never_blocks_a_hook(host: FakeHost) -> None:
    fifo = host.root / "t.jsonl"
    os.mkfifo(fifo)
    s = session_with_transcript_at(host, fifo)
    for event in ("stop", "pre-compact", "session-end"):
        run = host.run(event, s.payload(event, reason="exit", trigger="manual"), timeout=30)
        assert run.code == 0 and run.stderr == ""
    [stop] = hook_log(host, s.session_id, "stop")
    assert "not a regular file" in str(stop["skipped"])


def test_a_fifo_at_memory_md_never_blocks_session_start(host: FakeHost) -> None:
    """Issue #18.2: SessionStart waited for the host's 30 s timeout, every session."""
    index = host.memory_dir / "MEMORY.md"
    index.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(index)
    s = host.session()
    run = host.run("session-start", s.payload("session-start", source="startup"), timeout=20)
    assert run.code == 0 and "# Memory (memdir)" in run.context
    prompt = host.run("user-prompt-submit", s.payload("user-prompt-submit", prompt="deploys?"))
    assert prompt.code == 0
