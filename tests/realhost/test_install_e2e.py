"""The plugin and the project install as the real CLI reads them: the plugin validates, installs
from this repository's marketplace and runs; uninstall gives the project its bytes back."""

from __future__ import annotations

from pathlib import Path

from tests.realhost.host import ClaudeHost

REPO = Path(__file__).resolve().parents[2]
START_BLOCK = "SessionStart hook additional context: # Memory (memdir)"


def test_plugin_validates_installs_and_runs(host: ClaudeHost) -> None:
    for target in (REPO / "plugin", REPO):  # the plugin, then the marketplace
        out = host.claude("plugin", "validate", str(target)).stdout
        assert "Validation passed" in out, out
    host.claude("plugin", "marketplace", "add", str(REPO))
    host.claude("plugin", "install", "memdir@memdir")

    events = host.stream_json("hello")
    init = next(e for e in events if e.get("subtype") == "init")
    assert any(p["name"] == "memdir" for p in init["plugins"])
    servers = {s["name"]: s["status"] for s in init["mcp_servers"]}
    assert servers.get("plugin:memdir:memdir") == "connected", servers
    assert "mcp__plugin_memdir_memdir__memory_save" in init["tools"]
    assert START_BLOCK in host.api.main_requests()[-1].text()
    assert [r["event"] for r in host.hook_log()][:2] == ["session-start", "user-prompt-submit"]


def test_uninstall_restores_the_project_files_byte_for_byte(host: ClaudeHost) -> None:
    settings = host.project / ".claude" / "settings.json"
    mcp = host.project / ".mcp.json"
    settings.parent.mkdir()
    # Another tool's hook and odd formatting (tabs, key order, no final newline) must survive.
    settings.write_bytes(
        b'{\n\t"permissions": {"allow": ["Bash(ls:*)"]},\n\t"hooks": {"Stop": [{"hooks": '
        b'[{"type": "command", "command": "true"}]}]}\n}'
    )
    mcp.write_bytes(b'{"mcpServers": {"other": {"command": "other-server"}}}\n')
    before = {settings: settings.read_bytes(), mcp: mcp.read_bytes()}

    host.install()
    assert settings.read_bytes() != before[settings]
    host.prompt("hello")  # the host runs the installed hooks...
    assert START_BLOCK in host.api.main_requests()[-1].text()
    host.memdir("uninstall", "claude-code", "--project")
    assert {p: p.read_bytes() for p in before} == before  # ...and uninstall restores the bytes

    host.api.clear()
    host.prompt("hello again")
    assert START_BLOCK not in host.api.main_requests()[-1].text()
