from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memdir.llm.base as base
from memdir.errors import InvalidOutputError, ProviderConfigError
from memdir.llm.base import (
    Completion,
    CompletionRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    estimate_message_tokens,
    estimate_tokens,
    parse_json_output,
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("abcd", 1), ("abcdef", 2), ("x" * 400, 100), ("x" * 10, 2)],
)
def test_estimate_tokens_is_length_over_four_rounded(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  {"a": [1, 2]}\n', {"a": [1, 2]}),
        ('```json\n{"a": true}\n```', {"a": True}),
        ("```\n[1]\n```", [1]),
    ],
)
def test_parse_json_output_accepts_json_and_fenced_json(text: str, value: Any) -> None:
    assert parse_json_output(text) == value


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_parse_json_output_round_trips_any_json(value: Any) -> None:
    assert parse_json_output(Completion.from_json(value).text) == value


def test_estimate_message_tokens_counts_every_block() -> None:
    messages = [
        Message("user", "x" * 40),
        Message("assistant", [TextBlock("y" * 8), ToolUseBlock("t", "Read", {"p": "zz"})]),
        Message("user", [ToolResultBlock("t", "r" * 400)]),
    ]
    expected = 10 + 2 + estimate_tokens('Read{"p": "zz"}') + 100
    assert estimate_message_tokens(messages) == expected
    assert estimate_message_tokens([]) == 0


@pytest.mark.parametrize("text", ["", "not json", '{"a": ', "```json\n{oops}\n```"])
def test_parse_json_output_rejects_non_json(text: str) -> None:
    with pytest.raises(InvalidOutputError):
        parse_json_output(text)


def test_message_blocks_and_text() -> None:
    plain = Message("user", "hello")
    assert plain.blocks == (TextBlock("hello"),)
    mixed = Message(
        "user",
        [ToolResultBlock("t1", "ok"), TextBlock("a"), TextBlock("b")],
    )
    assert mixed.text == "ab"
    assert Message("user", "").blocks == ()


def test_request_system_blocks_join() -> None:
    request = CompletionRequest(system=[TextBlock("one"), TextBlock("two")], messages=[])
    assert request.system_text == "one\n\ntwo"
    assert CompletionRequest(system="", messages=[]).system_blocks == ()


def test_completion_constructors() -> None:
    assert Completion.from_text("hi").text == "hi"
    as_json = Completion.from_json({"k": [1]})
    assert as_json.parsed_json == {"k": [1]}
    assert parse_json_output(as_json.text) == {"k": [1]}
    call = Completion.from_tool_call("Write", {"file_path": "a.md"}, id="toolu_1")
    assert call.stop_reason == "tool_use"
    assert call.tool_calls == [ToolUseBlock("toolu_1", "Write", {"file_path": "a.md"})]
    many = Completion.from_tool_calls([("Read", {"p": 1}), ("Read", {"p": 2})])
    ids = [c.id for c in many.tool_calls]
    assert len(set(ids)) == 2
    assert all(i.startswith("toolu_") for i in ids)


def test_completion_as_message_keeps_text_then_calls() -> None:
    reply = Completion.from_tool_call("Read", {"x": 1}, id="t", text="let me look")
    message = reply.as_message()
    assert message.role == "assistant"
    assert message.blocks == (TextBlock("let me look"), ToolUseBlock("t", "Read", {"x": 1}))


def test_suite_forbids_real_providers() -> None:
    # tests/conftest.py turns the switch off for the whole suite.
    assert base.ALLOW_REAL_PROVIDERS is False
    with pytest.raises(ProviderConfigError, match="ALLOW_REAL_PROVIDERS"):
        base.require_real_providers_allowed("test")
