from __future__ import annotations

import asyncio
import random

import pytest

from memdir.errors import (
    InvalidOutputError,
    ProviderConfigError,
    ProviderError,
    ProviderUnavailableError,
)
from memdir.llm.base import Completion, CompletionRequest, Message
from memdir.llm.retry import RetryingProvider, RetryPolicy, call_with_retries, status_error
from memdir.llm.scripted import ScriptedProvider

REQUEST = CompletionRequest(system="s", messages=[Message("user", "q")])


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def policy(attempts: int = 4, seed: int = 7) -> RetryPolicy:
    return RetryPolicy(
        max_attempts=attempts, base_delay=1.0, max_delay=10.0, rng=random.Random(seed)
    )


def test_delay_is_jittered_below_an_exponential_cap() -> None:
    p = policy()
    for index, cap in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (4, 10.0), (9, 10.0)]:
        samples = [p.delay(index) for _ in range(200)]
        assert all(0.0 <= s <= cap for s in samples)
        assert max(samples) > cap / 2  # jitter spans the range rather than sitting at zero


def test_retry_after_is_a_floor_capped_by_max_delay() -> None:
    p = policy()
    assert p.delay(0, retry_after=3.0) == 3.0
    assert p.delay(0, retry_after=60.0) == 10.0


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, ProviderError),
        (401, ProviderConfigError),
        (403, ProviderConfigError),
        (404, ProviderError),
        (408, ProviderUnavailableError),
        (429, ProviderUnavailableError),
        (500, ProviderUnavailableError),
        (529, ProviderUnavailableError),
    ],
)
def test_status_error_classifies(status: int, kind: type[ProviderError]) -> None:
    error = status_error("X", status, "detail")
    assert type(error) is kind
    assert str(status) in str(error)


async def test_transient_errors_are_retried_with_backoff() -> None:
    sleeps = Sleeps()
    provider = RetryingProvider(
        ScriptedProvider(
            [
                ProviderUnavailableError("429"),
                ProviderUnavailableError("503", retry_after=2.5),
                Completion.from_text("done"),
            ]
        ),
        policy(),
        sleep=sleeps,
    )
    reply = await provider.complete(REQUEST)
    assert reply.text == "done"
    assert len(sleeps.delays) == 2
    assert 0.0 <= sleeps.delays[0] <= 1.0
    assert sleeps.delays[1] >= 2.5


@pytest.mark.parametrize(
    "error",
    [ProviderConfigError("401"), ProviderError("400"), InvalidOutputError("bad json")],
)
async def test_permanent_errors_are_not_retried(error: ProviderError) -> None:
    sleeps = Sleeps()
    inner = ScriptedProvider([error, Completion.from_text("never")])
    with pytest.raises(type(error)):
        await RetryingProvider(inner, policy(), sleep=sleeps).complete(REQUEST)
    assert inner.calls == 1
    assert sleeps.delays == []


async def test_attempts_run_out_with_the_last_transient_error() -> None:
    sleeps = Sleeps()
    inner = ScriptedProvider.always(ProviderUnavailableError("overloaded"))
    with pytest.raises(ProviderUnavailableError, match="overloaded"):
        await RetryingProvider(inner, policy(attempts=3), sleep=sleeps).complete(REQUEST)
    assert inner.calls == 3
    assert len(sleeps.delays) == 2


async def test_each_attempt_is_bounded_by_the_timeout() -> None:
    sleeps = Sleeps()
    inner = ScriptedProvider.always(Completion.from_text("late"), delay=5.0)
    with pytest.raises(ProviderUnavailableError, match="timed out"):
        await call_with_retries(
            lambda: inner.complete(REQUEST), policy=policy(attempts=2), timeout=0.01, sleep=sleeps
        )
    assert inner.calls == 2


async def test_request_timeout_overrides_default() -> None:
    inner = ScriptedProvider([Completion.from_text("slow")], delay=0.2)
    provider = RetryingProvider(inner, policy(attempts=1), default_timeout=0.01)
    request = CompletionRequest(system="", messages=[], timeout=5.0)
    assert (await provider.complete(request)).text == "slow"


async def test_aclose_reaches_the_wrapped_provider() -> None:
    class Closable(ScriptedProvider):
        closed = False

        async def aclose(self) -> None:
            self.closed = True

    inner = Closable()
    await RetryingProvider(inner).aclose()
    assert inner.closed
    await RetryingProvider(ScriptedProvider()).aclose()  # nothing to close is fine


async def test_cancellation_is_not_retried() -> None:
    inner = ScriptedProvider.always(Completion.from_text("x"), delay=5.0)
    task = asyncio.create_task(RetryingProvider(inner, policy(), sleep=Sleeps()).complete(REQUEST))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert inner.calls == 1


@pytest.mark.parametrize(
    ("status", "detail", "gap"),
    [
        (400, "prompt is too long: 215000 tokens > 200000 maximum", 15000),
        (
            400,
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 9000 tokens.",
            808,
        ),
        (413, "request exceeds the context window", None),
    ],
)
def test_prompt_too_long_is_its_own_error_with_the_gap(
    status: int, detail: str, gap: int | None
) -> None:
    from memdir.errors import PromptTooLongError

    error = status_error("X", status, detail)
    assert isinstance(error, PromptTooLongError) and error.gap_tokens == gap
    assert not isinstance(status_error("X", 400, "bad request"), PromptTooLongError)
