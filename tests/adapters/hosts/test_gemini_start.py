"""Regressions found in the real Gemini CLI 0.61 about where memdir's session start lands.

- ``gemini --resume`` drops every stored user message that *starts* with ``<hook_context>`` —
  the SessionStart prefix — and the user's first prompt with it. So the session start goes
  with the first prompt (a BeforeAgent part, which a resume keeps), once per context.
- A compression seconds after the previous one (each prompt compressing) was taken for "the
  same session-start delivered twice" by the 10-second guard, and the block that compression
  took out never came back: the host's ``timestamp`` now tells two events apart.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost, HookRun

START = "# Memory (memdir)"
RECORDED = Path(__file__).resolve().parents[2] / "fixtures/hosts/gemini/session/recorded.jsonl"
NAMES = {"session-start": "SessionStart", "user-prompt-submit": "BeforeAgent"}


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"}, host="gemini")
    MemoryStore(fake.memory_dir).create(
        "Deploys", "production deploys go to fly.io", "project", "fly.io, blue-green.\n"
    )
    yield fake
    fake.stop_daemon()


class Session:
    def __init__(self, host: FakeHost) -> None:
        self.host = host
        self.id = str(uuid.uuid4())
        chats = host.home / ".gemini" / "tmp" / "project" / "chats"
        chats.mkdir(parents=True, exist_ok=True)
        self.path = chats / f"session-2026-12-01T23-08-{self.id[:8]}.jsonl"
        self.path.write_text("")

    def hook(self, event: str, **extra: Any) -> HookRun:
        body = {
            "session_id": self.id,
            "transcript_path": str(self.path),
            "cwd": str(self.host.project),
            "hook_event_name": NAMES[event],
            "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            **extra,
        }
        run = self.host.run(event, body)
        assert run.code == 0 and "Traceback" not in run.stderr, run.stderr
        return run

    def start(self, source: str) -> HookRun:
        return self.hook("session-start", source=source)

    def prompt(self, text: str) -> str:
        return self.hook("user-prompt-submit", prompt=text).context


def test_the_start_block_comes_with_the_first_prompt_once(host: FakeHost) -> None:
    s = Session(host)
    assert s.start("startup").stdout == ""  # the resume would drop a prefixed prompt
    first = s.prompt("how do production deploys work here?")
    assert first.count(START) == 1 and "fly.io, blue-green" in first
    assert first.index(START) < first.index("fly.io, blue-green")
    assert START not in s.prompt("and what about the staging deploys?")
    # --resume keeps that first prompt's part: the context holds the block already
    assert s.start("resume").stdout == ""
    assert START not in s.prompt("remind me how the deploys work")
    # a new MEMORY.md line is new to the context; /clear starts a new one
    MemoryStore(host.memory_dir).create("Coffee", "the user drinks espresso", "user", "x\n")
    assert s.start("resume").stdout == ""
    assert "Coffee" in s.prompt("what else should I know today?")
    s.start("clear")
    assert s.prompt("a fresh start for the deploys").count(START) == 1


def test_each_compression_gets_the_block_back_even_seconds_apart(host: FakeHost) -> None:
    lines = RECORDED.read_text().splitlines(keepends=True)
    s = Session(host)
    s.start("startup")
    assert START in s.prompt("how do production deploys work here?")
    for upto in (17, 27, 29):  # the recording's three compressions, one after each prompt
        s.path.write_text("".join(lines[:upto]))
        assert START in s.prompt("and after that compression, what about deploys?"), upto
    assert START not in s.prompt("and with nothing compressed since?")
