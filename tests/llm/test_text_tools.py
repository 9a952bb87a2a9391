"""Tool calls as JSON in text: what a reply means for the request it answers."""

from __future__ import annotations

import pytest

from memdir.errors import InvalidOutputError
from memdir.llm.base import (
    Completion,
    CompletionRequest,
    Message,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from memdir.llm.text_tools import completion_from_text, first_json, tools_prompt, transcript

WRITE = ToolSpec("Write", "Write a file.", {"type": "object"})
READ = ToolSpec("Read", "Read a file.", {"type": "object"})
TOOLS = CompletionRequest(system="s", messages=[Message("user", "hi")], tools=(WRITE, READ))
SCHEMA = {"type": "object", "properties": {"keep": {"type": "boolean"}}}


def reply(text: str, request: CompletionRequest = TOOLS) -> Completion:
    return completion_from_text(text, request, usage=Usage(input_tokens=3))


def test_one_call_after_a_sentence() -> None:
    done = reply('I will save it.\n{"tool": "Write", "input": {"file_path": "a.md"}}')
    assert [(c.name, c.input) for c in done.tool_calls] == [("Write", {"file_path": "a.md"})]
    assert done.stop_reason == "tool_use" and done.usage.input_tokens == 3


def test_several_calls_in_a_list_and_in_a_code_fence() -> None:
    text = '```json\n[{"tool": "Read", "input": {}}, {"tool": "Write", "input": {"x": 1}}]\n```'
    assert [c.name for c in reply(text).tool_calls] == ["Read", "Write"]


def test_a_tool_the_request_does_not_offer_is_never_called() -> None:
    done = reply('{"tool": "Bash", "input": {"command": "rm -rf /"}}')
    assert done.tool_calls == [] and done.stop_reason == "end_turn"


def test_an_answer_and_plain_prose_end_the_turn() -> None:
    assert reply('{"answer": "Saved."}').text == "Saved."
    assert reply("Nothing worth saving here.").text == "Nothing worth saving here."
    assert reply('{"answer": {"n": 2}}').text == '{"n": 2}'


def test_hostile_input_is_dropped_not_run() -> None:
    done = reply('{"tool": "Write", "input": "not an object"} {"tool": ["Write"]}')
    assert [(c.name, c.input) for c in done.tool_calls] == [("Write", {})]


def test_a_structured_answer_is_parsed() -> None:
    plain = CompletionRequest(system="s", messages=[Message("user", "x")], json_schema=SCHEMA)
    assert reply('Here: {"keep": true}', plain).parsed_json == {"keep": True}
    with pytest.raises(InvalidOutputError):
        reply("no json here", plain)
    with_tools = CompletionRequest(
        system="s", messages=[Message("user", "x")], tools=(WRITE,), json_schema=SCHEMA
    )
    assert reply('{"answer": {"keep": false}}', with_tools).parsed_json == {"keep": False}


def test_first_json_skips_braces_that_are_not_json() -> None:
    assert first_json('a {b} then {"c": 1}') == {"c": 1}
    with pytest.raises(InvalidOutputError):
        first_json("{ never closed")


def test_the_transcript_writes_calls_back_in_the_models_own_format() -> None:
    messages = [
        Message("user", "hi"),
        Message("assistant", [ToolUseBlock("t1", "Write", {"x": 1})]),
        Message("user", [ToolResultBlock("t1", "wrote a.md")]),
    ]
    text = transcript(messages)
    assert '{"tool": "Write", "input": {"x": 1}}' in text
    assert "Tool result (t1):\nwrote a.md" in text and text.endswith("[assistant]\n")
    assert transcript([Message("user", "just this")]) == "just this"
    assert "a JSON list" in tools_prompt([WRITE], several=True)
    assert "a JSON list" not in tools_prompt([WRITE])
