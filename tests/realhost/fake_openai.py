"""A fake OpenAI API on 127.0.0.1, for running the real Codex CLI (and OpenCode) in tests.

A real HTTP server on a thread (``ThreadingHTTPServer``), the twin of
:mod:`tests.realhost.fakeapi` for the OpenAI wire formats:

- ``POST .../responses``: the **Responses API**, the only wire API Codex 0.171 speaks to a
  ``[model_providers.<id>]`` entry (``wire_api = "responses"``; ``"chat"`` is refused at config
  load). Answers JSON, or when the request asks for ``"stream": true`` the server-sent events
  Codex's parser reads (``codex-rs/codex-api/src/sse/responses.rs``): ``response.created``, per
  output item ``response.output_item.added`` / ``response.output_text.delta`` /
  ``response.output_item.done``, then ``response.completed`` with the response id and usage.
  Codex keeps only the ``output_item.done`` items and fails a stream that closes before
  ``response.completed``.
- ``POST .../chat/completions``: Chat Completions, JSON or streamed chunks ending in
  ``data: [DONE]`` (for OpenAI-compatible clients such as OpenCode's provider).
- ``GET .../models``: an empty model list in both shapes (``data`` and Codex's ``models``), so
  a client's model discovery succeeds and falls back to its bundled catalogue.
- ``CONNECT host:port``: the server doubles as the clients' HTTP(S) proxy. Tests point
  ``HTTPS_PROXY`` here, so any request a client makes *off* loopback (telemetry, update checks,
  plugin syncs) is logged in :attr:`FakeOpenAI.escapes` and refused, never sent.

Every request is logged with its parsed body (:class:`LoggedRequest`), so tests assert on what
the host sent to the model. Replies are scripted per model request, in order
(:meth:`FakeOpenAI.script`); an empty queue answers :data:`DEFAULT_REPLY`. Codex's compaction
requests (:attr:`LoggedRequest.is_compaction`) never take a scripted reply: they get
:attr:`FakeOpenAI.summary`, so a test's script is not eaten by an auto-compaction.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_REPLY = "OK."
DEFAULT_SUMMARY = "SUMMARY: the conversation so far."
# How Codex 0.171's compaction prompt opens (the last user message of a request with no tools).
COMPACTION_PROMPT_START = "You are performing a CONTEXT CHECKPOINT COMPACTION."


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


@dataclass(frozen=True)
class FunctionCall:
    """One function call the fake model emits.

    Codex offers each MCP server's tools as one ``{"type": "namespace", "name":
    "mcp__<server>", "tools": [...]}`` entry in the request's ``tools``, and dispatches a call
    only when it names the namespace and the bare tool apart (``"namespace": "mcp__memdir",
    "name": "memory_save"``); a flat ``"mcp__memdir__memory_save"`` is answered "unsupported
    call". :meth:`mcp` builds the namespaced form."""

    name: str
    arguments: dict[str, Any]
    call_id: str = field(default_factory=lambda: _new_id("call"))
    namespace: str | None = None

    @classmethod
    def mcp(cls, server: str, tool: str, arguments: dict[str, Any]) -> FunctionCall:
        return cls(tool, arguments, namespace=f"mcp__{server}")

    def item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "type": "function_call",
            "id": _new_id("fc"),
            "status": "completed",
            "call_id": self.call_id,
            "name": self.name,
            "arguments": json.dumps(self.arguments),
        }
        if self.namespace:
            item["namespace"] = self.namespace
        return item


@dataclass(frozen=True)
class Reply:
    """One model turn: an optional reasoning summary, optional text, then function calls."""

    text: str = ""
    calls: tuple[FunctionCall, ...] = ()
    reasoning: str = ""

    def output_items(self) -> list[dict[str, Any]]:
        """The turn as Responses output items (``reasoning``, ``message``, ``function_call``s)."""
        items: list[dict[str, Any]] = []
        if self.reasoning:
            items.append(
                {
                    "type": "reasoning",
                    "id": _new_id("rs"),
                    "summary": [{"type": "summary_text", "text": self.reasoning}],
                    "encrypted_content": None,
                }
            )
        if self.text or not self.calls:
            items.append(
                {
                    "type": "message",
                    "id": _new_id("msg"),
                    "status": "completed",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "output_text",
                            "text": self.text or DEFAULT_REPLY,
                            "annotations": [],
                        }
                    ],
                }
            )
        items.extend(c.item() for c in self.calls)
        return items


