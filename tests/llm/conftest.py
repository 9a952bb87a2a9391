"""Fixtures for provider tests: permission to build network providers, and a canned HTTP API."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

import memdir.llm.base


@pytest.fixture
def allow_real_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lift the suite-wide ban; only for tests whose transport is a mock or a loopback server."""
    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", True)


@dataclass
class CannedAPI:
    """An httpx2 mock transport that replays ``(status, json, headers)`` replies in order."""

    replies: list[tuple[int, Any, dict[str, str]]] = field(default_factory=list)
    requests: list[httpx2.Request] = field(default_factory=list)
    clients: list[httpx2.AsyncClient] = field(default_factory=list)

    def reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> CannedAPI:
        self.replies.append((status, body, headers or {}))
        return self

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)

    def handler(self) -> Callable[[httpx2.Request], httpx2.Response]:
        def handle(request: httpx2.Request) -> httpx2.Response:
            self.requests.append(request)
            if not self.replies:
                raise AssertionError("CannedAPI: no reply left")
            status, body, headers = self.replies.pop(0)
            return httpx2.Response(status, json=body, headers=headers)

        return handle

    def client(self) -> httpx2.AsyncClient:
        client = httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler()))
        self.clients.append(client)
        return client


@pytest.fixture
async def api() -> AsyncIterator[CannedAPI]:
    canned = CannedAPI()
    yield canned
    for client in canned.clients:
        await client.aclose()


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


Responder = Callable[[Received], tuple[int, Any, dict[str, str]]]


class LoopbackAPI:
    """A real HTTP server on 127.0.0.1 (stdlib, own thread) answering JSON POSTs via ``respond``."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.respond: Responder = lambda _: (500, {"error": "no responder"}, {})
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = Received(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw)
                )
                api.received.append(request)
                status, body, headers = api.respond(request)
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> LoopbackAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@pytest.fixture
def loopback() -> Iterator[LoopbackAPI]:
    with LoopbackAPI() as server:
        yield server
