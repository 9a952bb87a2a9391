"""The runner handing a whole run to a provider that runs tool loops itself (the host's CLI):
every tool call still goes through memdir's sandbox and is recorded the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memdir.agent.policy import memory_agent_policy
from memdir.agent.runner import AgentRunner
from memdir.agent.toolset import ToolBox
from memdir.errors import HostModelUnavailableError
from memdir.llm.base import Completion, ToolLoopProvider, Usage
from memdir.llm.scripted import ScriptedLoopProvider


@pytest.fixture
def jailed_tools(tools: ToolBox, memory_dir: Path) -> Any:
    return memory_agent_policy(tools, memory_dir)


async def test_a_hosted_run_records_writes_denials_usage_and_cost(
    jailed_tools: Any, memory_dir: Path, outside: Path
) -> None:
    inside = memory_dir / "user_role.md"
    provider = ScriptedLoopProvider(
        [
            Completion(
                tool_calls=Completion.from_tool_calls(
                    [
                        ("Write", {"file_path": str(inside), "content": "---\nname: r\n---\nx\n"}),
                        ("Write", {"file_path": str(outside / "evil.md"), "content": "x"}),
                    ]
                ).tool_calls,
                stop_reason="tool_use",
                usage=Usage(100, 10),
            ),
            Completion(text="done", usage=Usage(50, 5)),
        ],
        cost_usd=0.002,
    )
    assert isinstance(provider, ToolLoopProvider)
    runner = AgentRunner(provider, jailed_tools, system="s", max_turns=4)
    run = await runner.run("extract")
    assert run.stop_reason == "end_turn" and run.turns == 2
    assert run.written_paths == [inside] and inside.is_file()
    assert [c.name for c in run.denials] == ["Write"] and not (outside / "evil.md").exists()
    assert [c.turn for c in run.tool_calls] == [1, 1]
    assert (run.usage.input_tokens, run.usage.output_tokens) == (150, 15)
    assert run.cost() == {"input_tokens": 150, "output_tokens": 15, "cost_usd": 0.004}
    assert run.final_text == "done"


async def test_a_hosted_run_that_cannot_start_keeps_its_failure(jailed_tools: Any) -> None:
    provider = ScriptedLoopProvider([HostModelUnavailableError("claude is not installed")])
    run = await AgentRunner(provider, jailed_tools, system="s").run("extract")
    assert run.stop_reason == "error" and isinstance(run.failure, HostModelUnavailableError)
