"""The source words ``memdir import`` accepts, each with its module and reader class."""

from __future__ import annotations

# source word -> (module under memdir.importers, class); imported only for the source asked for.
SOURCES: dict[str, tuple[str, str]] = {
    "claude-code": ("claude_code", "ClaudeCodeSource"),
    "codex": ("codex", "CodexSource"),
    "gemini": ("gemini", "GeminiSource"),
    "claude-mem": ("claude_mem", "ClaudeMemSource"),
    "mem0": ("mem0", "Mem0Source"),
    "mcp-memory": ("mcp_memory", "McpMemorySource"),
    "basic-memory": ("basic_memory", "BasicMemorySource"),
    "qwen": ("qwen", "QwenSource"),
}
BUNDLE = "bundle"
SOURCE_NAMES: tuple[str, ...] = (*SOURCES, BUNDLE)
# Sources with no usual place on disk: their file must be named.
REQUIRES_PATH = frozenset({"mem0", "mcp-memory", BUNDLE})
