"""The plugin folder in the repository says exactly what ``memdir install claude-code`` does."""

from __future__ import annotations

import json
from pathlib import Path

import memdir
from memdir.adapters.hooks import settings_merge as sm
from memdir.adapters.hooks.install import server_entry
from memdir.adapters.hosts.claude_code.dialect import DIALECT, EVENTS

hook_specs = DIALECT.hook_specs

REPO = Path(__file__).resolve().parents[3]
PLUGIN = REPO / "plugin"


def load(path: Path) -> dict[str, object]:
    value = json.loads(path.read_text())
    assert isinstance(value, dict)
    return value


def test_plugin_hooks_are_the_installed_hooks_with_memdir_on_path() -> None:
    hooks = load(PLUGIN / "hooks" / "hooks.json")
    expected, _ = sm.add_hooks({}, hook_specs(["memdir"]))
    assert hooks["hooks"] == expected["hooks"]
    assert sorted(hooks["hooks"]) == sorted(EVENTS.values())  # type: ignore[call-overload]


def test_plugin_manifest_and_mcp_server() -> None:
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "memdir" and manifest["version"] == memdir.__version__
    assert load(PLUGIN / ".mcp.json") == {"mcpServers": {"memdir": server_entry(["memdir"])}}
    market = load(REPO / ".claude-plugin" / "marketplace.json")
    assert market["plugins"] == [
        {"name": "memdir", "source": "./plugin", "description": manifest["description"]}
    ]
