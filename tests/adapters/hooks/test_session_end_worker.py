"""`session-end` answers at once and hands its work to a detached worker (issue #18.8).

The host waits for its SessionEnd hook (and kills an `async` one still running when `claude -p`
exits), so the hook must not wait for a running extraction, a model, the team server or a dream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.adapters.hooks.extraction import extract_lock
from memdir.adapters.hooks.state import SessionStore
from memdir.adapters.hosts.claude_code import DIALECT
from tests.adapters.hooks.fakehost import FakeHost


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path)
    yield fake
    fake.stop_daemon()


def _rows(host: FakeHost, session_id: str, event: str) -> list[dict[str, object]]:
    log = json.loads(
        host.memdir("--json", "hook", "log", "--session", session_id, "--limit", "0").stdout
    )
    return [row for row in log if row["event"] == event]


@pytest.mark.parametrize("daemon", ["1", "0"])
def test_session_end_does_not_wait_for_a_running_extraction(host: FakeHost, daemon: str) -> None:
    s = host.session()
    s.prompt("Remember that the staging database is rebuilt every Sunday night.")
    s.reply("Noted.")
    # an extraction of this session is still running: this process holds its lock
    lock = extract_lock(SessionStore(host.cache_dir), s.session_id)
    lock.acquire()
    try:
        end = host.run(
            "session-end",
            s.payload("session-end", reason="prompt_input_exit"),
            env={**host.env, "MEMDIR_HOOK_DAEMON": daemon},
            timeout=20,  # the old hook waited up to 30 s for the drain before it answered
        )
        assert end.code == 0 and end.stdout == "" and end.stderr == ""
        [hook] = _rows(host, s.session_id, "session-end")
        assert hook["finish"] == "started in the background"
        # the worker is waiting for the extraction this process holds, the hook is not
        assert _rows(host, s.session_id, "session-end-worker") == []
    finally:
        lock.release()
    finished = s.wait_ended()
    assert finished["drained"] is True and finished["reason"] == "prompt_input_exit"
    assert finished["final_extraction_runs"] == 1  # the turn the "running" one never covered
    assert "staging database" in "".join(
        p.read_text() for p in host.memory_dir.glob("*.md") if p.name != "MEMORY.md"
    )


def test_workers_start_niced_so_the_host_finishing_its_turn_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    from memdir.adapters.hooks import workers
    from memdir.adapters.hooks.runner import HookFlags, make_context

    started: list[list[str]] = []

    class Popen:
        def __init__(self, argv: list[str], **kw: object) -> None:
            started.append(argv)

    host = FakeHost(tmp_path)
    hc = make_context(host.env, host.project, HookFlags(), DIALECT)
    monkeypatch.setattr(subprocess, "Popen", Popen)
    workers.spawn_worker(hc, "s1", None, "end-worker", ["--reason", "other"])
    [argv] = started
    assert argv[1:3] == ["-n", "10"] and Path(argv[0]).name == "nice"
    assert argv[3:] == [
        *hc.worker_command[:-1],
        "end-worker",
        "--session",
        "s1",
        "--reason",
        "other",
    ]


@pytest.mark.parametrize("reason", ["--transcript=/etc/passwd", "-h", "会话结束 ✓"])
def test_any_reason_the_host_sends_reaches_the_worker_as_text(host: FakeHost, reason: str) -> None:
    """The reason is free host text: one starting with "-" once read as the worker's option, and
    the worker exited on an argument error with the session's end never done."""
    s = host.session()
    assert s.hook("session-end", reason=reason).code == 0
    finished = s.wait_ended(timeout=30)
    assert finished["reason"] == reason and finished["drained"] is True


def test_the_end_leaves_the_sessions_notes_for_session_show(host: FakeHost) -> None:
    """No compaction, so nothing wrote the notes during the session: the end does, and
    `memdir session show` (no argument) prints them as the session's handover."""
    s = host.session()
    s.start()
    s.prompt("Add a --dry-run flag to the export command; it must not write any file.")
    s.reply("I added --dry-run to `export`: it prints the files it would write.")
    s.stop()
    s.prompt("Next, make the import command refuse files over 10 MB.")
    s.reply("Done: `import` now refuses files over 10 MB with a clear error.")
    s.stop()
    s.wait_extracted()
    assert host.run("session-end", s.payload("session-end", reason="exit")).code == 0
    finished = s.wait_ended()
    assert str(finished["notes"]).startswith("updated")
    shown = json.loads(host.memdir("--json", "session", "show").stdout)
    assert shown["notes_path"].endswith(f"{s.session_id}/session-memory/summary.md")
    assert "import" in shown["notes"] and "10 MB" in shown["notes"]


def test_a_garbage_transcript_still_ends_the_session(host: FakeHost) -> None:
    """The end's notes step over a transcript of torn and binary lines reports, never stops the
    worker before its row."""
    s = host.session()
    s.start()
    s.prompt("Add a --dry-run flag to the export command.")
    s.reply("Added.")
    with open(s.transcript.path, "ab") as fh:
        fh.write(b'{"type":"user","message":{"role":"user","content":"half\n\xff\xfe\x00garbage\n')
    assert host.run("session-end", s.payload("session-end", reason="exit")).code == 0
    finished = s.wait_ended()
    assert "notes" in finished and "team_push" in finished and "dream" in finished
