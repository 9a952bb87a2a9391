"""The OpenAI-compatible provider: canned replies (MockTransport) and a real loopback server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memdir.errors import (
    InvalidOutputError,
    ProviderConfigError,
    ProviderError,
    ProviderUnavailableError,
)
from memdir.llm.base import (
    CompletionRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from memdir.llm.openai_compat import OpenAICompatProvider
from memdir.llm.retry import RetryingProvider, RetryPolicy
from tests.llm.conftest import CannedAPI, LoopbackAPI, Received

pytestmark = pytest.mark.usefixtures("allow_real_providers")

SCHEMA = {
    "type": "object",
    "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
    "required": ["selected_memories"],
    "additionalProperties": False,
}
READ = ToolSpec("Read", "Read a file", {"type": "object", "properties": {"path": {}}})


def chat(
    content: str | None,
    *,
    finish: str = "stop",
    tool_calls: list[dict[str, Any]] | None = None,
    refusal: str | None = None,
    cached: int | None = None,
) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "local",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


def provider(api: CannedAPI, **kwargs: Any) -> OpenAICompatProvider:
    return OpenAICompatProvider(
        "local-model", base_url="http://llm.invalid/v1", http_client=api.client(), **kwargs
    )


async def test_request_shape_messages_tools_and_schema(api: CannedAPI) -> None:
    api.reply(200, chat('{"selected_memories": []}'))
    request = CompletionRequest(
        system="be brief",
        messages=[
            Message("user", "look"),
            Message("assistant", [TextBlock("reading"), ToolUseBlock("c1", "Read", {"path": "a"})]),
            Message("user", [ToolResultBlock("c1", "gone", is_error=True), TextBlock("and?")]),
        ],
        max_tokens=256,
        tools=[READ],
        json_schema=SCHEMA,
        temperature=0.2,
        stop=["\n\n"],
    )
    reply = await provider(api).complete(request)
    sent = api.body()
    assert api.requests[0].url.path == "/v1/chat/completions"
    assert sent["model"] == "local-model"
    assert sent["max_tokens"] == 256
    assert sent["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "look"},
        {
            "role": "assistant",
            "content": "reading",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "Read", "arguments": '{"path": "a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Error: gone"},
        {"role": "user", "content": "and?"},
    ]
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Read",
                "description": "Read a file",
                "parameters": READ.input_schema,
            },
        }
    ]
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": SCHEMA, "strict": True},
    }
    assert sent["temperature"] == 0.2
    assert sent["stop"] == ["\n\n"]
    assert reply.parsed_json == {"selected_memories": []}


async def test_max_tokens_parameter_name_is_configurable(api: CannedAPI) -> None:
    api.reply(200, chat("hi"))
    await provider(api, max_tokens_param="max_completion_tokens").complete(
        CompletionRequest(system="", messages=[Message("user", "q")], max_tokens=9)
    )
    sent = api.body()
    assert sent["max_completion_tokens"] == 9
    assert "max_tokens" not in sent
    assert [m["role"] for m in sent["messages"]] == ["user"]


async def test_reply_maps_tool_calls_usage_and_stop(api: CannedAPI) -> None:
    call = {
        "id": "c7",
        "type": "function",
        "function": {"name": "Read", "arguments": '{"path": "m"}'},
    }
    api.reply(200, chat(None, finish="tool_calls", tool_calls=[call], cached=12))
    reply = await provider(api).complete(
        CompletionRequest(system="s", messages=[Message("user", "q")], tools=[READ])
    )
    assert reply.tool_calls == [ToolUseBlock("c7", "Read", {"path": "m"})]
    assert reply.stop_reason == "tool_use"
    assert reply.text == ""
    assert reply.usage == Usage(20, 5, cache_read_tokens=12)


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]"])
async def test_malformed_tool_arguments_are_invalid_output(api: CannedAPI, arguments: str) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "Read", "arguments": arguments}}
    api.reply(200, chat(None, finish="tool_calls", tool_calls=[call]))
    with pytest.raises(InvalidOutputError, match="Read"):
        await provider(api).complete(CompletionRequest(system="", messages=[Message("user", "q")]))


async def test_refusal_is_an_error(api: CannedAPI) -> None:
    api.reply(200, chat(None, refusal="I can't help with that"))
    with pytest.raises(ProviderError, match="refused"):
        await provider(api).complete(CompletionRequest(system="", messages=[Message("user", "q")]))


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, ProviderConfigError),
        (400, ProviderError),
        (404, ProviderError),
        (429, ProviderUnavailableError),
        (503, ProviderUnavailableError),
    ],
)
async def test_http_errors_map_to_the_memdir_tree(
    api: CannedAPI, status: int, expected: type[ProviderError]
) -> None:
    api.reply(status, {"error": {"message": "nope", "type": "x", "code": None}})
    with pytest.raises(ProviderError) as caught:
        await provider(api).complete(CompletionRequest(system="", messages=[Message("user", "q")]))
    assert type(caught.value) is expected
    assert len(api.requests) == 1


def test_openai_without_key_or_base_url_is_a_config_error() -> None:
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        OpenAICompatProvider("gpt-test")


async def test_real_http_round_trip_against_a_loopback_server(loopback: LoopbackAPI) -> None:
    def respond(request: Received) -> tuple[int, Any, dict[str, str]]:
        last_word = request.body["messages"][-1]["content"].split()[-1]
        return 200, chat(json.dumps({"selected_memories": [last_word]})), {}

    loopback.respond = respond
    provider = OpenAICompatProvider("tiny", base_url=f"{loopback.url}/v1", api_key="local-key")
    try:
        reply = await provider.complete(
            CompletionRequest(
                system="pick", messages=[Message("user", "pick b.md")], json_schema=SCHEMA
            )
        )
    finally:
        await provider.aclose()
    assert reply.parsed_json == {"selected_memories": ["b.md"]}
    assert reply.usage.input_tokens == 20
    (seen,) = loopback.received
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer local-key"
    assert seen.body["response_format"]["json_schema"]["schema"] == SCHEMA


async def test_real_http_rate_limit_is_retried(loopback: LoopbackAPI) -> None:
    limited = {"error": {"message": "slow down", "type": "rate_limit", "code": None}}
    replies = [(429, limited, {"Retry-After": "0"}), (200, chat("done"), {})]
    loopback.respond = lambda _: replies.pop(0)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    inner = OpenAICompatProvider("tiny", base_url=f"{loopback.url}/v1")
    provider = RetryingProvider(inner, RetryPolicy(base_delay=0.01), sleep=sleep)
    try:
        reply = await provider.complete(
            CompletionRequest(system="", messages=[Message("user", "q")])
        )
    finally:
        await provider.aclose()
    assert reply.text == "done"
    assert len(loopback.received) == 2
    assert len(slept) == 1
