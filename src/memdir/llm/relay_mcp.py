"""The child side of the tool relay: a stdio MCP server that forwards every call to the parent.

The host CLI (``claude -p``) starts this as its only MCP server (``--strict-mcp-config``). It
holds no tools of its own: ``tools/list`` and ``tools/call`` go over a Unix socket to the memdir
process that started the CLI, where the sandboxed toolset (read-only shell allow-list, write
jail, one-file policy) runs and records every call. So whatever the child model asks for, the
decision is made by memdir's own policies in memdir's own process.

Invariants: stdlib only and no memdir imports beyond this module (it starts on every agent
call; ``python -m memdir.llm.relay_mcp`` must be quick); a lost parent ends the server; a
malformed request gets a JSON-RPC error, never a crash.

Wire format to the parent: one JSON object per line each way —
``{"op": "list"}`` → ``{"tools": [{name, description, inputSchema}]}``;
``{"op": "call", "name": ..., "input": {...}}`` → ``{"content": str, "is_error": bool}``.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import IO, Any

PROTOCOL_VERSION = "2025-06-18"
SERVER_NAME = "memdir"


class ParentLink:
    """One persistent line-oriented connection to the parent's relay socket."""

    def __init__(self, path: str) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(path)
        self._file = self._sock.makefile("rwb")

    def ask(self, payload: dict[str, Any]) -> dict[str, Any]:
        self._file.write(json.dumps(payload).encode() + b"\n")
        self._file.flush()
        line = self._file.readline()
        if not line:
            raise ConnectionError("the memdir parent closed the tool relay")
        answer = json.loads(line)
        if not isinstance(answer, dict):
            raise ConnectionError("the memdir parent sent a malformed answer")
        return answer


def handle(link: ParentLink, request: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON-RPC response for ``request`` (None for notifications)."""
    method = request.get("method")
    rid = request.get("id")
    if rid is None:
        return None  # notifications (initialized, cancelled) need no answer
    if method == "initialize":
        params = request.get("params") or {}
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion") or PROTOCOL_VERSION,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": "1"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": link.ask({"op": "list"}).get("tools", [])}
    elif method == "tools/call":
        params = request.get("params") or {}
        answer = link.ask(
            {"op": "call", "name": params.get("name"), "input": params.get("arguments") or {}}
        )
        result = {
            "content": [{"type": "text", "text": str(answer.get("content", ""))}],
            "isError": bool(answer.get("is_error")),
        }
    else:
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "error": {"code": -32601, "message": f"method not found: {method}"},
        }
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def serve(link: ParentLink, stdin: IO[str], stdout: IO[str]) -> None:
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError:
            response: dict[str, Any] | None = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "parse error"},
            }
        else:
            response = handle(link, request) if isinstance(request, dict) else None
        if response is not None:
            stdout.write(json.dumps(response) + "\n")
            stdout.flush()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m memdir.llm.relay_mcp <relay socket>\n")
        return 2
    try:
        serve(ParentLink(argv[0]), sys.stdin, sys.stdout)
    except (OSError, ConnectionError) as exc:
        sys.stderr.write(f"memdir tool relay: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
