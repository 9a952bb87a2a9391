"""The extraction service's scheduling: single flight + one trailing run, cursor, skip, throttle."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from memdir.errors import ConfigError, ProviderError
from memdir.extract.agent import AgentExtractor
from memdir.extract.base import ExtractionResult, Turn
from memdir.extract.service import ExtractionService, messages_since, wrote_memory
from memdir.llm.base import Completion, CompletionRequest, Message, ToolUseBlock
from memdir.llm.scripted import ScriptedProvider
from memdir.store import MemoryStore
from tests.extract.support import conversation

NOTHING = Completion.from_text("Nothing to save.")


def _service(
    store: MemoryStore, provider: ScriptedProvider, every_n_turns: int = 1
) -> ExtractionService:
    return ExtractionService(
        store.root, AgentExtractor(provider, store), every_n_turns=every_n_turns
    )


def _conversation_of(request: CompletionRequest) -> list[str]:
    return [m.text for m in request.messages[:-1]]


async def test_notify_returns_immediately_and_drain_waits(store: MemoryStore) -> None:
    provider = ScriptedProvider.always(NOTHING, delay=0.3)
    service = _service(store, provider)
    started = time.monotonic()
    service.notify_turn_end(conversation("hello there", "hi"))
    assert time.monotonic() - started < 0.05 and service.in_progress
    assert await service.drain(timeout=5)
    assert provider.calls == 1 and service.cursor == "u1"


async def test_notifications_during_a_run_give_one_trailing_run_with_the_newest_context(
    store: MemoryStore,
) -> None:
    provider = ScriptedProvider.always(NOTHING, delay=0.3)
    service = _service(store, provider)
    talk = conversation("one", "a1", "two", "a2", "three", "a3", "four", "a4")
    service.notify_turn_end(talk[:2])
    await asyncio.sleep(0.05)
    for end in (4, 6, 8):  # three turns finish while the first extraction is still running
        service.notify_turn_end(talk[:end])
    assert await service.drain(timeout=5)
    assert provider.calls == 2 and service.runs == 2
    assert _conversation_of(provider.requests[1]) == [m.message.text for m in talk]
    assert "~6 messages" in provider.requests[1].messages[-1].text  # only what followed u1
    assert service.cursor == "u7"


async def test_cursor_advances_only_on_success(store: MemoryStore) -> None:
    provider = ScriptedProvider([ProviderError("overloaded"), NOTHING])
    service = _service(store, provider)
    talk = conversation("one", "a1", "two", "a2")
    service.notify_turn_end(talk[:2])
    await service.drain()
    assert service.cursor is None and not service.results[-1].ok
    assert service.results[-1].error == "overloaded"
    service.notify_turn_end(talk)
    await service.drain()
    assert "~4 messages" in provider.requests[1].messages[-1].text  # retried from the start
    assert service.cursor == "u3" and service.results[-1].ok


async def test_extractor_exception_is_recorded_not_raised(store: MemoryStore) -> None:
    class Broken:
        async def extract(self, messages: object, *, new_messages: int) -> ExtractionResult:
            raise RuntimeError("bug")

    service = ExtractionService(store.root, Broken())
    service.notify_turn_end(conversation("x", "y"))
    await service.drain()
    assert service.cursor is None and service.results[-1].error == "bug"


def _main_agent_write(path: str) -> Turn:
    call = ToolUseBlock("toolu_1", "Write", {"file_path": path, "content": "x"})
    return Turn("w1", Message("assistant", [call]))


async def test_skips_when_the_main_agent_already_wrote_memory(
    store: MemoryStore, memory_dir: Path
) -> None:
    provider = ScriptedProvider([])
    results: list[ExtractionResult] = []
    service = ExtractionService(
        memory_dir, AgentExtractor(provider, store), on_result=results.append
    )
    talk = [*conversation("remember I like tea"), _main_agent_write(str(memory_dir / "tea.md"))]
    service.notify_turn_end([*talk, Turn("u9", Message("user", "thanks"))])
    await service.drain()
    assert provider.calls == 0 and service.cursor == "u9"
    assert results[0].skipped == "main agent wrote memory"


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        ("{mem}/a.md", True),
        ("{mem}/team/b.md", True),
        ("{mem}/../x.md", False),
        ("/tmp/y.md", False),
    ],
)
def test_wrote_memory(memory_dir: Path, path: str, inside: bool) -> None:
    assert wrote_memory([_main_agent_write(path.format(mem=memory_dir))], memory_dir) is inside


def test_wrote_memory_ignores_reads_and_user_messages(memory_dir: Path) -> None:
    read = ToolUseBlock("t", "Read", {"file_path": str(memory_dir / "a.md")})
    assert not wrote_memory([Turn("a", Message("assistant", [read]))], memory_dir)
    write = ToolUseBlock("t", "Write", {"file_path": str(memory_dir / "a.md")})
    assert not wrote_memory([Turn("a", Message("user", [write]))], memory_dir)


@pytest.mark.parametrize(("cursor", "expected"), [(None, 4), ("u1", 2), ("u3", 0), ("gone", 4)])
def test_messages_since(cursor: str | None, expected: int) -> None:
    assert len(messages_since(conversation("a", "b", "c", "d"), cursor)) == expected


async def test_throttle_runs_every_n_turns(store: MemoryStore) -> None:
    provider = ScriptedProvider.always(NOTHING)
    service = _service(store, provider, every_n_turns=3)
    talk = conversation(*[f"m{i}" for i in range(12)])
    for turn in range(1, 7):
        service.notify_turn_end(talk[: 2 * turn])
        await service.drain()
    assert provider.calls == 2
    assert "~6 messages" in provider.requests[0].messages[-1].text
    assert service.cursor == "u11"


async def test_trailing_runs_bypass_the_throttle(store: MemoryStore) -> None:
    provider = ScriptedProvider.always(NOTHING, delay=0.2)
    service = _service(store, provider, every_n_turns=2)
    talk = conversation(*[f"m{i}" for i in range(6)])
    service.notify_turn_end(talk[:2])
    assert not service.in_progress or await service.drain()
    service.notify_turn_end(talk[:4])  # second turn: throttle satisfied, run starts
    await asyncio.sleep(0.05)
    service.notify_turn_end(talk[:6])  # arrives mid-run: trailing run, no throttle wait
    await service.drain()
    assert provider.calls == 2 and service.cursor == "u5"


async def test_drain_times_out_and_cancel_stops(store: MemoryStore) -> None:
    provider = ScriptedProvider.always(NOTHING, delay=5)
    service = _service(store, provider)
    service.notify_turn_end(conversation("a", "b"))
    assert not await service.drain(timeout=0.1)
    await service.cancel()
    assert not service.in_progress and service.cursor is None


async def test_failing_callback_does_not_break_extraction(store: MemoryStore) -> None:
    def explode(result: ExtractionResult) -> None:
        raise RuntimeError("ui broke")

    provider = ScriptedProvider.always(NOTHING)
    service = ExtractionService(store.root, AgentExtractor(provider, store), on_result=explode)
    service.notify_turn_end(conversation("a", "b"))
    await service.drain()
    assert service.cursor == "u1"


def test_every_n_turns_must_be_positive(store: MemoryStore) -> None:
    with pytest.raises(ConfigError):
        _service(store, ScriptedProvider(), every_n_turns=0)
