"""Hosts memdir gives its MCP server only: Claude Desktop.

Claude Desktop has no project directory, so its server is pinned to one memory dir with
``--dir`` (``memdir install claude-desktop`` passes it through the command). With no hooks, the
agent calling ``memory_recall`` is the only recall it has: its server starts with
``--preload`` (the SDK and the recall index load a moment after the handshake, not at the
first tool call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memdir.adapters.hooks.dialect import HookSpec, Installable, Target

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Locations


PRELOAD = ("--preload",)


@dataclass
class _McpHost:
    name: str
    title: str
    scopes: tuple[str, ...]

    def install_targets(self, scope: str, loc: Locations) -> list[Target]:
        return [Target(loc.desktop_config(), "mcp", ("mcpServers",), mcp_args=PRELOAD)]

    def hook_specs(self, command: Sequence[str]) -> list[HookSpec]:
        return []

    def install_notes(self, scope: str, loc: Locations) -> list[str]:
        return []

    def problems(self, loc: Locations) -> list[dict[str, str]]:
        return []


HOSTS: dict[str, Installable] = {
    "claude-desktop": _McpHost("claude-desktop", "Claude Desktop", ("user", "project")),
}

__all__ = ["HOSTS", "PRELOAD"]
