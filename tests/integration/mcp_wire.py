"""Raw MCP messages for tests and benchmarks that talk to ``memdir mcp`` over its pipes."""

from __future__ import annotations

from typing import Any


def initialize(version: str = "2025-06-18", request_id: int = 1) -> dict[str, Any]:
    """The client's first message: the ``initialize`` request for ``version``."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "memdir-test", "version": "1"},
        },
    }
