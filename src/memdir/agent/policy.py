"""Sandbox policies: toolsets that wrap a toolset and refuse some calls.

Invariant: a refusal is a :class:`ToolResult` with ``is_error=True`` and ``denied=True`` whose
message names the policy, the tool and the reason — the model reads it and can adjust; nothing
is raised out of the agent loop. Each policy checks one thing, so a sandbox is a stack::

    AllowTools(READ_TOOLS | WRITE_TOOLS | {"Bash"},
               ReadOnlyShell(JailWrites(memory_tools(store), memory_dir)))

which is :func:`memory_agent_policy` — the sandbox for extraction and dream: read anywhere,
read-only shell, writes only inside the memory dir, everything else denied. Session memory uses
:func:`single_file_policy`: only Edit, only on its one file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memdir.agent.shell import ShellRejected, parse_read_only
from memdir.agent.tools import memory_rel
from memdir.agent.toolset import ToolResult, Toolset, WrapperToolset
from memdir.errors import UnsafePathError
from memdir.llm.base import ToolSpec
from memdir.pathsafe import realpath_deepest_existing

READ_TOOLS = frozenset({"Read", "Grep", "Glob"})
WRITE_TOOLS = frozenset({"Edit", "Write"})


def deny(policy: str, tool: str, reason: str) -> ToolResult:
    return ToolResult(
        f"Permission denied by the {policy} policy: {tool} was not run. {reason}",
        is_error=True,
        denied=True,
    )


def _file_path(input: Mapping[str, Any]) -> str | None:
    value = input.get("file_path")
    return value if isinstance(value, str) and value else None


class AllowTools(WrapperToolset):
    """Only the named tools exist: others are hidden from the model and refused if called."""

    def __init__(self, names: Iterable[str], inner: Toolset) -> None:
        super().__init__(inner)
        self.names = frozenset(names)

    def specs(self) -> list[ToolSpec]:
        return [spec for spec in self.inner.specs() if spec.name in self.names]

    async def call(self, name: str, input: Mapping[str, Any]) -> ToolResult:
        if name not in self.names:
            allowed = ", ".join(sorted(self.names))
            return deny("allowed-tools", name, f"Only these tools are available: {allowed}.")
        return await self.inner.call(name, input)


class ReadOnlyShell(WrapperToolset):
    """Bash runs only commands the read-only allow-list parser accepts."""

    def __init__(self, inner: Toolset, *, tool: str = "Bash") -> None:
        super().__init__(inner)
        self.tool = tool

    async def call(self, name: str, input: Mapping[str, Any]) -> ToolResult:
        if name == self.tool:
            command = input.get("command")
            if not isinstance(command, str):
                return deny("read-only-shell", name, "The 'command' parameter must be a string.")
            try:
                parse_read_only(command)
            except ShellRejected as exc:
                return deny(
                    "read-only-shell",
                    name,
                    f"Only read-only commands may run here: {exc}. Files are changed only with "
                    "Edit/Write inside the memory directory (rm is not permitted).",
                )
        return await self.inner.call(name, input)


class JailWrites(WrapperToolset):
    """Write tools may only touch Markdown files inside ``memory_dir``.

    Beyond the reference (any path under the dir), hidden components (``.git/hooks/…``, the
    store's lock file) and non-``.md`` files are refused too, because a memory dir may be a git
    checkout and a hook written there would run code; ``markdown_only=False`` lifts that.
    """

    def __init__(
        self,
        inner: Toolset,
        memory_dir: Path,
        *,
        tools: Iterable[str] = WRITE_TOOLS,
        markdown_only: bool = True,
    ) -> None:
        super().__init__(inner)
        self.memory_dir = memory_dir
        self.tools = frozenset(tools)
        self.markdown_only = markdown_only

    async def call(self, name: str, input: Mapping[str, Any]) -> ToolResult:
        if name in self.tools:
            raw = _file_path(input)
            if raw is None:
                return deny("memory-dir-jail", name, "A non-empty 'file_path' is required.")
            try:
                rel = memory_rel(self.memory_dir, raw)
            except UnsafePathError as exc:
                return deny(
                    "memory-dir-jail",
                    name,
                    f"Writes are allowed only inside {self.memory_dir}; {raw!r} is refused "
                    f"({exc}).",
                )
            if self.markdown_only and (
                not rel.endswith(".md") or any(p.startswith(".") for p in rel.split("/"))
            ):
                return deny(
                    "memory-dir-jail",
                    name,
                    f"Only Markdown memory files (*.md, no hidden folders) may be written; "
                    f"{raw!r} is refused.",
                )
        return await self.inner.call(name, input)


class OnlyFile(WrapperToolset):
    """The listed tools may only touch one file (compared after resolving symlinks)."""

    def __init__(self, inner: Toolset, path: Path, *, tools: Iterable[str] = ("Edit",)) -> None:
        super().__init__(inner)
        self.path = path
        self.tools = frozenset(tools)

    async def call(self, name: str, input: Mapping[str, Any]) -> ToolResult:
        if name in self.tools:
            raw = _file_path(input)
            try:
                same = (
                    raw is not None and Path(raw).is_absolute() and _same_file(Path(raw), self.path)
                )
            except UnsafePathError:
                same = False
            if not same:
                return deny("single-file", name, f"{name} may only change {self.path}.")
        return await self.inner.call(name, input)


def _same_file(a: Path, b: Path) -> bool:
    if a.is_symlink():
        return False
    return realpath_deepest_existing(a) == realpath_deepest_existing(b)


def memory_agent_policy(tools: Toolset, memory_dir: Path) -> Toolset:
    """Extraction/dream sandbox: read anywhere, read-only Bash, Edit/Write jailed to the dir."""
    return AllowTools(
        READ_TOOLS | WRITE_TOOLS | {"Bash"},
        ReadOnlyShell(JailWrites(tools, memory_dir)),
    )


def single_file_policy(tools: Toolset, path: Path) -> Toolset:
    """Session-memory sandbox: only Edit, only on ``path``."""
    return AllowTools({"Edit"}, OnlyFile(tools, path, tools={"Edit"}))
