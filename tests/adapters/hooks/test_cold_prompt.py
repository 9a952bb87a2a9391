"""A prompt that finds the daemon still loading waits for it within the prompt's budget (issue
#37); past it the prompt is answered without recall and what recall finds then is delivered
with the session's next prompt.

Driven through the daemon's own entry (``serve_hook``, what the fast path's request runs) with
the engine build held on an event, so "still loading" is a fact of the test, not of timing.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import memdir.adapters.hooks.forwarded as forwarded
import memdir.recall.warm as warm_module
from memdir.adapters.hooks.forwarded import (
    ATTENDED_BUDGET,
    FIRST_BUILD_BUDGET,
    cold_wait,
    serve_hook,
)
from memdir.adapters.hooks.state import SETTLED_MAX_AGE, SessionStore
from memdir.adapters.hosts import dialect
from memdir.errors import ConfigError
from memdir.recall.warm import WarmRecall
from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost, FakeSession


def _log(host: FakeHost) -> list[dict[str, Any]]:
    return list(json.loads(host.memdir("--json", "hook", "log").stdout))


def _prompt(host: FakeHost, s: FakeSession, warm: WarmRecall, text: str) -> dict[str, Any]:
    body = {
        "event": "user-prompt-submit",
        "stdin": json.dumps(s.payload("user-prompt-submit", prompt=text)),
        "cwd": str(host.project),
        "env": {**host.env, "MEMDIR_RECALL_COLD_WAIT": "0.05"},
        "flags": {},
    }
    answer = serve_hook(body, warm, dialect)
    s.transcript.user(text)
    return answer


def _staging_memory(host: FakeHost) -> None:
    MemoryStore(host.memory_dir).create(
        "Staging rebuild",
        "The staging database is rebuilt every Sunday night",
        "project",
        "The staging database is rebuilt from a production snapshot every Sunday at 23:00 UTC.",
    )


def _wait(what: str, check: Any) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _settled_cold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[FakeHost, FakeSession, WarmRecall]:
    """A first prompt answered while the engine was still loading, and its recall settled."""
    host = FakeHost(tmp_path)
    _staging_memory(host)
    loaded = threading.Event()
    real_build = warm_module.build_engine

    def slow_build(memory_dir: Path, cache_dir: Path) -> Any:
        assert loaded.wait(60), "the test never let the engine load"
        return real_build(memory_dir, cache_dir)

    monkeypatch.setattr(warm_module, "build_engine", slow_build)
    warm = WarmRecall()
    s = host.session()

    first = _prompt(host, s, warm, "when is the staging database rebuilt?")
    assert first == {"stdout": "", "stderr": ""}  # nothing injected, nothing waited for
    [row] = [r for r in _log(host) if r["event"] == "user-prompt-submit"]
    assert row["via"].startswith("daemon (still loading") and row["injected"] == []

    loaded.set()
    _wait("the recall to settle", lambda: any(r["event"] == "recall-settled" for r in _log(host)))
    [settled] = [r for r in _log(host) if r["event"] == "recall-settled"]
    assert [Path(p).name for p in settled["found"]] == ["staging_rebuild.md"]
    return host, s, warm


def test_a_cold_prompt_answers_at_once_and_the_next_prompt_gets_the_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, s, warm = _settled_cold(tmp_path, monkeypatch)

    second = _prompt(host, s, warm, "and who owns the deploy pipeline?")
    context = json.loads(second["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert "every Sunday at 23:00 UTC" in context
    rows = [r for r in _log(host) if r["event"] == "user-prompt-submit"]
    assert [Path(p).name for p in rows[-1]["settled"]] == ["staging_rebuild.md"]

    # delivered once: never twice in a session
    third = _prompt(host, s, warm, "remind me when staging is rebuilt")
    assert "23:00 UTC" not in third["stdout"]


def test_a_late_recall_is_not_delivered_for_a_deleted_memory_or_after_ten_minutes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, s, warm = _settled_cold(tmp_path, monkeypatch)
    (host.memory_dir / "staging_rebuild.md").unlink()  # deleted before the next prompt
    second = _prompt(host, s, warm, "and what should we name the new cat?")
    assert "23:00 UTC" not in second["stdout"]
    assert [r for r in _log(host) if r["event"] == "user-prompt-submit"][-1]["settled"] is None

    stale, s2, warm2 = _settled_cold(tmp_path / "stale", monkeypatch)
    store = SessionStore(stale.cache_dir)
    with store.update(s2.session_id) as state:
        assert state.settled  # what the first prompt's recall found, waiting
        state.settled_at -= SETTLED_MAX_AGE + 1  # the user came back eleven minutes later
    later = _prompt(stale, s2, warm2, "and what should we name the new cat?")
    assert "23:00 UTC" not in later["stdout"]
    assert [r for r in _log(stale) if r["event"] == "user-prompt-submit"][-1]["settled"] is None


def test_a_warm_daemon_answers_the_prompt_itself(tmp_path: Path) -> None:
    host = FakeHost(tmp_path)
    _staging_memory(host)
    warm = WarmRecall()
    warm.warm_up(str(host.memory_dir), str(host.cache_dir))
    s = host.session()
    answer = _prompt(host, s, warm, "when is the staging database rebuilt?")
    assert "23:00 UTC" in json.loads(answer["stdout"])["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("raw", ["soon", "-1", "61", "nan"])
def test_a_bad_cold_wait_is_a_clear_error(raw: str) -> None:
    with pytest.raises(ConfigError, match="MEMDIR_RECALL_COLD_WAIT"):
        cold_wait({"MEMDIR_RECALL_COLD_WAIT": raw})


def test_the_cold_wait_follows_whether_a_person_is_waiting() -> None:
    cc = dialect("claude-code")
    now = time.time()
    # interactive: what is left of the prompt's budget since the hook process began
    assert 0.3 < cold_wait({}, cc, now - 0.1) <= ATTENDED_BUDGET - 0.1
    assert cold_wait({"CLAUDE_CODE_SESSION_ATTENDED": "1"}, cc, now - 5) == 0.0  # spent
    assert cold_wait({}, cc, now + 3600) == ATTENDED_BUDGET  # a clock gone wrong: bounded
    assert 0 < cold_wait({}, cc) < ATTENDED_BUDGET  # a caller that cannot say when it began
    assert cold_wait({"CLAUDE_CODE_SESSION_ATTENDED": "0"}, cc) == 4.0  # claude -p: recall matters
    unattended = {"CLAUDE_CODE_SESSION_ATTENDED": "0", "MEMDIR_RECALL_COLD_WAIT": "2"}
    assert cold_wait(unattended, cc) == 2.0


def _default_wait_prompt(host: FakeHost, s: FakeSession, *, started: float) -> dict[str, Any]:
    """The forwarded prompt as the fast path sends it, with the default cold wait."""
    return {
        "event": "user-prompt-submit",
        "stdin": json.dumps(s.payload("user-prompt-submit", prompt="when is staging rebuilt?")),
        "cwd": str(host.project),
        "env": {k: v for k, v in host.env.items() if k != "MEMDIR_RECALL_COLD_WAIT"},
        "flags": {},
        "started": started,  # when the hook process began
    }


def test_a_first_prompt_waits_for_a_loading_daemon_within_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #37: the daemon session start launched is still loading when the prompt arrives;
    the prompt waits for it (within what is left of the hook's budget) and carries the memory
    itself — not 'with the next prompt', which a one-shot run never has."""
    host = FakeHost(tmp_path)
    _staging_memory(host)
    built = warm_module.build_engine(host.memory_dir, host.cache_dir)
    warm_module.recall_attachments(built, "load the model and the index", [], 1)
    released = threading.Event()
    threading.Timer(0.1, released.set).start()  # the load finishes 0.1 s into the prompt

    def loading(memory_dir: Path, cache_dir: Path) -> Any:
        assert released.wait(60)
        return built

    monkeypatch.setattr(warm_module, "build_engine", loading)
    body = _default_wait_prompt(host, host.session(), started=time.time())  # the whole budget
    started = time.monotonic()
    answer = serve_hook(body, WarmRecall(), dialect)
    # not the 60 s a loading engine may take: the budget, plus the recall itself (which a busy
    # machine slows down; the budget's arithmetic has its own tests above)
    assert time.monotonic() - started < ATTENDED_BUDGET + 2.0
    context = json.loads(answer["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert "every Sunday at 23:00 UTC" in context
    [row] = [r for r in _log(host) if r["event"] == "user-prompt-submit"]
    assert row["via"] == "daemon" and row.get("settled") is None


def test_past_the_budget_the_prompt_goes_without_and_the_next_one_delivers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = FakeHost(tmp_path)
    _staging_memory(host)
    released = threading.Event()
    real_build = warm_module.build_engine
    WarmRecall().warm_up(str(host.memory_dir), str(host.cache_dir))  # an index on disk

    def loading(memory_dir: Path, cache_dir: Path) -> Any:
        assert released.wait(60)
        return real_build(memory_dir, cache_dir)

    monkeypatch.setattr(warm_module, "build_engine", loading)
    warm = WarmRecall()
    s = host.session()
    body = _default_wait_prompt(host, s, started=time.time() - ATTENDED_BUDGET)  # spent already
    assert serve_hook(body, warm, dialect) == {"stdout": "", "stderr": ""}
    released.set()
    _wait("the recall to settle", lambda: any(r["event"] == "recall-settled" for r in _log(host)))
    second = _prompt(host, s, warm, "and who owns the deploy pipeline?")
    assert "23:00 UTC" in json.loads(second["stdout"])["hookSpecificOutput"]["additionalContext"]


def test_the_first_build_of_a_dir_gets_a_longer_budget_once() -> None:
    cc = dialect("claude-code")
    now = time.time()
    assert ATTENDED_BUDGET < cold_wait({}, cc, now - 0.1, first_build=True) <= FIRST_BUILD_BUDGET
    assert cold_wait({}, cc, now - FIRST_BUILD_BUDGET, first_build=True) == 0.0
    assert cold_wait({"MEMDIR_RECALL_COLD_WAIT": "0.2"}, cc, now, first_build=True) == 0.2


def test_the_first_prompt_after_a_fresh_install_carries_its_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #37: no index on disk yet (a new memdir home). The daemon's first load reads every
    memory, past the usual budget; the prompt waits for it (once per dir) and carries the
    memory, instead of leaving it for a next prompt a one-shot run never has."""
    twin = FakeHost(tmp_path / "twin")  # loads the model into this process first: the build
    _staging_memory(twin)  # the prompt waits on is then this dir's, not a busy machine's cold start
    warm_module.recall_attachments(
        warm_module.build_engine(twin.memory_dir, twin.cache_dir), "load the model", [], 1
    )
    host = FakeHost(tmp_path / "fresh")
    _staging_memory(host)
    warm = WarmRecall()
    assert warm.first_build(str(host.memory_dir), str(host.cache_dir))
    released = threading.Event()
    threading.Timer(ATTENDED_BUDGET + 0.1, released.set).start()  # past the usual budget
    real_build = warm_module.build_engine

    def loading(memory_dir: Path, cache_dir: Path) -> Any:
        assert released.wait(60)
        return real_build(memory_dir, cache_dir)

    monkeypatch.setattr(warm_module, "build_engine", loading)
    # the first build's budget, made roomy: a busy machine may take a second for the build
    # itself; what is tested is that the first build gets its own budget, not the usual one
    monkeypatch.setattr(forwarded, "FIRST_BUILD_BUDGET", 8.0)
    body = _default_wait_prompt(host, host.session(), started=time.time())
    started = time.monotonic()
    answer = serve_hook(body, warm, dialect)
    assert ATTENDED_BUDGET < time.monotonic() - started < 8.0
    context = json.loads(answer["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert "every Sunday at 23:00 UTC" in context
    assert not warm.first_build(str(host.memory_dir), str(host.cache_dir))  # once per dir
    assert not WarmRecall().first_build(str(host.memory_dir), str(host.cache_dir))  # on disk


def test_warming_up_answers_no_made_up_query(tmp_path: Path) -> None:
    """The load a prompt waits on reads the index and loads the model; it does not have the
    model read the "best" memories for a query nobody asked."""
    host = FakeHost(tmp_path)
    _staging_memory(host)
    warm = WarmRecall()
    engine, _lock = warm.engine(str(host.memory_dir), str(host.cache_dir))
    asked: list[str] = []
    real_select = engine.selector.select_sync  # type: ignore[attr-defined]

    def select(query: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(query)
        return real_select(query, *args, **kwargs)

    engine.selector.select_sync = select  # type: ignore[attr-defined]
    assert warm.ready(str(host.memory_dir), str(host.cache_dir), 60)
    assert asked == []
    found = warm.recall(str(host.memory_dir), str(host.cache_dir), "staging rebuild", [], 5)
    assert asked == ["staging rebuild"] and "23:00 UTC" in found[0]["content"]
