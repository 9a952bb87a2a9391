"""Any OpenAI-compatible chat-completions endpoint behind the ``Provider`` protocol.

Covers OpenAI itself and local servers that speak the same API (Ollama, vLLM, LM Studio, the
llama.cpp server). Mapping decisions:

* Tool results, which Anthropic-style messages carry inside a user turn, become ``role: "tool"``
  messages placed right after the assistant turn that called them, as the chat API requires.
* Structured output is ``response_format: {"type": "json_schema", ...}`` with ``strict: true``.
* Prompt caching is automatic on these servers, so ``cache_prefix`` needs no marker; cached prompt
  tokens are reported when the server returns ``prompt_tokens_details.cached_tokens``.
* Local servers need no key; the SDK insists on one, so a placeholder is sent when none is given.
* The SDK's retries are off: ``RetryingProvider`` owns retry policy.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memdir.errors import (
    InvalidOutputError,
    MissingExtraError,
    ProviderConfigError,
    ProviderError,
    ProviderUnavailableError,
)
from memdir.llm.base import (
    Completion,
    CompletionRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    parse_json_output,
    require_real_providers_allowed,
)
from memdir.llm.retry import status_error

if TYPE_CHECKING:
    import httpx2
    import openai

OPENAI_API_URL = "https://api.openai.com/v1"

_FINISH_TO_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def _convert_message(message: Message) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"role": message.role, "content": message.content}]
    out: list[dict[str, Any]] = []
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    if message.role == "assistant":
        entry: dict[str, Any] = {"role": "assistant", "content": text or None}
        calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
        if calls:
            entry["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.input)},
                }
                for c in calls
            ]
        return [entry]
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            content = f"Error: {block.content}" if block.is_error else block.content
            out.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": content})
    if text:
        out.append({"role": "user", "content": text})
    return out


def request_body(
    request: CompletionRequest, model: str, *, max_tokens_param: str = "max_tokens"
) -> dict[str, Any]:
    """The ``chat.completions.create`` keyword arguments for ``request`` (pure; tested directly)."""
    messages: list[dict[str, Any]] = []
    if request.system_text:
        messages.append({"role": "system", "content": request.system_text})
    for message in request.messages:
        messages.extend(_convert_message(message))
    body: dict[str, Any] = {"model": model, "messages": messages}
    body[max_tokens_param] = request.max_tokens
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in request.tools
        ]
    if request.json_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": request.json_schema, "strict": True},
        }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop:
        body["stop"] = list(request.stop)
    return body


def completion_from(response: Any, request: CompletionRequest) -> Completion:
    """Our ``Completion`` for an SDK ``ChatCompletion``; raises on refusal or unparsable output."""
    if not response.choices:
        raise ProviderError("OpenAI-compatible API returned no choices")
    choice = response.choices[0]
    message = choice.message
    if getattr(message, "refusal", None):
        raise ProviderError(f"the model refused the request: {message.refusal}")
    calls: list[ToolUseBlock] = []
    for call in message.tool_calls or ():
        if call.type != "function":
            continue
        try:
            args = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError:
            raise InvalidOutputError(
                f"tool call {call.function.name!r} has arguments that are not JSON"
            ) from None
        if not isinstance(args, dict):
            raise InvalidOutputError(
                f"tool call {call.function.name!r} arguments are not an object"
            )
        calls.append(ToolUseBlock(id=call.id, name=call.function.name, input=args))
    text = message.content or ""
    usage = Usage()
    if response.usage is not None:
        details = getattr(response.usage, "prompt_tokens_details", None)
        usage = Usage(
            input_tokens=response.usage.prompt_tokens or 0,
            output_tokens=response.usage.completion_tokens or 0,
            cache_read_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
        )
    parsed = None
    if request.json_schema is not None and not calls:
        parsed = parse_json_output(text)
    stop = _FINISH_TO_STOP.get(choice.finish_reason or "stop", choice.finish_reason or "end_turn")
    return Completion(
        text=text, tool_calls=calls, stop_reason=stop, usage=usage, parsed_json=parsed
    )


def map_sdk_error(exc: Exception) -> ProviderError:
    """Translate an ``openai`` exception into the memdir tree (transient vs permanent)."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        try:
            retry_after: float | None = float(exc.response.headers.get("retry-after", ""))
        except ValueError:
            retry_after = None
        return status_error("OpenAI-compatible", exc.status_code, exc.message, retry_after)
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return ProviderUnavailableError(f"cannot reach the OpenAI-compatible API: {exc}")
    return ProviderError(f"OpenAI SDK error: {exc}")


class OpenAICompatProvider:
    """``complete`` via ``AsyncOpenAI.chat.completions.create``; one attempt per call.

    ``max_tokens_param`` is ``"max_tokens"`` for local servers and ``"max_completion_tokens"``
    for api.openai.com, whose newer models reject the older name.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        max_tokens_param: str = "max_tokens",
    ) -> None:
        require_real_providers_allowed("OpenAI-compatible")
        if not api_key and not base_url:
            raise ProviderConfigError(
                "no OpenAI API key: set OPENAI_API_KEY (or MEMDIR_OPENAI_API_KEY), or give a "
                "base URL for a local OpenAI-compatible server"
            )
        try:
            import openai
        except ImportError:
            raise MissingExtraError("openai", "openai") from None
        self.model = model
        self.max_tokens_param = max_tokens_param
        self._client: openai.AsyncOpenAI = openai.AsyncOpenAI(
            api_key=api_key or "not-needed",
            # Explicit, so the SDK never falls back to reading os.environ itself.
            base_url=base_url or OPENAI_API_URL,
            http_client=http_client,
            max_retries=0,
        )

    async def complete(self, request: CompletionRequest) -> Completion:
        import openai

        kwargs = request_body(request, self.model, max_tokens_param=self.max_tokens_param)
        if request.timeout is not None:
            kwargs["timeout"] = request.timeout
        try:
            response = await self._client.chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise map_sdk_error(exc) from exc
        return completion_from(response, request)

    async def aclose(self) -> None:
        await self._client.close()


__all__ = ["OpenAICompatProvider", "completion_from", "map_sdk_error", "request_body"]
