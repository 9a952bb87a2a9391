"""The Anthropic Messages API behind the ``Provider`` protocol.

Mapping decisions:

* Structured output uses the API's native ``output_config.format`` (``json_schema``): the model is
  constrained to the schema, so ``parsed_json`` comes from the text reply.
* ``cache_prefix`` puts ``cache_control: ephemeral`` on the last system block (on the last tool
  when there is no system prompt). The cached prefix is tools + system, in that order, so one
  breakpoint covers both and a forked agent that repeats the parent's prefix reads it from cache.
* The SDK's own retries are off (``max_retries=0``): ``RetryingProvider`` owns the retry policy,
  so there is exactly one place that decides what is transient.
* ``stop_reason == "refusal"`` is an error (``ProviderError``): a refusal is not an answer.
* ``temperature`` is not sent: the 2.x SDK's ``messages.create`` no longer accepts sampling
  parameters, so the request's temperature is ignored here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memdir.errors import (
    MissingExtraError,
    ProviderConfigError,
    ProviderError,
    ProviderUnavailableError,
)
from memdir.llm.base import (
    Block,
    Completion,
    CompletionRequest,
    TextBlock,
    ToolUseBlock,
    Usage,
    parse_json_output,
    require_real_providers_allowed,
)
from memdir.llm.retry import status_error

if TYPE_CHECKING:
    import anthropic
    import httpx2

ANTHROPIC_API_URL = "https://api.anthropic.com"


def _block_param(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return {
        "type": "tool_result",
        "tool_use_id": block.tool_use_id,
        "content": block.content,
        "is_error": block.is_error,
    }


def request_body(request: CompletionRequest, model: str) -> dict[str, Any]:
    """The ``messages.create`` keyword arguments for ``request`` (pure; tested directly)."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": [
            {
                "role": m.role,
                "content": m.content
                if isinstance(m.content, str)
                else [_block_param(b) for b in m.content],
            }
            for m in request.messages
        ],
    }
    system: list[dict[str, Any]] = [{"type": "text", "text": b.text} for b in request.system_blocks]
    if system:
        if request.cache_prefix:
            system[-1]["cache_control"] = {"type": "ephemeral"}
        body["system"] = system
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
        if request.cache_prefix and not system:
            body["tools"][-1]["cache_control"] = {"type": "ephemeral"}
    if request.json_schema is not None:
        body["output_config"] = {"format": {"type": "json_schema", "schema": request.json_schema}}
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    return body


def completion_from(message: Any, request: CompletionRequest) -> Completion:
    """Our ``Completion`` for an SDK ``Message``; raises on refusal or unparsable JSON."""
    if message.stop_reason == "refusal":
        raise ProviderError("the model refused the request (stop_reason=refusal)")
    texts: list[str] = []
    calls: list[ToolUseBlock] = []
    for block in message.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            calls.append(ToolUseBlock(id=block.id, name=block.name, input=dict(block.input)))
    text = "".join(texts)
    u = message.usage
    usage = Usage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cache_read_tokens=u.cache_read_input_tokens or 0,
        cache_write_tokens=u.cache_creation_input_tokens or 0,
    )
    parsed = None
    if request.json_schema is not None and not calls:
        parsed = parse_json_output(text)
    return Completion(
        text=text,
        tool_calls=calls,
        stop_reason=message.stop_reason or "end_turn",
        usage=usage,
        parsed_json=parsed,
    )


def _retry_after(headers: Any) -> float | None:
    try:
        return float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None


def map_sdk_error(exc: Exception) -> ProviderError:
    """Translate an ``anthropic`` exception into the memdir tree (transient vs permanent)."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        detail = getattr(exc, "api_message", None) or str(exc)
        return status_error(
            "Anthropic", exc.status_code, detail, _retry_after(exc.response.headers)
        )
    if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
        return ProviderUnavailableError(f"cannot reach the Anthropic API: {exc}")
    return ProviderError(f"Anthropic SDK error: {exc}")


class AnthropicProvider:
    """``complete`` via ``AsyncAnthropic.messages.create``; one attempt per call."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        base_url: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        require_real_providers_allowed("Anthropic")
        if not api_key:
            raise ProviderConfigError(
                "no Anthropic API key: set ANTHROPIC_API_KEY (or MEMDIR_ANTHROPIC_API_KEY)"
            )
        try:
            import anthropic
        except ImportError:
            raise MissingExtraError("anthropic", "anthropic") from None
        self.model = model
        self._client: anthropic.AsyncAnthropic = anthropic.AsyncAnthropic(
            api_key=api_key,
            # Explicit, so the SDK never falls back to reading os.environ itself.
            base_url=base_url or ANTHROPIC_API_URL,
            http_client=http_client,
            max_retries=0,
        )

    async def complete(self, request: CompletionRequest) -> Completion:
        import anthropic

        kwargs = request_body(request, self.model)
        if request.timeout is not None:
            kwargs["timeout"] = request.timeout
        try:
            message = await self._client.messages.create(**kwargs)
        except anthropic.AnthropicError as exc:
            raise map_sdk_error(exc) from exc
        return completion_from(message, request)

    async def aclose(self) -> None:
        await self._client.close()


__all__ = ["AnthropicProvider", "completion_from", "map_sdk_error", "request_body"]
