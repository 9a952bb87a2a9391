"""A fake Anthropic Messages API on 127.0.0.1, for running the real Claude Code CLI in tests.

A real HTTP server on a thread (``ThreadingHTTPServer``): ``POST /v1/messages`` answers in JSON
or, when the request asks for ``"stream": true``, as the server-sent events the SDKs parse;
``POST /v1/messages/count_tokens`` answers a rough count; anything else gets an empty JSON object
(the CLI's optional calls must not fail the session). Every request is logged with its parsed
body, so tests assert on exactly what the host sent to the model.

Replies are scripted per *conversation turn*: a reply is taken from the queue only by a "main"
request (one that offers tools: the agent loop), so the host's side requests (titles, topic
checks, quota probes) never eat a scripted tool call. Side requests and an empty queue get the
default text reply.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_REPLY = "OK."


@dataclass(frozen=True)
class ToolCall:
    """One ``tool_use`` block the fake model emits."""

    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: f"toolu_{uuid.uuid4().hex[:24]}")


@dataclass(frozen=True)
class Reply:
    """One assistant message: optional text, then tool calls (``stop_reason`` follows from them)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()

    def blocks(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.text or not self.tool_calls:
            out.append({"type": "text", "text": self.text or DEFAULT_REPLY})
        out.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.input}
            for c in self.tool_calls
        )
        return out

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.tool_calls else "end_turn"


@dataclass
class LoggedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def is_main(self) -> bool:
        """The agent loop's request (it offers tools); side requests offer none."""
        return self.path.endswith("/v1/messages") and bool(self.body.get("tools"))

    def text(self) -> str:
        """Everything the model would read: system prompt and every message, flattened."""
        return (
            "\n".join(_strings(self.body.get("system")))
            + "\n"
            + "\n".join(_strings(self.body.get("messages")))
        )

    def message_texts(self) -> list[str]:
        """The text of each text block of each message, as sent (no system prompt)."""
        texts: list[str] = []
        for message in self.body.get("messages") or []:
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts.extend(
                    b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                )
        return texts

    def tool_names(self) -> list[str]:
        return [str(t.get("name")) for t in self.body.get("tools") or []]

    def tool_results(self) -> list[dict[str, Any]]:
        """Every ``tool_result`` block in the request's messages, oldest first."""
        return [
            block
            for m in self.body.get("messages") or []
            if isinstance(m.get("content"), list)
            for block in m["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value, depth first (text blocks, tool results, system parts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


class FakeAnthropic:
    """Start with ``with FakeAnthropic() as api:``; point the CLI at ``api.base_url``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[Reply] = []
        self.requests: list[LoggedRequest] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def script(self, *replies: Reply | str) -> None:
        """Queue replies for the next main requests, in order."""
        with self._lock:
            self._queue.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def main_requests(self) -> list[LoggedRequest]:
        with self._lock:
            return [r for r in self.requests if r.is_main]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def _record(self, request: LoggedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if request.is_main and self._queue:
                return self._queue.pop(0)
        return Reply(text=DEFAULT_REPLY)


def _handler_for(api: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
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
            self.send_header("request-id", f"req_{uuid.uuid4().hex[:16]}")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            api._record(LoggedRequest("GET", self.path, dict(self.headers), {}))
            self._send_json({})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            body = self._body()
            if path.endswith("/count_tokens"):
                api._record(LoggedRequest("POST", path, dict(self.headers), body))
                self._send_json({"input_tokens": max(1, len(json.dumps(body)) // 4)})
                return
            if not path.endswith("/v1/messages"):
                api._record(LoggedRequest("POST", path, dict(self.headers), body))
                self._send_json({})
                return
            reply = api._record(LoggedRequest("POST", path, dict(self.headers), body))
            message = _message(reply, str(body.get("model") or "claude-fake"), body)
            if body.get("stream"):
                self._stream(message)
            else:
                self._send_json(message)

        def _stream(self, message: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for event in _events(message):
                chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                self.wfile.write(chunk.encode())
            self.wfile.flush()
            self.close_connection = True

    return Handler


def _message(reply: Reply, model: str, request: dict[str, Any]) -> dict[str, Any]:
    content = reply.blocks()
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": max(1, len(json.dumps(request.get("messages") or [])) // 4),
            "output_tokens": max(1, len(json.dumps(content)) // 4),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The Messages streaming protocol: start, each block (start, deltas, stop), delta, stop."""
    head = dict(message, content=[], stop_reason=None)
    head["usage"] = dict(message["usage"], output_tokens=1)
    yield {"type": "message_start", "message": head}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            }
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": block["text"]},
            }
        else:
            yield {
                "type": "content_block_start",
                "index": index,
                "content_block": dict(block, input={}),
            }
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            }
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}
