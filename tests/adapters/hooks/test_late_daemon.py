"""A prompt the hook stopped waiting for: its memories and notices reach the one answer read.

The fast path waits :data:`~memdir.adapters.hooks.fastpath.FORWARD_TIMEOUTS` for the daemon and
then runs the prompt in its own process (the full CLI). The daemon cannot know whether its
answer is read: seen on a loaded CI machine, a daemon that checked a deadline answered just
inside it and the hook printed its empty "too late" answer, or answered just outside it and the
memory it marked surfaced was kept from the hook's own answer. So the hook that answers in the
daemon's place takes back what the daemon's answer recorded (or, the daemon not there yet, bars
it from recording), whichever comes first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters import recall_client
from memdir.adapters.hooks import fastpath
from memdir.adapters.hooks.forwarded import serve_hook
from memdir.adapters.hooks.state import SessionStore
from memdir.adapters.hosts import dialect
from memdir.errors import DaemonTimeoutError
from memdir.recall.warm import WarmRecall
from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost, FakeSession, HookRun

QUESTION = "when is the staging database rebuilt?"


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    fake = FakeHost(tmp_path)
    MemoryStore(fake.memory_dir).create(
        "Staging rebuild",
        "The staging database is rebuilt every Sunday night",
        "project",
        "The staging database is rebuilt from a production snapshot every Sunday at 23:00 UTC.",
        rel="staging.md",
    )
    return fake


def _daemon(host: FakeHost, s: FakeSession, warm: WarmRecall, request: str | None) -> Any:
    body: dict[str, Any] = {
        "event": "user-prompt-submit",
        "stdin": json.dumps(s.payload("user-prompt-submit", prompt=QUESTION)),
        "cwd": str(host.project),
        "env": {**host.env, "MEMDIR_RECALL_COLD_WAIT": "30"},
        "flags": {},
    }
    if request is not None:
        body["request"] = request
    return serve_hook(body, warm, dialect)


def _hook_in_place_of(host: FakeHost, s: FakeSession, request: str) -> HookRun:
    """The full CLI, as the fast path runs it after giving up on ``request``."""
    env = {**host.env, "MEMDIR_HOOK_DAEMON": "0", fastpath.UNANSWERED_ENV: request}
    return host.run("user-prompt-submit", s.payload("user-prompt-submit", prompt=QUESTION), env=env)


def _notice(host: FakeHost, s: FakeSession, text: str) -> None:
    with SessionStore(host.cache_dir).update(s.session_id) as state:
        state.notices.append(text)


def _events(host: FakeHost) -> list[str]:
    rows = json.loads(host.memdir("--json", "hook", "log", "--limit", "0").stdout)
    return [row["event"] for row in rows]


def test_an_answer_nobody_read_is_taken_back_by_the_hook_that_answers_instead(
    host: FakeHost,
) -> None:
    staging = str((host.memory_dir / "staging.md").resolve())
    s = host.session()
    _notice(host, s, "Saved 1 memory")

    unread = _daemon(host, s, WarmRecall(), request="r1")
    assert staging in unread["stdout"] and "Saved 1 memory" in unread["stdout"]
    assert s.state().surfaced == [staging] and s.state().notices == []
    one_delivery = s.state().used_bytes
    assert one_delivery > 0

    read = _hook_in_place_of(host, s, "r1")
    assert read.code == 0, read.stderr
    assert f"Memory (saved today): {staging}:" in read.context
    assert read.system_message == "Saved 1 memory"
    state = s.state()
    assert state.surfaced == [staging] and state.notices == [] and state.answer is None
    assert state.used_bytes == one_delivery  # taken back, then counted once
    # the daemon logged its answer too; `hook log` shows the prompt once, as the host saw it
    (row,) = json.loads(host.memdir("--json", "hook", "log", "--limit", "0").stdout)
    assert row["event"] == "user-prompt-submit" and row["replaces"] == "r1"
    assert "daemon" not in row


def test_a_daemon_that_gets_there_after_the_hook_answered_records_nothing(
    host: FakeHost,
) -> None:
    staging = str((host.memory_dir / "staging.md").resolve())
    s = host.session()
    _notice(host, s, "Saved 1 memory")

    read = _hook_in_place_of(host, s, "r2")
    assert f"Memory (saved today): {staging}:" in read.context
    assert read.system_message == "Saved 1 memory"
    _notice(host, s, "Saved 2 memories")  # for a later prompt: the late daemon must leave it
    before = s.state()

    late = _daemon(host, s, WarmRecall(), request="r2")
    assert late == {"stdout": "", "stderr": ""}
    after = s.state()
    assert after.surfaced == before.surfaced == [staging]
    assert after.used_bytes == before.used_bytes and after.notices == ["Saved 2 memories"]
    assert _events(host)[-1] == "daemon-late"


def test_an_answer_that_was_read_stays_and_an_unknown_request_changes_nothing_else(
    host: FakeHost,
) -> None:
    staging = str((host.memory_dir / "staging.md").resolve())
    s = host.session()
    warm = WarmRecall()
    assert staging in _daemon(host, s, warm, request="r3")["stdout"]
    # an answer that takes nothing (the memory is in the context already) records nothing
    assert _daemon(host, s, warm, request="r3b")["stdout"] == ""
    state = s.state()
    assert state.answer is not None and state.answer.request == "r3"
    # the next prompt's hook gave up on its own request, not on r3: r3's answer stands
    again = _hook_in_place_of(host, s, "r4")
    assert again.answer is None
    assert s.state().surfaced == [staging]
    # a daemon request without an id (an older client) is answered as before
    assert _daemon(host, host.session(), warm, request=None)["stdout"].count(staging) == 1


def test_the_fast_path_names_its_request_and_hands_it_to_the_full_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[dict[str, Any]] = []

    def slow_daemon(sock: Any, payload: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        sent.append(payload)
        raise DaemonTimeoutError("no answer in time")

    monkeypatch.setattr(recall_client, "request", slow_daemon)
    monkeypatch.setattr(recall_client, "wait_if_starting", lambda sock: None)
    monkeypatch.setenv("MEMDIR_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(fastpath.UNANSWERED_ENV, raising=False)
    monkeypatch.delenv("MEMDIR_HOOK_DAEMON", raising=False)
    stdin = json.dumps({"session_id": "s1", "prompt": QUESTION}).encode()
    monkeypatch.setattr("sys.stdin", _Stdin(stdin))

    assert fastpath.try_forward(["hook", "user-prompt-submit"]) is None  # the full CLI runs
    [payload] = sent
    assert len(payload["request"]) == 16
    assert fastpath.os.environ[fastpath.UNANSWERED_ENV] == payload["request"]


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = _Buffer(data)

    def isatty(self) -> bool:
        return False


class _Buffer:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self) -> bytes:
        return self.data
