"""memdir inside Claude Code (and hosts with the same hook model): hook handlers, their
session state and log, and the install/uninstall of hooks and MCP servers into host configs.
"""
