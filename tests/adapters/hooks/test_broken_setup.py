"""What a user whose memory setup broke sees (issue #38.4, #38.5): a memory dir that is a
file, or a settings file that is not JSON, gives no injection at all, one hook-log row per
event, a readable `memdir hook log`, and one error line per prompt, not one per hook event."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adapters.hooks.fakehost import FakeHost


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"})
    yield fake
    fake.stop_daemon()


def _log(host: FakeHost) -> tuple[int, list[dict[str, object]], str]:
    done = host.memdir("--json", "hook", "log", "--limit", "0")
    return done.returncode, json.loads(done.stdout or "[]"), done.stderr


def _one_turn(host: FakeHost) -> list[str]:
    """session start, a prompt, the turn's end, the session's end: each event's stdout and
    stderr (the stderr is what a host shows the user)."""
    s = host.session()
    runs = [s.start(), s.prompt("How do we deploy the billing service to production?")]
    s.reply("With make ship.")
    runs += [s.stop(), s.hook("session-end", reason="other")]
    assert all(r.code == 0 for r in runs)
    assert all(r.stdout == "" for r in runs)  # nothing injected, not even the instructions
    return [r.stderr for r in runs]


def test_a_memory_dir_that_is_a_file_injects_nothing_and_says_why_once(host: FakeHost) -> None:
    memory_dir = host.memory_dir
    shutil.rmtree(memory_dir, ignore_errors=True)
    memory_dir.parent.mkdir(parents=True, exist_ok=True)
    memory_dir.write_text("a file where the memory dir should be\n")
    errors = _one_turn(host)
    assert len([e for e in errors if e]) == 1 and "not a directory" in "".join(errors)
    code, rows, _ = _log(host)
    assert code == 0
    assert [r["event"] for r in rows] == [
        "session-start",
        "user-prompt-submit",
        "stop",
        "session-end",
    ]
    assert all("not a directory" in str(r["error"]) for r in rows)
    assert memory_dir.read_text() == "a file where the memory dir should be\n"  # never touched


def test_a_broken_settings_file_leaves_a_row_and_a_readable_log(host: FakeHost) -> None:
    settings = host.home / ".memdir" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("{broken")
    errors = _one_turn(host)
    assert len([e for e in errors if e]) == 1 and "not valid JSON" in "".join(errors)
    code, rows, stderr = _log(host)
    assert code == 0 and "not valid JSON" in stderr
    assert len(rows) == 4 and all("not valid JSON" in str(r["error"]) for r in rows)
    settings.write_text("{}")  # fixed: the rows stay readable beside the project's
    code, rows, _ = _log(host)
    assert code == 0 and len(rows) == 4


def test_the_error_line_comes_back_at_the_next_prompt(host: FakeHost) -> None:
    settings = host.home / ".memdir" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("{broken")
    s = host.session()
    assert s.start().stderr
    assert not s.prompt("How do we deploy the billing service?").stderr  # same turn: once
    s.reply("ok")
    assert not s.stop().stderr
    assert s.prompt("And the payments service, how is it deployed?").stderr  # a new prompt
