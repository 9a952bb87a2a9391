"""The parent side of the tool relay: memdir's toolset served to a child CLI over a Unix socket.

A hosted tool loop (``claude -p`` running the model turns) reaches memdir's tools only through
:mod:`memdir.llm.relay_mcp`, which forwards each MCP call here. The call runs in this process, on
the caller's ``execute`` — the same sandboxed toolset and records as memdir's own runner — so
the child can never write outside the memory dir or run a refused command: the policy that
refuses is memdir's, not the child's.

Invariants: the socket lives in a fresh 0700 directory (only this user can connect) that is
removed on exit; a failing ``execute`` becomes an error result the model sees, never a dropped
connection; the relay lists exactly the specs it was given.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from memdir.llm.base import ToolExecutor, ToolSpec, ToolUseBlock, new_tool_use_id

SERVER_NAME = "memdir"
MCP_PREFIX = f"mcp__{SERVER_NAME}__"


def host_tool_name(name: str) -> str:
    """The name the child model sees for memdir tool ``name``."""
    return MCP_PREFIX + name


def memdir_tool_name(name: str) -> str:
    """memdir's name for a tool the child called (``mcp__memdir__Write`` → ``Write``)."""
    return name.removeprefix(MCP_PREFIX)


class ToolRelay:
    """``async with ToolRelay(specs, execute) as relay:``, then start the child on its socket."""

    def __init__(self, specs: Sequence[ToolSpec], execute: ToolExecutor) -> None:
        self.specs = list(specs)
        self.execute = execute
        self._dir: Path | None = None
        self._server: asyncio.AbstractServer | None = None

    @property
    def socket(self) -> Path:
        if self._dir is None:
            raise RuntimeError("the tool relay is not running")
        return self._dir / "relay.sock"

    async def __aenter__(self) -> ToolRelay:
        # Short base dir: AF_UNIX paths are capped near 108 bytes.
        base = "/tmp" if Path("/tmp").is_dir() else None
        self._dir = Path(tempfile.mkdtemp(prefix="memdir-relay-", dir=base))
        self._dir.chmod(0o700)
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.socket))
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)

    def listing(self) -> list[dict[str, Any]]:
        return [
            {"name": s.name, "description": s.description, "inputSchema": s.input_schema}
            for s in self.specs
        ]

    async def answer(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict):
            return {"content": "malformed relay request", "is_error": True}
        if request.get("op") == "list":
            return {"tools": self.listing()}
        name, args = request.get("name"), request.get("input")
        if request.get("op") != "call" or not isinstance(name, str) or not isinstance(args, dict):
            return {"content": "malformed relay request", "is_error": True}
        if name not in {s.name for s in self.specs}:
            return {"content": f"no such tool: {name}", "is_error": True}
        call = ToolUseBlock(id=new_tool_use_id(), name=name, input=args)
        try:
            result = await self.execute(call)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the model sees it; the relay stays up
            return {"content": f"{name} failed unexpectedly: {exc!r}", "is_error": True}
        return {"content": result.content, "is_error": result.is_error}

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                try:
                    request = json.loads(line)
                except ValueError:
                    request = None
                writer.write(json.dumps(await self.answer(request)).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


__all__ = ["MCP_PREFIX", "ToolRelay", "host_tool_name", "memdir_tool_name"]
