"""A daemon that answers a prompt after its hook stopped waiting commits nothing.

The fast path waits :data:`~memdir.adapters.hooks.fastpath.FORWARD_TIMEOUTS` for the daemon and
then runs the prompt in its own process. Found on a loaded CI machine: the daemon went on, marked
the memory surfaced and logged a second ``user-prompt-submit`` row. Had it committed first, the
hook's own answer would have left that memory out, and nobody reads the daemon's answer — the
memory would be lost to the whole session.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters import recall_client
from memdir.adapters.hooks import fastpath
from memdir.adapters.hooks.forwarded import serve_hook
from memdir.adapters.hosts import dialect
from memdir.recall.warm import WarmRecall
from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost, FakeSession

QUESTION = "when is the staging database rebuilt?"


def _prompt(host: FakeHost, s: FakeSession, warm: WarmRecall, answer_by: float | None) -> Any:
    body: dict[str, Any] = {
        "event": "user-prompt-submit",
        "stdin": json.dumps(s.payload("user-prompt-submit", prompt=QUESTION)),
        "cwd": str(host.project),
        "env": {**host.env, "MEMDIR_RECALL_COLD_WAIT": "30"},
        "flags": {},
    }
    if answer_by is not None:
        body["answer_by"] = answer_by
    return serve_hook(body, warm, dialect)


def _rows(host: FakeHost) -> list[dict[str, Any]]:
    return list(json.loads(host.memdir("--json", "hook", "log", "--limit", "0").stdout))


def test_a_prompt_answered_after_the_hook_gave_up_marks_nothing_surfaced(tmp_path: Path) -> None:
    host = FakeHost(tmp_path)
    memory = MemoryStore(host.memory_dir).create(
        "Staging rebuild",
        "The staging database is rebuilt every Sunday night",
        "project",
        "The staging database is rebuilt from a production snapshot every Sunday at 23:00 UTC.",
    )
    s = host.session()
    warm = WarmRecall()

    late = _prompt(host, s, warm, answer_by=time.time() - 1)
    assert late == {"stdout": "", "stderr": ""}
    assert s.state().surfaced == []
    events = [row["event"] for row in _rows(host)]
    assert events == ["daemon-late"]

    # the answer the model does see (the hook's own, or the next in time) still gets the memory
    on_time = _prompt(host, s, warm, answer_by=time.time() + 60)
    assert str((host.memory_dir / memory.path).resolve()) in on_time["stdout"]
    assert s.state().surfaced == [str((host.memory_dir / memory.path).resolve())]
    assert [row["event"] for row in _rows(host)] == ["daemon-late", "user-prompt-submit"]


def test_a_request_without_a_deadline_is_answered_as_before(tmp_path: Path) -> None:
    host = FakeHost(tmp_path)
    MemoryStore(host.memory_dir).create(
        "Staging rebuild",
        "The staging database is rebuilt every Sunday night",
        "project",
        "The staging database is rebuilt from a production snapshot every Sunday at 23:00 UTC.",
    )
    s = host.session()
    answer = _prompt(host, s, WarmRecall(), answer_by=None)
    assert "Sunday at 23:00 UTC" in answer["stdout"]


def test_the_fast_path_tells_the_daemon_when_it_stops_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[dict[str, Any]] = []

    def fake_request(sock: Any, payload: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        sent.append({**payload, "timeout": timeout})
        return {"stdout": "", "stderr": ""}

    monkeypatch.setattr(recall_client, "request", fake_request)
    monkeypatch.setattr(recall_client, "wait_if_starting", lambda sock: None)
    before = time.time()
    stdin = json.dumps({"session_id": "s1", "prompt": QUESTION}).encode()
    env = {"MEMDIR_HOME": str(tmp_path / "home")}
    assert fastpath.forward(["hook", "user-prompt-submit"], stdin, env, str(tmp_path)) == ("", "")
    [payload] = sent
    assert before + payload["timeout"] <= payload["answer_by"] <= time.time() + payload["timeout"]
