"""Sandboxed background agents: memory tools, policy wrappers, a read-only shell, a bounded runner.

A sandbox is a stack of wrappers around :func:`memory_tools` (see :mod:`memdir.agent.policy`);
:class:`AgentRunner` drives any :class:`~memdir.llm.base.Provider` through it.
"""

from memdir.agent.fileroot import FileRoot
from memdir.agent.policy import (
    AllowTools,
    JailWrites,
    OnlyFile,
    ReadOnlyShell,
    memory_agent_policy,
    single_file_policy,
)
from memdir.agent.runner import AgentRunner, RunResult, ToolCallRecord, fork_messages
from memdir.agent.shell import CommandLine, ShellRejected, parse, parse_read_only
from memdir.agent.tools import memory_tools
from memdir.agent.toolset import ToolBox, ToolResult, Toolset, WrapperToolset

__all__ = [
    "AgentRunner",
    "AllowTools",
    "CommandLine",
    "FileRoot",
    "JailWrites",
    "OnlyFile",
    "ReadOnlyShell",
    "RunResult",
    "ShellRejected",
    "ToolBox",
    "ToolCallRecord",
    "ToolResult",
    "Toolset",
    "WrapperToolset",
    "fork_messages",
    "memory_agent_policy",
    "memory_tools",
    "parse",
    "parse_read_only",
    "single_file_policy",
]
