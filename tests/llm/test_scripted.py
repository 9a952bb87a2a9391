from __future__ import annotations

import asyncio
import time

import pytest

from memdir.errors import InvalidOutputError, ProviderUnavailableError
from memdir.llm.base import Completion, CompletionRequest, Message, Provider
from memdir.llm.scripted import ScriptedProvider, ScriptExhausted


def ask(text: str, *, schema: dict[str, object] | None = None) -> CompletionRequest:
    return CompletionRequest(system="sys", messages=[Message("user", text)], json_schema=schema)


def test_is_a_provider() -> None:
    assert isinstance(ScriptedProvider(), Provider)


async def test_replays_steps_in_order_and_records_requests() -> None:
    provider = ScriptedProvider(
        [Completion.from_text("one"), Completion.from_tool_call("Write", {"file_path": "a.md"})]
    )
    first = await provider.complete(ask("q1"))
    second = await provider.complete(ask("q2"))
    assert first.text == "one"
    assert second.tool_calls[0].name == "Write"
    assert [r.messages[0].text for r in provider.requests] == ["q1", "q2"]
    assert provider.last_request.messages[0].text == "q2"
    provider.assert_exhausted()


async def test_raises_scripted_exceptions_instances_and_classes() -> None:
    provider = ScriptedProvider([ProviderUnavailableError("busy"), TimeoutError])
    with pytest.raises(ProviderUnavailableError, match="busy"):
        await provider.complete(ask("q"))
    with pytest.raises(TimeoutError):
        await provider.complete(ask("q"))
    assert provider.calls == 2


async def test_callables_see_the_request_sync_and_async() -> None:
    async def echo_async(request: CompletionRequest) -> Completion:
        return Completion.from_text(request.messages[-1].text.upper())

    provider = ScriptedProvider(
        [lambda r: Completion.from_text(r.system_text), echo_async],
    )
    assert (await provider.complete(ask("q"))).text == "sys"
    assert (await provider.complete(ask("shout"))).text == "SHOUT"


async def test_running_out_is_a_clear_assertion() -> None:
    provider = ScriptedProvider([Completion.from_text("only")])
    await provider.complete(ask("first"))
    with pytest.raises(ScriptExhausted, match=r"call 2.*second"):
        await provider.complete(ask("second"))


def test_unused_steps_are_reported() -> None:
    with pytest.raises(AssertionError, match="1 scripted step"):
        ScriptedProvider([Completion.from_text("x")]).assert_exhausted()


async def test_structured_requests_parse_text_like_a_real_provider() -> None:
    schema: dict[str, object] = {"type": "object"}
    provider = ScriptedProvider([Completion.from_text('{"a": 1}'), Completion.from_text("nope")])
    assert (await provider.complete(ask("q", schema=schema))).parsed_json == {"a": 1}
    with pytest.raises(InvalidOutputError):
        await provider.complete(ask("q", schema=schema))


async def test_plain_requests_leave_text_unparsed() -> None:
    reply = await ScriptedProvider([Completion.from_text('{"a": 1}')]).complete(ask("q"))
    assert reply.parsed_json is None


async def test_always_repeats_after_the_steps() -> None:
    provider = ScriptedProvider.always(Completion.from_text("again"))
    provider.add(Completion.from_text("first"))
    texts = [(await provider.complete(ask("q"))).text for _ in range(3)]
    assert texts == ["first", "again", "again"]


async def test_delay_makes_a_slow_provider() -> None:
    provider = ScriptedProvider([Completion.from_text("slow")], delay=0.05)
    started = time.perf_counter()
    await provider.complete(ask("q"))
    assert time.perf_counter() - started >= 0.05
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.01):
            await ScriptedProvider([Completion.from_text("x")], delay=1.0).complete(ask("q"))
