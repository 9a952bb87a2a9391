"""Retries for transient provider failures: exponential backoff, full jitter, per-attempt timeout.

Only ``ProviderUnavailableError`` (429, 5xx, overload, timeouts, dropped connections) is retried;
auth failures, bad requests, refusals and invalid output are permanent and surface at once, because
repeating them only burns quota. Providers map their SDK errors onto that split (see
``status_error``), so this policy is written once. Sleeping and randomness are injected so tests run
in microseconds and can assert the exact delays.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from memdir.errors import (
    PromptTooLongError,
    ProviderConfigError,
    ProviderError,
    ProviderUnavailableError,
)
from memdir.llm.base import Completion, CompletionRequest, Provider

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``max_attempts`` counts the first try; delay n is uniform in [0, min(cap, base * 2**n)]."""

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def delay(self, retry_index: int, retry_after: float | None = None) -> float:
        ceiling = min(self.max_delay, self.base_delay * (2**retry_index))
        jittered = self.rng.uniform(0.0, ceiling)
        # A server's Retry-After is a floor: retrying sooner is refused again.
        if retry_after is not None:
            return min(self.max_delay, max(jittered, retry_after))
        return jittered


_TOO_LONG = re.compile(
    r"prompt is too long|maximum context length|context[ _]length[ _]exceeded|"
    r"too many (?:input )?tokens|exceeds the context window",
    re.IGNORECASE,
)


def _gap_tokens(detail: str) -> int | None:
    """How far over the window a request was, from the provider's error text, if it says."""
    match = re.search(r"(\d+)\s*tokens?\s*>\s*(\d+)", detail)  # Anthropic: "215000 tokens > 200000"
    if match:
        return max(0, int(match.group(1)) - int(match.group(2)))
    match = re.search(r"maximum context length is (\d+).*?(\d+) tokens", detail, re.DOTALL)
    if match:  # OpenAI: "maximum context length is 8192 tokens. However, ... 9000 tokens"
        return max(0, int(match.group(2)) - int(match.group(1)))
    return None


def status_error(
    kind: str, status: int, detail: str, retry_after: float | None = None
) -> ProviderError:
    """The memdir error for an HTTP status from a provider API."""
    message = f"{kind} API returned HTTP {status}: {detail}"
    if status in (400, 413) and _TOO_LONG.search(detail):
        return PromptTooLongError(message, gap_tokens=_gap_tokens(detail))
    if status in (401, 403):
        return ProviderConfigError(f"{message} (check the API key and its permissions)")
    if status in (408, 409, 429) or status >= 500:
        return ProviderUnavailableError(message, retry_after=retry_after)
    return ProviderError(message)


async def call_with_retries(
    attempt: Callable[[], Awaitable[Completion]],
    *,
    policy: RetryPolicy,
    timeout: float | None = None,
    sleep: Sleep = asyncio.sleep,
) -> Completion:
    """Run ``attempt`` until it succeeds, fails permanently, or attempts run out.

    ``timeout`` bounds each attempt; an attempt that overruns counts as transient.
    """
    retries = 0
    while True:
        try:
            if timeout is None:
                return await attempt()
            async with asyncio.timeout(timeout):
                return await attempt()
        except TimeoutError:
            error: ProviderUnavailableError = ProviderUnavailableError(
                f"provider call timed out after {timeout:g}s"
            )
        except ProviderUnavailableError as exc:
            error = exc
        if retries + 1 >= policy.max_attempts:
            raise error
        await sleep(policy.delay(retries, error.retry_after))
        retries += 1


class RetryingProvider:
    """Wraps any provider with ``call_with_retries``; the request's ``timeout`` bounds attempts."""

    def __init__(
        self,
        inner: Provider,
        policy: RetryPolicy | None = None,
        *,
        default_timeout: float | None = 120.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self.default_timeout = default_timeout
        self._sleep = sleep

    @property
    def constrained_decoding(self) -> bool:
        """Forwarded so callers can still see the wrapped provider's capability."""
        return bool(getattr(self.inner, "constrained_decoding", False))

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    async def complete(self, request: CompletionRequest) -> Completion:
        timeout = request.timeout if request.timeout is not None else self.default_timeout
        return await call_with_retries(
            lambda: self.inner.complete(request),
            policy=self.policy,
            timeout=timeout,
            sleep=self._sleep,
        )


__all__ = ["RetryPolicy", "RetryingProvider", "Sleep", "call_with_retries", "status_error"]
