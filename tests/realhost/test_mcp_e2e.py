"""memdir's MCP server as the real CLI starts and calls it (project ``.mcp.json``, approved as a
user would), and what the Stop hook does to a memory the agent saved through it."""

from __future__ import annotations

import json
from typing import Any

from tests.realhost.fakeapi import Reply, ToolCall
from tests.realhost.host import ClaudeHost

SAVE = "mcp__memdir__memory_save"
RECALL = "mcp__memdir__memory_recall"
SAVED = {
    "name": "ci-image",
    "description": "which image CI uses",
    "type": "project",
    "body": "CI jobs run on the ubuntu-24.04 image (cobalt-finch).",
}
USER_SAYS = "Remember that CI jobs run on the ubuntu-24.04 image (cobalt-finch)."


def tool_result(host: ClaudeHost, call: ToolCall) -> dict[str, Any]:
    """The ``tool_result`` the host sent back for ``call``, with its text parsed as JSON."""
    for request in host.api.main_requests():
        for block in request.tool_results():
            if block["tool_use_id"] == call.id:
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                assert not block.get("is_error"), text
                return dict(json.loads(text))
    raise AssertionError(f"the host never answered the {call.name} call")


def save_through_mcp(host: ClaudeHost, *more: ToolCall) -> ToolCall:
    """One session: the user asks to remember, the model saves through memdir's MCP tool."""
    host.allow_project_mcp()
    save = ToolCall(SAVE, SAVED)
    host.api.script(Reply(tool_calls=(save,)), *(Reply(tool_calls=(c,)) for c in more), "Saved.")
    host.prompt(USER_SAYS, "--allowedTools", SAVE, RECALL)
    assert host.api.pending() == 0, "the host did not run every scripted tool call"
    return save


def test_mcp_tools_save_and_recall_through_the_host(installed: ClaudeHost) -> None:
    recall = ToolCall(RECALL, {"query": "which image do CI jobs use?"})
    save = save_through_mcp(installed, recall)
    assert tool_result(installed, save) == {"path": "ci_image.md", "created": True}
    found = tool_result(installed, recall)
    assert "ci_image.md" in json.dumps(found) and "cobalt-finch" in json.dumps(found)
    text = (installed.memory_dir() / "ci_image.md").read_text()
    assert "description: which image CI uses" in text and SAVED["body"] in text


def test_a_memory_saved_through_mcp_survives_stop(installed: ClaudeHost) -> None:
    save_through_mcp(installed)
    memory_dir = installed.memory_dir()
    log = installed.wait_until_ended()  # Stop ran, SessionEnd drained the extraction worker
    memories = sorted(p.name for p in memory_dir.glob("*.md") if p.name != "MEMORY.md")
    assert memories == ["ci_image.md"], "extraction saved the same fact a second time"
    text = (memory_dir / "ci_image.md").read_text()
    assert "description: which image CI uses" in text and SAVED["body"] in text
    assert all(not r.get("written") for r in log if r["event"] == "extract")
