"""The Anthropic provider against canned Messages API replies (httpx2 MockTransport, no network)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from memdir.errors import (
    InvalidOutputError,
    ProviderConfigError,
    ProviderError,
    ProviderUnavailableError,
)
from memdir.llm.anthropic_provider import AnthropicProvider
from memdir.llm.base import (
    CompletionRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from memdir.llm.retry import RetryingProvider, RetryPolicy
from tests.llm.conftest import CannedAPI, LoopbackAPI

pytestmark = pytest.mark.usefixtures("allow_real_providers")

SCHEMA = {
    "type": "object",
    "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
    "required": ["selected_memories"],
    "additionalProperties": False,
}
WRITE = ToolSpec("Write", "Write a file", {"type": "object", "properties": {"path": {}}})


def message(content: list[dict[str, Any]], stop: str = "end_turn", **usage: int) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 11, "output_tokens": 7, **usage},
    }


def error(kind: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}}


def provider(api: CannedAPI) -> AnthropicProvider:
    return AnthropicProvider("claude-test", api_key="sk-test", http_client=api.client())


async def test_request_shape_with_cache_schema_and_tools(api: CannedAPI) -> None:
    api.reply(200, message([{"type": "text", "text": '{"selected_memories": ["a.md"]}'}]))
    request = CompletionRequest(
        system=[TextBlock("stable instructions"), TextBlock("manifest")],
        messages=[
            Message("user", "find it"),
            Message(
                "assistant", [TextBlock("ok"), ToolUseBlock("toolu_1", "Write", {"path": "x"})]
            ),
            Message("user", [ToolResultBlock("toolu_1", "denied", is_error=True)]),
        ],
        max_tokens=256,
        tools=[WRITE],
        json_schema=SCHEMA,
        temperature=0.0,
        stop=["END"],
        cache_prefix=True,
    )
    reply = await provider(api).complete(request)
    sent = api.body()
    assert api.requests[0].url.path == "/v1/messages"
    headers = api.requests[0].headers
    assert "sk-test" in headers.get("x-api-key", "") + headers.get("authorization", "")
    assert sent["model"] == "claude-test"
    assert sent["max_tokens"] == 256
    assert sent["system"] == [
        {"type": "text", "text": "stable instructions"},
        {"type": "text", "text": "manifest", "cache_control": {"type": "ephemeral"}},
    ]
    assert sent["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert sent["tools"] == [
        {"name": "Write", "description": "Write a file", "input_schema": WRITE.input_schema}
    ]
    assert sent["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Write",
        "input": {"path": "x"},
    }
    assert sent["messages"][2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "denied",
        "is_error": True,
    }
    assert "temperature" not in sent  # the 2.x Messages API takes no sampling parameters
    assert sent["stop_sequences"] == ["END"]
    assert reply.parsed_json == {"selected_memories": ["a.md"]}


async def test_no_cache_marker_unless_asked(api: CannedAPI) -> None:
    api.reply(200, message([{"type": "text", "text": "hi"}]))
    await provider(api).complete(CompletionRequest(system="plain", messages=[Message("user", "q")]))
    sent = api.body()
    assert sent["system"] == [{"type": "text", "text": "plain"}]
    assert "output_config" not in sent
    assert "tools" not in sent


async def test_cache_marker_goes_on_the_last_tool_without_a_system_prompt(api: CannedAPI) -> None:
    api.reply(200, message([{"type": "text", "text": "hi"}]))
    read = ToolSpec("Read", "Read a file", {"type": "object"})
    request = CompletionRequest(
        system="", messages=[Message("user", "q")], tools=[read, WRITE], cache_prefix=True
    )
    await provider(api).complete(request)
    tools = api.body()["tools"]
    assert "cache_control" not in tools[0]
    assert tools[1]["cache_control"] == {"type": "ephemeral"}
    assert "system" not in api.body()


async def test_reply_maps_tool_calls_and_cache_usage(api: CannedAPI) -> None:
    api.reply(
        200,
        message(
            [
                {"type": "text", "text": "writing"},
                {"type": "tool_use", "id": "toolu_9", "name": "Write", "input": {"path": "m.md"}},
            ],
            stop="tool_use",
            cache_read_input_tokens=900,
            cache_creation_input_tokens=40,
        ),
    )
    reply = await provider(api).complete(
        CompletionRequest(system="s", messages=[Message("user", "q")], tools=[WRITE])
    )
    assert reply.text == "writing"
    assert reply.tool_calls == [ToolUseBlock("toolu_9", "Write", {"path": "m.md"})]
    assert reply.stop_reason == "tool_use"
    assert reply.usage == Usage(11, 7, cache_read_tokens=900, cache_write_tokens=40)


async def test_refusal_is_an_error(api: CannedAPI) -> None:
    api.reply(200, message([], stop="refusal"))
    with pytest.raises(ProviderError, match="refused"):
        await provider(api).complete(CompletionRequest(system="s", messages=[Message("user", "q")]))


async def test_structured_reply_that_is_not_json_is_invalid_output(api: CannedAPI) -> None:
    api.reply(
        200, message([{"type": "text", "text": '{"selected_memories": ['}], stop="max_tokens")
    )
    request = CompletionRequest(system="s", messages=[Message("user", "q")], json_schema=SCHEMA)
    with pytest.raises(InvalidOutputError):
        await provider(api).complete(request)


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (401, "authentication_error", ProviderConfigError),
        (403, "permission_error", ProviderConfigError),
        (400, "invalid_request_error", ProviderError),
        (429, "rate_limit_error", ProviderUnavailableError),
        (529, "overloaded_error", ProviderUnavailableError),
        (500, "api_error", ProviderUnavailableError),
    ],
)
async def test_http_errors_map_to_the_memdir_tree(
    api: CannedAPI, status: int, kind: str, expected: type[ProviderError]
) -> None:
    api.reply(status, error(kind, "nope"))
    with pytest.raises(ProviderError) as caught:
        await provider(api).complete(CompletionRequest(system="s", messages=[Message("user", "q")]))
    assert type(caught.value) is expected
    assert len(api.requests) == 1  # the SDK's own retries are off


async def test_rate_limit_is_retried_honouring_retry_after(api: CannedAPI) -> None:
    api.reply(429, error("rate_limit_error", "slow down"), {"retry-after": "3"})
    api.reply(200, message([{"type": "text", "text": "ok"}]))
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    retrying = RetryingProvider(
        provider(api), RetryPolicy(base_delay=0.1, rng=random.Random(1)), sleep=sleep
    )
    reply = await retrying.complete(CompletionRequest(system="s", messages=[Message("user", "q")]))
    assert reply.text == "ok"
    assert len(api.requests) == 2
    assert slept == [3.0]


def test_missing_key_is_a_config_error() -> None:
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider("claude-test", api_key=None)


async def test_real_http_round_trip_against_a_loopback_server(loopback: LoopbackAPI) -> None:
    loopback.respond = lambda _: (200, message([{"type": "text", "text": '{"ok": true}'}]), {})
    provider = AnthropicProvider("claude-test", api_key="sk-loop", base_url=loopback.url)
    request = CompletionRequest(
        system="stable",
        messages=[Message("user", "q")],
        json_schema={"type": "object"},
        cache_prefix=True,
    )
    try:
        reply = await provider.complete(request)
    finally:
        await provider.aclose()
    assert reply.parsed_json == {"ok": True}
    (seen,) = loopback.received
    assert seen.path == "/v1/messages"
    assert "sk-loop" in seen.headers.get("x-api-key", "") + seen.headers.get("authorization", "")
    assert seen.body["system"][-1]["cache_control"] == {"type": "ephemeral"}
