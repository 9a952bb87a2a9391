"""The tool relay as real processes: the child stdio MCP server forwards tools/list and
tools/call to the parent's toolset over the Unix socket; nothing runs in the child."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from memdir.llm.base import ToolResultBlock, ToolSpec, ToolUseBlock
from memdir.llm.tool_relay import ToolRelay

SPECS = [ToolSpec("Echo", "echo", {"type": "object", "properties": {"t": {"type": "string"}}})]


async def _session(requests: list[dict[str, Any]], execute: Any) -> list[dict[str, Any]]:
    async with ToolRelay(SPECS, execute) as relay:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "memdir.llm.relay_mcp",
            str(relay.socket),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        payload = "".join(json.dumps(r) + "\n" for r in requests) + "not json\n"
        out, _ = await proc.communicate(payload.encode())
        socket_dir = relay.socket.parent
        assert oct(socket_dir.stat().st_mode & 0o777) == "0o700"
    assert not socket_dir.exists()
    return [json.loads(line) for line in out.decode().splitlines()]


def test_list_and_call_go_to_the_parent() -> None:
    calls: list[ToolUseBlock] = []

    async def execute(call: ToolUseBlock) -> ToolResultBlock:
        calls.append(call)
        if call.input.get("t") == "boom":
            raise RuntimeError("tool bug")
        return ToolResultBlock(call.id, "echo:" + str(call.input.get("t")), False)

    answers = asyncio.run(
        _session(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "Echo", "arguments": {"t": "hi"}},
                },
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"name": "Bash", "arguments": {"command": "rm -rf /"}},
                },
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "Echo", "arguments": {"t": "boom"}},
                },
                {"jsonrpc": "2.0", "id": 6, "method": "resources/list"},
            ],
            execute,
        )
    )
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["result"]["serverInfo"]["name"] == "memdir"
    assert [t["name"] for t in by_id[2]["result"]["tools"]] == ["Echo"]
    assert by_id[3]["result"] == {
        "content": [{"type": "text", "text": "echo:hi"}],
        "isError": False,
    }
    assert by_id[4]["result"]["isError"] and "no such tool" in json.dumps(by_id[4])
    assert by_id[5]["result"]["isError"] and "tool bug" in json.dumps(by_id[5])
    assert by_id[6]["error"]["code"] == -32601
    assert by_id[None]["error"]["code"] == -32700  # the line that was not JSON
    assert [c.input for c in calls] == [{"t": "hi"}, {"t": "boom"}]  # never the unknown Bash
