"""Adapters: the edges where memdir meets other programs (MCP server, Anthropic memory tool).

Adapters import the core and services; nothing in memdir imports an adapter. Each adapter
imports its optional SDK lazily (inside its own module) and raises
:class:`~memdir.errors.MissingExtraError` naming the extra when it is missing.
"""
