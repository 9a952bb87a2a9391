"""Session-memory thresholds, single-flight background updates, waiting, and the cursor."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from memdir.session.memory import (
    SessionMemory,
    SessionMemoryConfig,
    SessionState,
    UpdateOutcome,
    last_turn_had_tool_call,
)
from memdir.session.messages import ChatMessage
from memdir.session.offline import OfflineUpdater


class SlowUpdater:
    """Counts calls and blocks until released (to observe single flight)."""

    name = "slow"
    cursor_at_end = False

    def __init__(self) -> None:
        self.calls = 0
        self.release = asyncio.Event()

    async def update(self, path: Path, **kwargs: object) -> UpdateOutcome:
        self.calls += 1
        await self.release.wait()
        return UpdateOutcome(ok=True, updater=self.name)


def _talk(n: int, *, chars: int = 400, tool_last: bool = False) -> list[ChatMessage]:
    msgs: list[ChatMessage] = []
    for i in range(n):
        msgs.append(ChatMessage.user(f"q{i} " + "x" * chars))
        msgs.append(ChatMessage.assistant(f"a{i} " + "y" * chars))
    if tool_last:
        use = {"type": "tool_use", "id": "t", "name": "Read", "input": {}}
        msgs.append(ChatMessage.assistant([use]))
    return msgs


def test_thresholds_first_update_then_growth_and_tools(tmp_path: Path) -> None:
    cfg = SessionMemoryConfig(init_tokens=1000, update_tokens=500, tool_calls=3)
    mem = SessionMemory(tmp_path / "summary.md", OfflineUpdater(), config=cfg)
    assert not mem.should_update(_talk(2))  # ~530 tokens
    assert mem.should_update(_talk(5))
    mem.state.tokens_at_last_update = 1000
    assert not mem.should_update(_talk(5), tokens=1400)  # grew 400 < 500
    assert mem.should_update(_talk(5), tokens=1600)  # grew enough, last turn had no tool call
    busy = _talk(5, tool_last=True)
    mem.state.processed_id = busy[-2].uuid
    assert not mem.should_update(busy, tokens=1600)  # a tool call pending, only 1 since cursor
    calls = [
        ChatMessage.assistant(
            [{"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {}} for i in range(3)]
        )
    ]
    assert mem.should_update([*busy, *calls], tokens=1600)


async def test_single_flight_and_wait(tmp_path: Path) -> None:
    updater = SlowUpdater()
    cfg = SessionMemoryConfig(init_tokens=1, poll_seconds=0.01)
    mem = SessionMemory(tmp_path / "summary.md", updater, config=cfg)
    assert mem.maybe_update(_talk(1)) is True
    assert mem.maybe_update(_talk(2)) is False  # one at a time
    assert await mem.wait_for_update(timeout=0.05) is False  # still running
    updater.release.set()
    assert await mem.wait_for_update(timeout=2) is True
    assert updater.calls == 1 and mem.state.updates == 1


async def test_stale_update_is_not_waited_for(tmp_path: Path) -> None:
    now = [0.0]
    updater = SlowUpdater()
    cfg = SessionMemoryConfig(init_tokens=1, stale_seconds=60, poll_seconds=0.01)
    mem = SessionMemory(tmp_path / "summary.md", updater, config=cfg, clock=lambda: now[0])
    mem.maybe_update(_talk(1))
    now[0] = 61.0
    assert await mem.wait_for_update() is False
    updater.release.set()
    assert await mem.drain(2)


async def test_cursor_moves_only_after_a_turn_without_tool_calls(tmp_path: Path) -> None:
    updater = SlowUpdater()
    updater.release.set()
    mem = SessionMemory(tmp_path / "summary.md", updater)
    busy = _talk(2, tool_last=True)
    await mem.update_now(busy)
    assert mem.state.processed_id == busy[-1].uuid and mem.last_summarized_id is None
    done = _talk(2)
    await mem.update_now(done)
    assert mem.last_summarized_id == done[-1].uuid
    reloaded = SessionState.load(tmp_path / "state.json")
    assert reloaded.last_summarized_id == done[-1].uuid and reloaded.updates == 2


async def test_a_failing_updater_is_reported_not_raised(tmp_path: Path) -> None:
    class Broken:
        name = "broken"
        cursor_at_end = True

        async def update(self, path: Path, **kwargs: object) -> UpdateOutcome:
            raise RuntimeError("boom")

    mem = SessionMemory(tmp_path / "summary.md", Broken())
    outcome = await mem.update_now(_talk(1))
    assert not outcome.ok and outcome.error == "boom"
    assert mem.last_summarized_id is None and mem.status()["last_error"] == "boom"


def test_corrupt_state_file_starts_fresh(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text("{not json")
    assert SessionState.load(tmp_path / "state.json") == SessionState()
    (tmp_path / "state.json").write_text('["a list"]')
    assert SessionState.load(tmp_path / "state.json") == SessionState()


def test_last_turn_tool_call_looks_at_every_piece() -> None:
    use = {"type": "tool_use", "id": "t", "name": "Read", "input": {}}
    split: Sequence[ChatMessage] = [
        ChatMessage.user("go"),
        ChatMessage.assistant([use], message_id="m"),
        ChatMessage.assistant("and some text", message_id="m"),
    ]
    assert last_turn_had_tool_call(split)
    assert not last_turn_had_tool_call([ChatMessage.user("hi"), ChatMessage.assistant("yo")])
    assert not last_turn_had_tool_call([])
