"""memdir under a fake Claude Code: real hook processes, real hook JSON, a growing transcript.

The host's view: what each hook prints is exactly what the model would get. A memory is never
injected twice in a session (compaction included), "remember that ..." said in the conversation
becomes a memory file and a "Saved 1 memory" notice on the next prompt, parallel sessions keep
their own state, and every bad input still exits 0 with nothing injected.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.adapters import recall_client
from memdir.adapters.hooks.fastpath import parse_argv
from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost, HookRun

MEMORIES = {
    "deploys": (
        "Production deploys",
        "production deploys go to fly.io with blue-green releases",
        "project",
        "We deploy production to fly.io using blue-green releases (`fly deploy --strategy "
        "bluegreen`).\nWhy: zero-downtime deploys.\n",
    ),
    "espresso": (
        "Coffee order",
        "the user drinks espresso without sugar",
        "user",
        "The user drinks espresso, never with sugar.\n",
    ),
    "tabs": (
        "Indentation feedback",
        "use tabs for indentation in Go files, as gofmt does",
        "feedback",
        "Use tabs in Go files.\nWhy: gofmt.\nHow to apply: never convert Go files to spaces.\n",
    ),
}


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path)
    store = MemoryStore(fake.memory_dir)
    # saved well before the session: a memory written within the clock slack of a turn counts
    # as the agent's own write, and Stop extraction rightly skips that turn
    old = time.time() - 3600
    for rel, (name, description, kind, body) in MEMORIES.items():
        store.create(name, description, kind, body, rel=f"{rel}.md")
        os.utime(fake.memory_dir / f"{rel}.md", (old, old))
    yield fake
    fake.stop_daemon()


def injected_paths(run: HookRun) -> list[str]:
    return [
        line.split("): ", 1)[1].rstrip(":")
        for line in run.context.splitlines()
        if line.startswith("Memory (saved ")
    ]


def test_a_session_end_to_end(host: FakeHost) -> None:
    memory_dir = host.memory_dir
    deploys = str((memory_dir / "deploys.md").resolve())
    s = host.session()

    start = s.start()
    assert start.code == 0 and start.stderr == ""
    assert start.answer is not None
    assert start.answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "# Memory (memdir)" in start.context
    assert "[Production deploys](deploys.md)" in start.context  # the MEMORY.md index
    assert len(start.context) < 10_000

    first = s.prompt("how do we ship a production deploy these days?")
    assert first.code == 0, first.stderr
    assert first.answer is not None
    assert first.answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert injected_paths(first) == [deploys]
    body = (memory_dir / "deploys.md").read_text()
    assert f"Memory (saved today): {deploys}:\n{body}" in first.context
    assert "systemMessage" not in first.answer
    s.reply("We use fly.io blue-green deploys.", read=memory_dir / "deploys.md")
    s.sidechain("Remember that sub-agents never decide what the user wants.")
    assert s.stop().code == 0
    s.wait_extracted()

    # the same topic again: the memory is already in the context, so nothing comes back
    again = s.prompt("and what deploy strategy do we use for production releases?")
    assert again.code == 0 and injected_paths(again) == [] and again.answer is None
    s.reply("Blue-green.")
    s.stop()
    s.wait_extracted()

    said = s.prompt("Remember that the staging database listens on port 5433.")
    s.reply("Noted: staging Postgres is on 5433.")
    s.torn_line()  # the host was killed mid-write once
    assert s.stop().code == 0
    state = s.wait_extracted()
    assert state.notices == ["Saved 1 memory"]
    saved = [p for p in memory_dir.glob("*.md") if p.stem not in (*MEMORIES, "MEMORY")]
    assert len(saved) == 1 and "5433" in saved[0].read_text()
    assert "sub-agents" not in saved[0].read_text()
    assert said.code == 0

    notice = s.prompt("which port does the staging database use again?")
    assert notice.system_message == "Saved 1 memory"
    assert injected_paths(notice) == [str(saved[0].resolve())]
    assert s.prompt("which port does the staging database use again?").answer is None
    s.reply("5433.")

    # compaction in the middle: the budget resets, the never-twice set does not
    assert s.hook("pre-compact", trigger="auto", custom_instructions=None).stdout == ""
    s.compact("Summary: the user said remember that the staging database is on port 5433.")
    after = s.start(source="compact")
    assert "# Memory (memdir)" in after.context
    assert "## Session notes (kept across the compaction)" in after.context, after.context
    assert "5433" in after.context.split("## Session notes", 1)[1]
    assert len(after.context) < 10_000
    redo = s.prompt("remind me how production deploys and the staging port work")
    assert deploys not in injected_paths(redo)
    assert str(saved[0].resolve()) not in injected_paths(redo)
    s.reply("See above.")
    s.stop()
    s.wait_extracted()
    # the compact summary repeats "remember that": it is not extracted a second time
    assert sorted(p.name for p in memory_dir.glob("*.md")) == sorted(
        ["MEMORY.md", "deploys.md", "espresso.md", "tabs.md", saved[0].name]
    )
    assert s.state().compactions == 1

    single = s.prompt("continue")
    assert single.code == 0 and single.stdout == ""
    end = s.hook("session-end", reason="prompt_input_exit")
    assert end.code == 0 and end.stdout == "" and end.stderr == ""
    finished = s.wait_ended()  # the hook handed the drain, extraction and dream to its worker
    assert finished["drained"] is True and finished["reason"] == "prompt_input_exit"

    log = json.loads(
        host.memdir("--json", "hook", "log", "--session", s.session_id, "--limit", "0").stdout
    )
    events = [row["event"] for row in log]
    assert events.count("user-prompt-submit") == 7
    assert "extract" in events and "session-end" in events and events[-1] == "session-end-worker"
    injected = [p for row in log for p in row.get("injected", [])]
    assert len(injected) == len(set(injected)) == 2


def test_parallel_sessions_keep_their_own_state(host: FakeHost) -> None:
    espresso = str((host.memory_dir / "espresso.md").resolve())
    sessions = [host.session() for _ in range(4)]
    host.memdir("hook", "daemon", "start")
    runs: dict[str, list[HookRun]] = {s.session_id: [] for s in sessions}

    def talk(i: int) -> None:
        s = sessions[i]
        for _ in range(2):
            runs[s.session_id].append(
                s.hook("user-prompt-submit", prompt="how does the user take coffee?")
            )

    threads = [threading.Thread(target=talk, args=(i,)) for i in range(len(sessions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in sessions:
        first, second = runs[s.session_id]
        assert first.code == 0 and second.code == 0, first.stderr + second.stderr
        assert injected_paths(first) == [espresso]
        assert second.answer is None
        assert s.state().surfaced == [espresso]


@pytest.mark.parametrize(
    ("event", "stdin"),
    [
        ("user-prompt-submit", b""),
        ("user-prompt-submit", b"not json at all"),
        ("user-prompt-submit", b"[1, 2, 3]"),
        ("user-prompt-submit", b"\xff\xfe\x00binary"),
        ("user-prompt-submit", b'{"session_id": "../../etc/passwd", "prompt": "hi there"}'),
        ("user-prompt-submit", b'{"session_id": 7, "prompt": "hi there"}'),
        ("user-prompt-submit", b'{"session_id": "s1", "prompt": ["not", "a", "string"]}'),
        ("user-prompt-submit", b'{"session_id": "s1", "hook_event_name": "Stop"}'),
        ("session-start", b'{"session_id": "s1", "cwd": "/nonexistent/dir", "source": 3}'),
        ("stop", b'{"session_id": "s1", "transcript_path": "/nonexistent/t.jsonl"}'),
        ("pre-compact", b"{"),
        ("session-end", b'{"session_id": ""}'),
    ],
)
def test_bad_input_exits_zero_with_nothing_injected(
    host: FakeHost, event: str, stdin: bytes
) -> None:
    run = host.run(event, stdin)
    assert run.code == 0
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    assert len(run.stderr.splitlines()) <= 1
    if event != "stop":  # a missing transcript is normal at stop: logged, not shown
        assert run.stderr.startswith(f"memdir hook {event}: ")


def test_corrupt_settings_and_state_never_break_the_prompt(host: FakeHost) -> None:
    s = host.session("broken-1")
    state_file = host.cache_dir / "hooks" / "sessions" / "broken-1.json"
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_text("{torn")
    ok = s.hook("user-prompt-submit", prompt="what about tabs in Go files?")
    assert ok.code == 0 and injected_paths(ok) == [str((host.memory_dir / "tabs.md").resolve())]
    (host.project / ".memdir").mkdir()
    (host.project / ".memdir" / "settings.json").write_text("{ not json")
    broken = s.hook("user-prompt-submit", prompt="what about tabs in Go files?")
    assert broken.code == 0 and broken.stdout == ""
    assert broken.stderr.startswith("memdir hook user-prompt-submit: ")
    assert len(broken.stderr.splitlines()) == 1


def test_the_daemon_answers_byte_for_byte_like_the_full_cli(host: FakeHost) -> None:
    prompt = "what do we do about indentation in Go files?"
    full = host.session("full-1")
    host.env["MEMDIR_HOOK_DAEMON"] = "0"
    in_process = full.hook("user-prompt-submit", prompt=prompt)
    del host.env["MEMDIR_HOOK_DAEMON"]
    host.memdir("hook", "daemon", "start")
    forwarded = host.session("full-1")  # same session id: state reset below keeps it fresh
    (host.cache_dir / "hooks" / "sessions" / "full-1.json").unlink()
    code = (
        "import sys\n"
        "sys.argv = ['memdir', 'hook', 'user-prompt-submit']\n"
        "from memdir.cli import run\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        "print('argparse' in sys.modules, 'memdir.config' in sys.modules, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(forwarded.payload("user-prompt-submit", prompt=prompt)),
        capture_output=True,
        text=True,
        cwd=host.project,
        env=host.env,
        timeout=120,
    )
    assert proc.stdout == in_process.stdout and "tabs.md" in proc.stdout
    assert proc.stderr == "False False\n"  # answered without loading the CLI or settings
    log = json.loads(host.memdir("--json", "hook", "log", "--session", "full-1").stdout)
    assert [row["via"] for row in log] == ["in-process", "daemon"]


@pytest.mark.parametrize(
    ("argv", "forwarded"),
    [
        (["hook", "user-prompt-submit"], True),
        (["--claude", "--dir", "/m", "--json", "hook", "user-prompt-submit"], True),
        (["hook", "stop"], True),
        (["hook", "session-end"], True),
        (["hook", "log"], False),
        (["--verbose", "hook", "user-prompt-submit"], False),
        (["recall", "hook"], False),
    ],
)
def test_every_hook_event_and_nothing_else_takes_the_fast_path(
    argv: list[str], forwarded: bool
) -> None:
    assert (parse_argv(argv, "/p") is not None) is forwarded


def test_a_stale_daemon_is_stopped_and_the_prompt_still_answered_once(host: FakeHost) -> None:
    sock = recall_client.socket_path(host.home / ".memdir")
    old_build = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; import memdir.adapters.recall_daemon as d;"
            "d.fingerprint = lambda: '1:an-older-build:0'; sys.exit(d.main(sys.argv[1:]))",
            "--socket",
            str(sock),
            "--idle",
            "60",
        ],
        env=host.env,
    )
    try:
        deadline = time.monotonic() + 30
        while not sock.exists():
            assert time.monotonic() < deadline and old_build.poll() is None
            time.sleep(0.05)
        s = host.session()
        run = s.hook("user-prompt-submit", prompt="what about tabs in Go files?")
        assert injected_paths(run) == [str((host.memory_dir / "tabs.md").resolve())]
        assert old_build.wait(timeout=30) == 0  # told to stop
        log = json.loads(
            host.memdir("--json", "hook", "log", "--session", s.session_id, "--limit", "0").stdout
        )
        assert [row["via"] for row in log] == ["in-process"]  # answered once, not twice
    finally:
        if old_build.poll() is None:
            old_build.kill()
        old_build.wait()


def test_claude_layout_recalls_the_hosts_files_and_leaves_its_writer_alone(
    tmp_path: Path,
) -> None:
    host = FakeHost(tmp_path, argv=[sys.executable, "-m", "memdir", "--claude"])
    try:
        memory_dir = host.memory_dir
        assert memory_dir.is_relative_to(host.home / ".claude" / "projects")
        memory_dir.mkdir(parents=True)
        # written by Claude Code's own auto-memory, not by memdir
        (memory_dir / "feedback_tests.md").write_text(
            "---\nname: Test runner\ndescription: run the test suite with pytest -x, never "
            "unittest\ntype: feedback\n---\nUse pytest -x.\n"
        )
        (memory_dir / "MEMORY.md").write_text("- [Test runner](feedback_tests.md) — pytest -x\n")
        s = host.session()
        start = s.start()
        assert start.code == 0 and start.stdout == ""  # the host injects its own MEMORY.md
        run = s.prompt("how should I run the test suite here?")
        assert injected_paths(run) == [str((memory_dir / "feedback_tests.md").resolve())]
        s.transcript.user("Remember that the staging database listens on port 5433.")
        s.reply("Noted.")
        assert s.stop().code == 0
        log = json.loads(host.memdir("--json", "hook", "log").stdout)
        assert log[-1]["event"] == "stop" and log[-1]["skipped"] == "extraction off"
        # memdir's state, log and index live in ~/.memdir: nothing of it lands in ~/.claude
        claude_files = sorted(p for p in (host.home / ".claude").rglob("*") if p.is_file())
        assert claude_files == [memory_dir / "MEMORY.md", memory_dir / "feedback_tests.md"]
    finally:
        host.stop_daemon()


def test_every_event_is_answered_by_a_running_daemon(host: FakeHost) -> None:
    """With the daemon up, no hook event pays a CLI start; stop's worker still extracts."""
    host.memdir("hook", "daemon", "start")
    s = host.session()
    assert "# Memory (memdir)" in s.start().context
    s.prompt("Remember that the nightly backup runs at 02:00 UTC.")
    s.reply("Noted.")
    assert s.stop().code == 0
    assert s.wait_extracted().notices == ["Saved 1 memory"]  # the worker got the hook's env
    assert s.hook("pre-compact", trigger="manual", custom_instructions=None).code == 0
    end = s.hook("session-end", reason="other")
    assert end.code == 0 and end.stderr == ""
    log = json.loads(
        host.memdir("--json", "hook", "log", "--session", s.session_id, "--limit", "0").stdout
    )
    hooks = [row for row in log if row["event"] not in ("extract", "session-end-worker")]
    assert [row["event"] for row in hooks] == [
        "session-start",
        "user-prompt-submit",
        "stop",
        "pre-compact",
        "session-end",
    ]
    assert all(row.get("daemon") for row in hooks), hooks


@pytest.mark.parametrize("event", ["user-prompt-submit", "stop", "session-start"])
def test_a_bad_setting_leaves_a_log_record_also_through_the_daemon(
    host: FakeHost, event: str
) -> None:
    host.memdir("hook", "daemon", "start")
    s = host.session()
    host.env["MEMDIR_HOOK_EXTRACT"] = "sometimes"
    run = s.hook(event, prompt="what about tabs in Go files?")
    assert run.code == 0 and run.stdout == ""
    assert run.stderr.startswith(f"memdir hook {event}: MEMDIR_HOOK_EXTRACT='sometimes'")
    log = json.loads(
        host.memdir("--json", "hook", "log", "--session", s.session_id, "--limit", "0").stdout
    )
    assert [(row["event"], "MEMDIR_HOOK_EXTRACT" in row["error"]) for row in log] == [(event, True)]
