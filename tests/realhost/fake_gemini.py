"""A fake Gemini API (generativelanguage ``v1beta``) on 127.0.0.1, for running the real Gemini CLI.

The CLI's ``@google/genai`` SDK is pointed here with ``GOOGLE_GEMINI_BASE_URL`` (plain HTTP is
accepted for loopback) and any ``GEMINI_API_KEY``. A real HTTP server on a thread answers:

- ``POST /v1beta/models/<m>:streamGenerateContent?alt=sse``: server-sent events, one
  ``GenerateContentResponse`` per ``data:`` line, the last one carrying ``finishReason`` and
  ``usageMetadata`` (the CLI retries a stream that ends without them);
- ``POST /v1beta/models/<m>:generateContent``: the same response as one JSON object;
- ``POST /v1beta/models/<m>:countTokens``: a rough ``totalTokens``;
- ``GET /v1beta/models``: a short model list; anything else an empty JSON object.

Every request is logged with its parsed body (``api.requests``). Replies are scripted per *agent
turn*: only a "main" request takes a reply from the queue. In Gemini CLI 0.61 only the agent loop
(``GeminiChat``: the main agent and subagents) streams; every side request (model routing, the
next-speaker and loop checks, compression, JSON-mode utilities) is a plain ``generateContent``,
so a side request never eats a scripted function call. A side request that asks
for JSON (``generationConfig.responseMimeType == "application/json"``) gets the smallest value its
schema accepts (first enum value, required properties only); any other, and an empty queue, get
the default text reply.
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
MODELS = ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3-pro-preview")


@dataclass(frozen=True)
class FunctionCall:
    """One ``functionCall`` part the fake model emits (an MCP tool is ``mcp_<server>_<tool>``)."""

    name: str
    args: dict[str, Any]
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:16]}")


@dataclass(frozen=True)
class Reply:
    """One model turn: optional thought summary, text, then function calls."""

    text: str = ""
    function_calls: tuple[FunctionCall, ...] = ()
    thought: str = ""

    def parts(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.thought:
            out.append({"text": self.thought, "thought": True})
        if self.text or not self.function_calls:
            out.append({"text": self.text or DEFAULT_REPLY})
        out.extend(
            {"functionCall": {"id": c.id, "name": c.name, "args": c.args}}
            for c in self.function_calls
        )
        return out


@dataclass
class LoggedRequest:
    method: str
    path: str  # with the query string
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def action(self) -> str:
        """``generateContent``, ``streamGenerateContent``, ``countTokens``, or ``""``."""
        tail = self.path.split("?", 1)[0].rsplit("/", 1)[-1]
        return tail.split(":", 1)[1] if ":" in tail else ""

    @property
    def model(self) -> str:
        tail = self.path.split("?", 1)[0].rsplit("/", 1)[-1]
        return tail.split(":", 1)[0] if ":" in tail else ""

    @property
    def wants_json(self) -> bool:
        config = self.body.get("generationConfig") or {}
        return config.get("responseMimeType") == "application/json"

    @property
    def is_main(self) -> bool:
        """The agent loop's request: the only kind the CLI streams (it may offer no tools)."""
        return self.action == "streamGenerateContent"

    def function_names(self) -> list[str]:
        """Every ``functionDeclarations[].name`` the request offers the model."""
        return [
            str(d.get("name"))
            for tool in self.body.get("tools") or []
            for d in tool.get("functionDeclarations") or []
        ]

    def system_text(self) -> str:
        return "\n".join(_strings(self.body.get("systemInstruction")))

    def text(self) -> str:
        """Everything the model would read: system instruction and every content, flattened."""
        return self.system_text() + "\n" + "\n".join(_strings(self.body.get("contents")))

    def user_texts(self) -> list[str]:
        """The ``text`` of each part of each ``user`` content, as sent (no system instruction)."""
        return [
            p["text"]
            for c in self.body.get("contents") or []
            if c.get("role") == "user"
            for p in c.get("parts") or []
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]

    def function_responses(self) -> list[dict[str, Any]]:
        """Every ``functionResponse`` part in the contents, oldest first."""
        return [
            p["functionResponse"]
            for c in self.body.get("contents") or []
            for p in c.get("parts") or []
            if isinstance(p, dict) and "functionResponse" in p
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


def minimal_json(schema: Any) -> Any:
    """The smallest value a (JSON or OpenAPI-style) schema accepts: what a side request gets."""
    if not isinstance(schema, dict):
        return {}
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return minimal_json(schema[key][0])
    kind = str(schema.get("type") or "object").lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: minimal_json(props.get(k)) for k in schema.get("required") or list(props)}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)  # a router score must be >= 1
    return DEFAULT_REPLY


class FakeGemini:
    """Start with ``with FakeGemini() as api:``; point the CLI at ``api.base_url``."""

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

    def __enter__(self) -> FakeGemini:
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

    def side_requests(self) -> list[LoggedRequest]:
        with self._lock:
            return [r for r in self.requests if r.action and not r.is_main]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def _record(self, request: LoggedRequest) -> Reply | None:
        """Log; a main request takes the next scripted reply (None: answer by default)."""
        with self._lock:
            self.requests.append(request)
            if request.is_main and self._queue:
                return self._queue.pop(0)
        return None


def _default_reply(request: LoggedRequest) -> Reply:
    if request.wants_json:
        config = request.body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        return Reply(text=json.dumps(minimal_json(schema)))
    return Reply(text=DEFAULT_REPLY)


def _response(parts: list[dict[str, Any]], request: LoggedRequest, final: bool) -> dict[str, Any]:
    prompt = max(1, len(json.dumps(request.body.get("contents") or [])) // 4)
    out = max(1, len(json.dumps(parts)) // 4)
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    response: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": request.model or "gemini-fake",
        "responseId": uuid.uuid4().hex[:20],
    }
    if final:
        candidate["finishReason"] = "STOP"
        response["usageMetadata"] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": out,
            "totalTokenCount": prompt + out,
        }
    return response


def _handler_for(api: FakeGemini) -> type[BaseHTTPRequestHandler]:
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
            self.send_header("content-type", "application/json; charset=UTF-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            api._record(LoggedRequest("GET", self.path, dict(self.headers), {}))
            if self.path.split("?", 1)[0].rstrip("/").endswith("/models"):
                models = [
                    {
                        "name": f"models/{m}",
                        "displayName": m,
                        "supportedGenerationMethods": ["generateContent", "countTokens"],
                        "inputTokenLimit": 1048576,
                        "outputTokenLimit": 65536,
                    }
                    for m in MODELS
                ]
                self._send_json({"models": models})
                return
            self._send_json({})

        def do_POST(self) -> None:
            request = LoggedRequest("POST", self.path, dict(self.headers), self._body())
            scripted = api._record(request)
            if request.action == "countTokens":
                self._send_json({"totalTokens": max(1, len(json.dumps(request.body)) // 4)})
                return
            if request.action not in ("generateContent", "streamGenerateContent"):
                self._send_json({})
                return
            reply = scripted or _default_reply(request)
            if request.action == "generateContent":
                self._send_json(_response(reply.parts(), request, final=True))
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            parts = reply.parts()
            for i, part in enumerate(parts):
                chunk = _response([part], request, final=i == len(parts) - 1)
                self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler
