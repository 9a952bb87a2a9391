"""The agent hosts memdir plugs into, each a small dialect over one hook core (:mod:`..hooks`).

:func:`dialect` is how an entry point (``memdir hook``, ``memdir install``, the recall daemon)
finds a host by its CLI word; the core is handed the dialect and never imports this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

from memdir.errors import InstallError

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect, Installable

# CLI word -> module holding ``DIALECT``: hosts with hooks memdir runs
DIALECTS = {
    "claude-code": "memdir.adapters.hosts.claude_code",
    "codex": "memdir.adapters.hosts.codex",
    "gemini": "memdir.adapters.hosts.gemini",
    "cursor": "memdir.adapters.hosts.cursor",
    "opencode": "memdir.adapters.hosts.opencode",
    "qwen": "memdir.adapters.hosts.qwen",
    "copilot": "memdir.adapters.hosts.copilot",
    "pi": "memdir.adapters.hosts.pi",
    "cline": "memdir.adapters.hosts.cline",
    "antigravity": "memdir.adapters.hosts.antigravity",
}
# hosts memdir can only give its MCP server (no hooks it could run)
MCP_ONLY = ("claude-desktop",)
DEFAULT = "claude-code"


def names() -> tuple[str, ...]:
    """Every host ``memdir install`` knows, hook hosts first."""
    return (*DIALECTS, *MCP_ONLY)


def dialect(name: str) -> Dialect:
    """The dialect of host ``name``; InstallError for a host without hooks."""
    module = DIALECTS.get(name)
    if module is None:
        raise InstallError(f"unknown hook host {name!r} (choose {', '.join(DIALECTS)})")
    return cast("Dialect", importlib.import_module(module).DIALECT)


def installable(name: str) -> Installable:
    """What ``memdir install <name>`` needs of host ``name``."""
    if name in MCP_ONLY:
        from memdir.adapters.hosts.mcp_only import HOSTS

        return HOSTS[name]
    if name not in DIALECTS:
        raise InstallError(f"unknown host {name!r} (choose {', '.join(names())})")
    return dialect(name)


__all__ = ["DEFAULT", "DIALECTS", "MCP_ONLY", "dialect", "installable", "names"]