@dataclass
class LoggedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def is_model(self) -> bool:
        """A model request (Responses or Chat Completions), the ones that take scripted replies."""
        return self.method == "POST" and self.path.endswith(("/responses", "/chat/completions"))

    @property
    def is_compaction(self) -> bool:
        """Codex's local compaction: a model request offering no tools whose last user message
        is the summarisation prompt. Answered with :attr:`FakeOpenAI.summary`, never scripted."""
        users = self.message_texts("user")
        return (
            self.is_model
            and not self.body.get("tools")
            and bool(users)
            and users[-1].startswith(COMPACTION_PROMPT_START)
        )

    def items(self) -> list[dict[str, Any]]:
        """The request's conversation: Responses ``input`` items, or chat ``messages``."""
        raw = self.body.get("input", self.body.get("messages"))
        if isinstance(raw, str):
            return [{"type": "message", "role": "user", "content": raw}]
        return [i for i in raw or [] if isinstance(i, dict)]

    def messages(self, role: str | None = None) -> list[dict[str, Any]]:
        """Message items (``role`` filters: ``developer``, ``user``, ``assistant``, ``system``)."""
        return [
            i
            for i in self.items()
            if i.get("type", "message") == "message" and (role is None or i.get("role") == role)
        ]

    def message_texts(self, role: str | None = None) -> list[str]:
        """The text of each content part of each message (optionally of one role), as sent."""
        texts: list[str] = []
        for message in self.messages(role):
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts.extend(
                    str(part["text"])
                    for part in content
                    if isinstance(part, dict) and isinstance(part.get("text"), str)
                )
        return texts

    def text(self) -> str:
        """Everything the model would read: ``instructions`` and every input item, flattened."""
        return (
            "\n".join(_strings(self.body.get("instructions")))
            + "\n"
            + "\n".join(_strings(self.items()))
        )

    def tool_names(self) -> list[str]:
        """Names of the offered tools: Responses functions by ``name``, each tool of a
        ``namespace`` entry as ``<namespace>__<tool>`` (so an MCP tool reads
        ``mcp__memdir__memory_save``), chat ``{"function": {"name"}}``, and built-in tools
        without a name (``web_search``) by ``type``."""
        names: list[str] = []
        for tool in self.body.get("tools") or []:
            if tool.get("type") == "namespace":
                names.extend(f"{tool['name']}__{t.get('name')}" for t in tool.get("tools") or [])
                continue
            fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            names.append(str(fn.get("name") or tool.get("type")))
        return names

    def function_calls(self) -> list[dict[str, Any]]:
        """``function_call`` items the request replays (the model's earlier calls)."""
        return [i for i in self.items() if i.get("type") == "function_call"]

    def function_outputs(self) -> list[dict[str, Any]]:
        """``function_call_output`` items (Responses) or ``tool`` messages (chat), oldest first."""
        return [
            i
            for i in self.items()
            if i.get("type") == "function_call_output" or i.get("role") == "tool"
        ]


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


class FakeOpenAI:
    """Start with ``with FakeOpenAI() as api:``; point the client at ``api.base_url`` (``/v1``
    included, as OpenAI clients expect) and its proxy at ``api.proxy_url``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[Reply] = []
        self.requests: list[LoggedRequest] = []
        self.escapes: list[str] = []  # CONNECT targets / absolute URLs a client tried to reach
        self.delay = 0.0  # seconds to wait before answering a model request
        self.summary = DEFAULT_SUMMARY  # the reply to every compaction request
        # the prompt tokens a chat completion reports for a request (OpenCode compacts a
        # session whose last turn reported more than its model's context allows)
        self.prompt_tokens: Callable[[LoggedRequest], int] = lambda request: 10
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    @property
    def proxy_url(self) -> str:
        return self.origin

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def script(self, *replies: Reply | str) -> None:
        """Queue replies for the next model requests, in order."""
        with self._lock:
            self._queue.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def model_requests(self) -> list[LoggedRequest]:
        with self._lock:
            return [r for r in self.requests if r.is_model]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.escapes.clear()

    def compaction_requests(self) -> list[LoggedRequest]:
        with self._lock:
            return [r for r in self.requests if r.is_compaction]

    def _record(self, request: LoggedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if request.is_compaction:
                return Reply(text=self.summary)
            if request.is_model and self._queue:
                return self._queue.pop(0)
        return Reply(text=DEFAULT_REPLY)

    def _escape(self, target: str) -> None:
        with self._lock:
            self.escapes.append(target)


def _handler_for(api: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("content-encoding", "").lower() == "zstd":
                raw = _unzstd(raw)
            try:
                parsed = json.loads(raw or b"{}")
            except ValueError:
                parsed = {"_raw": raw.decode("utf-8", "replace")}
            return parsed if isinstance(parsed, dict) else {"_value": parsed}

        def _send_json(self, payload: dict[str, Any], status: int = 200) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-request-id", _new_id("req"))
            self.end_headers()
            self.wfile.write(data)

        def _refuse_escape(self) -> bool:
            """A proxied request for another host (absolute URL): log it, never forward it."""
            if self.path.startswith(("http://", "https://")):
                api._escape(self.path)
                self._send_json({"error": "no network in tests"}, status=403)
                return True
            return False

        def do_CONNECT(self) -> None:
            api._escape(self.path)
            self.send_response(403)
            self.send_header("content-length", "0")
            self.end_headers()
            self.close_connection = True

        def do_GET(self) -> None:
            if self._refuse_escape():
                return
            path = self.path.split("?", 1)[0]
            api._record(LoggedRequest("GET", path, dict(self.headers), {}))
            if path.endswith("/models"):
                self._send_json({"object": "list", "data": [], "models": []})
            else:
                self._send_json({})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            if self._refuse_escape():
                return
            path = self.path.split("?", 1)[0]
            body = self._body()
            logged = LoggedRequest("POST", path, dict(self.headers), body)
            reply = api._record(logged)
            if api.delay and (path.endswith(("/responses", "/chat/completions"))):
                time.sleep(api.delay)
            model = str(body.get("model") or "gpt-fake")
            if path.endswith("/responses"):
                response = _response(reply, model, body)
                if body.get("stream"):
                    self._stream(_response_events(response), named=True)
                else:
                    self._send_json(response)
            elif path.endswith("/chat/completions"):
                usage = _chat_usage(api.prompt_tokens(logged))
                if body.get("stream"):
                    self._stream(_chat_chunks(reply, model, usage), named=False)
                else:
                    self._send_json(_chat_completion(reply, model, usage))
            else:
                self._send_json({})

        def _stream(self, events: Iterator[dict[str, Any]], *, named: bool) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for event in events:
                head = f"event: {event['type']}\n" if named else ""
                self.wfile.write(f"{head}data: {json.dumps(event)}\n\n".encode())
            if not named:
                self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def _unzstd(raw: bytes) -> bytes:
    """Codex compresses request bodies with zstd only for OpenAI's own backend; kept for safety."""
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        return raw
    return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(raw))


