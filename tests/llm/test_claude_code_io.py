"""The claude-code provider's mapping, against stream-json recorded from the real CLI 2.1.332
(tests/llm/data/claude_code/, recorded against a loopback fake of the Messages API)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memdir.errors import HostModelUnavailableError, InvalidOutputError
from memdir.llm import claude_code_io as io
from memdir.llm.base import (
    CompletionRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

DATA = Path(__file__).parent / "data" / "claude_code"


def events(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def result_of(name: str) -> dict[str, Any]:
    return next(e for e in events(name) if e.get("type") == "result")


def messages_of(name: str) -> list[Message]:
    return [m for e in events(name) if (m := io.message_from_event(e)) is not None]


def test_tool_loop_messages_map_back_to_memdir_tool_names() -> None:
    messages = messages_of("tool_loop.jsonl")
    assert [m.role for m in messages] == ["assistant", "user", "assistant"]
    (call,) = messages[0].blocks
    assert call == ToolUseBlock(id="toolu_01", name="Echo", input={"text": "hi"})
    (result,) = messages[1].blocks
    assert result == ToolResultBlock("toolu_01", "echo:hi", False)
    assert messages[2].text == "done"


def test_result_cost_and_usage() -> None:
    cost = io.cost_from(result_of("tool_loop.jsonl"))
    assert cost.cost_usd == pytest.approx(0.000054)
    assert (cost.usage.input_tokens, cost.usage.output_tokens) == (240, 60)
    assert cost.turns == 2
    assert io.result_error(result_of("tool_loop.jsonl")) is None


def test_plain_text_completion() -> None:
    request = CompletionRequest(system="S", messages=[Message("user", "hello")])
    completion = io.completion_from(messages_of("text.jsonl"), result_of("text.jsonl"), request)
    assert completion.text == "ok from fake"
    assert completion.usage.input_tokens == 120


def test_structured_output_comes_from_the_result_not_the_text() -> None:
    schema = {"type": "object", "properties": {"selected": {"type": "array"}}}
    request = CompletionRequest(system="S", messages=[Message("user", "pick")], json_schema=schema)
    result = result_of("structured.jsonl")
    completion = io.completion_from(messages_of("structured.jsonl"), result, request)
    assert completion.parsed_json == {"selected": ["a.md"]}
    without = {k: v for k, v in result.items() if k != "structured_output"}
    with pytest.raises(InvalidOutputError):
        io.completion_from([], without, request)


def test_not_logged_in_is_unavailable() -> None:
    error = io.result_error(result_of("not_logged_in.jsonl"))
    assert isinstance(error, HostModelUnavailableError)
    assert "not logged in" in str(error)


def test_auth_refusal_during_retries_stops_early() -> None:
    retries = [e for e in events("auth_retry.jsonl") if e.get("subtype") == "api_retry"]
    assert retries and isinstance(io.retry_failure(retries[0]), HostModelUnavailableError)
    assert io.retry_failure({"type": "system", "subtype": "api_retry", "error_status": 529}) is None


def test_capture_run_ends_at_max_turns_without_error() -> None:
    result = result_of("capture_max_turns.jsonl")
    assert result["subtype"] == "error_max_turns"
    assert io.result_error(result) is None
    assert io.result_error({"subtype": "error_during_execution", "is_error": True}) is not None


def test_build_call_has_no_builtin_tools_settings_or_persistence() -> None:
    spec = ToolSpec("Write", "write a file", {"type": "object"})
    request = CompletionRequest(system="be brief", messages=[Message("user", "hi")], tools=[spec])
    call = io.build_call(
        request,
        model="haiku",
        max_turns=4,
        budget_usd=0.5,
        relay=io.mcp_config("/py", "/tmp/s"),
        tools=[spec],
    )
    args = call.args
    pairs = dict(zip(args, [*args[1:], ""], strict=True))
    assert pairs["--tools"] == "" and pairs["--setting-sources"] == ""
    assert "--strict-mcp-config" in args and "--no-session-persistence" in args
    assert pairs["--allowedTools"] == "mcp__memdir__Write"
    assert pairs["--system-prompt"] == "be brief"
    assert pairs["--max-turns"] == "4" and pairs["--max-budget-usd"] == "0.5000"
    server = json.loads(pairs["--mcp-config"])["mcpServers"]["memdir"]
    assert server["args"] == ["-m", "memdir.llm.relay_mcp", "/tmp/s"]
    assert call.prompt == "hi"


def test_child_env_sets_the_guard_and_drops_nesting_markers() -> None:
    env = io.child_env({"PATH": "/bin", "CLAUDECODE": "1", "HOME": "/h"})
    assert env["MEMDIR_CHILD"] == "1" and env["HOME"] == "/h"
    assert "CLAUDECODE" not in env


def test_a_conversation_becomes_a_labelled_transcript() -> None:
    prompt = io.render_prompt(
        [
            Message("user", "fix the test"),
            Message("assistant", [TextBlock("ok"), ToolUseBlock("t1", "Read", {"p": "a"})]),
            Message("user", [ToolResultBlock("t1", "boom", True)]),
        ]
    )
    assert prompt.startswith("[user]\nfix the test")
    assert '(called Read {"p": "a"})' in prompt and "(tool error: boom)" in prompt
    assert prompt.endswith("[assistant]\n")
