"""The bounded tool loop driven by the scripted provider: turns, parallel tools, limits, forks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from memdir.agent.policy import memory_agent_policy
from memdir.agent.runner import AgentRunner, fork_messages
from memdir.agent.toolset import ToolBox, ToolResult
from memdir.errors import ProviderError
from memdir.llm.base import (
    Completion,
    CompletionRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
)
from memdir.llm.scripted import ScriptedProvider


def _results(request: CompletionRequest) -> list[ToolResultBlock]:
    return [b for b in request.messages[-1].blocks if isinstance(b, ToolResultBlock)]


async def test_read_then_write_then_stop(
    jailed_tools: Any, memory_dir: Path, outside: Path
) -> None:
    provider = ScriptedProvider(
        [
            Completion.from_tool_calls(
                [("Read", {"file_path": str(outside / "notes.txt")}), ("Glob", {"pattern": "*"})]
            ),
            Completion.from_tool_call(
                "Write", {"file_path": str(memory_dir / "a.md"), "content": "hello\n"}
            ),
            Completion.from_text("Saved one memory."),
        ]
    )
    runner = AgentRunner(provider, jailed_tools, system="sys")
    result = await runner.run("extract", prefix=[Message("user", "hi"), Message("assistant", "yo")])
    assert result.stop_reason == "end_turn" and result.turns == 3
    assert [c.name for c in result.tool_calls] == ["Read", "Glob", "Write"]
    assert result.written_paths == [memory_dir / "a.md"]
    assert result.final_text == "Saved one memory."
    second = provider.requests[1]
    assert [r.is_error for r in _results(second)] == [False, False]
    assert "alpha" in _results(second)[0].content
    assert all(r.cache_prefix for r in provider.requests)
    assert provider.requests[0].messages[:2] == [Message("user", "hi"), Message("assistant", "yo")]
    assert {s.name for s in provider.requests[0].tools} == {
        "Read", "Grep", "Glob", "Bash", "Edit", "Write"
    }  # fmt: skip


async def test_denials_are_reported_to_the_model_and_summarised(
    jailed_tools: Any, outside: Path
) -> None:
    provider = ScriptedProvider(
        [
            Completion.from_tool_calls(
                [
                    ("Write", {"file_path": str(outside / "evil.md"), "content": "x"}),
                    ("Bash", {"command": "rm notes.txt"}),
                ]
            ),
            Completion.from_text("ok"),
        ]
    )
    result = await AgentRunner(provider, jailed_tools, system="s").run("go")
    errors = _results(provider.requests[1])
    assert [e.is_error for e in errors] == [True, True]
    assert "memory-dir-jail" in errors[0].content and "read-only-shell" in errors[1].content
    assert len(result.denials) == 2 and result.written_paths == []
    assert (outside / "notes.txt").exists() and not (outside / "evil.md").exists()
    assert len(result.summary()["denials"]) == 2


async def test_max_turns_bounds_the_loop(jailed_tools: Any) -> None:
    provider = ScriptedProvider.always(Completion.from_tool_call("Glob", {"pattern": "*"}))
    result = await AgentRunner(provider, jailed_tools, system="s", max_turns=3).run("go")
    assert (result.stop_reason, result.turns, provider.calls) == ("max_turns", 3, 3)
    assert len(result.tool_calls) == 3


class _SlowTool:
    spec = ToolSpec("Slow", "sleeps", {"type": "object", "properties": {}})

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
        await asyncio.sleep(0.3)
        return ToolResult("done")


async def test_tool_calls_of_one_turn_run_in_parallel() -> None:
    provider = ScriptedProvider(
        [Completion.from_tool_calls([("Slow", {})] * 4), Completion.from_text("ok")]
    )
    started = time.monotonic()
    result = await AgentRunner(provider, ToolBox([_SlowTool()]), system="s").run("go")
    assert time.monotonic() - started < 0.9  # four sequential calls would take 1.2 s
    assert len(result.tool_calls) == 4


async def test_time_limit_ends_the_run() -> None:
    provider = ScriptedProvider.always(Completion.from_tool_call("Slow", {}))
    runner = AgentRunner(provider, ToolBox([_SlowTool()]), system="s", time_limit=0.5)
    result = await runner.run("go")
    assert result.stop_reason == "time_limit" and 0.4 < result.elapsed < 1.0


async def test_provider_error_ends_the_run_without_raising(jailed_tools: Any) -> None:
    provider = ScriptedProvider([ProviderError("overloaded")])
    result = await AgentRunner(provider, jailed_tools, system="s").run("go")
    assert (result.stop_reason, result.error) == ("error", "overloaded")


class _BlockingTool:
    spec = ToolSpec("Block", "waits forever", {"type": "object", "properties": {}})

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolResult("never")


async def test_cancellation_is_clean_and_keeps_the_partial_transcript() -> None:
    tool = _BlockingTool()
    provider = ScriptedProvider(
        [Completion.from_text("thinking"), Completion.from_tool_call("Block", {})]
    )
    runner = AgentRunner(provider, ToolBox([tool]), system="s")
    first = await runner.run("go")
    assert first.stop_reason == "end_turn"
    task = asyncio.create_task(runner.run("again"))
    await asyncio.wait_for(tool.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert tool.cancelled
    assert runner.current is not None and runner.current.stop_reason == "cancelled"
    assert runner.current.turns == 1 and runner.current.tool_calls == []


class _BuggyTool:
    spec = ToolSpec("Buggy", "raises", {"type": "object", "properties": {}})

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
        raise KeyError("boom")


async def test_a_tool_bug_becomes_an_error_result() -> None:
    provider = ScriptedProvider([Completion.from_tool_call("Buggy", {}), Completion.from_text("")])
    result = await AgentRunner(provider, ToolBox([_BuggyTool()]), system="s").run("go")
    assert result.tool_calls[0].is_error and "boom" in result.tool_calls[0].result


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ([], [Message("user", "do it")]),
        (
            [Message("user", "a"), Message("assistant", "b")],
            [Message("user", "a"), Message("assistant", "b"), Message("user", "do it")],
        ),
        ([Message("user", "a")], [Message("user", [TextBlock("a"), TextBlock("do it")])]),
    ],
)
def test_fork_messages(prefix: list[Message], expected: list[Message]) -> None:
    assert fork_messages(prefix, "do it") == expected


@pytest.fixture
def jailed_tools(tools: ToolBox, memory_dir: Path) -> Any:
    return memory_agent_policy(tools, memory_dir)
