"""Fixtures for provider tests: permission to build network providers, and a canned HTTP API."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
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