def _usage(request: dict[str, Any], output: list[dict[str, Any]]) -> dict[str, Any]:
    input_tokens = max(1, len(json.dumps(request.get("input") or [])) // 4)
    output_tokens = max(1, len(json.dumps(output)) // 4)
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def _response(reply: Reply, model: str, request: dict[str, Any]) -> dict[str, Any]:
    output = reply.output_items()
    return {
        "id": _new_id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": _usage(request, output),
    }


def _response_events(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The Responses streaming protocol, as Codex's parser reads it."""
    seq = iter(range(1_000_000))
    head = dict(response, status="in_progress", output=[], usage=None)
    yield {"type": "response.created", "sequence_number": next(seq), "response": head}
    yield {"type": "response.in_progress", "sequence_number": next(seq), "response": head}
    for index, item in enumerate(response["output"]):
        if item["type"] == "reasoning":
            yield {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": index,
                "item": dict(item, summary=[]),
            }
            for n, part in enumerate(item["summary"]):
                yield {
                    "type": "response.reasoning_summary_part.added",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": index,
                    "summary_index": n,
                    "part": {"type": "summary_text", "text": ""},
                }
                yield {
                    "type": "response.reasoning_summary_text.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": index,
                    "summary_index": n,
                    "delta": part["text"],
                }
        elif item["type"] == "message":
            text = item["content"][0]["text"]
            added = dict(item, status="in_progress", content=[])
            yield {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": index,
                "item": added,
            }
            part = {"type": "output_text", "text": "", "annotations": []}
            yield {
                "type": "response.content_part.added",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "part": part,
            }
            yield {
                "type": "response.output_text.delta",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "delta": text,
                "logprobs": [],
            }
            yield {
                "type": "response.output_text.done",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "text": text,
                "logprobs": [],
            }
            yield {
                "type": "response.content_part.done",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "part": dict(part, text=text),
            }
        else:
            added = dict(item, status="in_progress", arguments="")
            yield {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": index,
                "item": added,
            }
            yield {
                "type": "response.function_call_arguments.delta",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": index,
                "delta": item["arguments"],
            }
            yield {
                "type": "response.function_call_arguments.done",
                "sequence_number": next(seq),
                "item_id": item["id"],
                "output_index": index,
                "name": item["name"],
                "arguments": item["arguments"],
            }
        yield {
            "type": "response.output_item.done",
            "sequence_number": next(seq),
            "output_index": index,
            "item": item,
        }
    yield {"type": "response.completed", "sequence_number": next(seq), "response": response}


def _chat_tool_calls(reply: Reply, *, indexed: bool) -> list[dict[str, Any]]:
    return [
        {
            **({"index": i} if indexed else {}),
            "id": c.call_id,
            "type": "function",
            "function": {
                "name": f"{c.namespace}__{c.name}" if c.namespace else c.name,
                "arguments": json.dumps(c.arguments),
            },
        }
        for i, c in enumerate(reply.calls)
    ]


def _chat_usage(prompt_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": 5,
        "total_tokens": prompt_tokens + 5,
    }


def _chat_completion(reply: Reply, model: str, usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text or (None if reply.calls else DEFAULT_REPLY),
    }
    if reply.calls:
        message["tool_calls"] = _chat_tool_calls(reply, indexed=False)
    return {
        "id": _new_id("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.calls else "stop",
            }
        ],
        "usage": usage,
    }


def _chat_chunks(reply: Reply, model: str, usage: dict[str, int]) -> Iterator[dict[str, Any]]:
    base = {
        "id": _new_id("chatcmpl"),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}

    yield chunk({"role": "assistant", "content": ""})
    if reply.text or not reply.calls:
        yield chunk({"content": reply.text or DEFAULT_REPLY})
    if reply.calls:
        yield chunk({"tool_calls": _chat_tool_calls(reply, indexed=True)})
    yield chunk(
        {},
        "tool_calls" if reply.calls else "stop",
        usage=usage,
    )
