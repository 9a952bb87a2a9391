"""The memory tools a background agent gets: Read, Grep, Glob, Bash, Edit, Write.

Invariants:

* Reads are plain Python file reads, bounded (:mod:`memdir.agent.read_tools`).
* Writes never shell out and never touch the disk directly: Edit and Write go through a
  :class:`WritableRoot` (a :class:`memdir.store.MemoryStore` in practice), which writes atomically
  under its lock, runs its guards (e.g. the team secret guard) and keeps MEMORY.md in step. A path
  outside that root is an error here even without a policy — the jail policy only makes the
  refusal explicit and earlier.
* Bash runs only commands the read-only parser accepts, without a shell, time- and output-capped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from memdir.agent.read_tools import MAX_OUTPUT_CHARS, GlobTool, GrepTool, ReadTool
from memdir.agent.shell import CommandLine, parse_read_only
from memdir.agent.shellexec import execute
from memdir.agent.toolset import (
    ThreadedTool,
    Tool,
    ToolBox,
    ToolResult,
    get_bool,
    get_int,
    get_str,
    schema,
)
from memdir.errors import UnsafePathError
from memdir.llm.base import ToolSpec
from memdir.pathsafe import is_within, relative_to_root


class WritableRoot(Protocol):
    """The write side of a memory store (``memdir.store.MemoryStore`` satisfies it)."""

    @property
    def root(self) -> Path: ...

    def write_text(self, rel: str, text: str, /, *, expected_hash: str | None = None) -> object: ...

    def edit(
        self,
        rel: str,
        old: str,
        new: str,
        /,
        *,
        replace_all: bool = False,
        expected_hash: str | None = None,
    ) -> object: ...


class BashTool:
    spec = ToolSpec(
        "Bash",
        "Run a read-only shell command (ls, cat, head, tail, wc, grep, find, sort, uniq, cut, "
        "diff, ...). No redirections, expansions, globs or commands that write.",
        schema(
            ["command"],
            command={"type": "string"},
            timeout={"type": "integer", "description": "seconds (max 120)"},
        ),
    )

    def __init__(
        self,
        cwd: Path,
        *,
        approve: Callable[[str], CommandLine] = parse_read_only,
        timeout: float = 30.0,
    ) -> None:
        # Defence in depth: even unwrapped, this tool runs only what ``approve`` parsed.
        self.cwd = cwd
        self.approve = approve
        self.timeout = timeout

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
        line = self.approve(get_str(input, "command"))
        timeout = min(float(get_int(input, "timeout", int(self.timeout), minimum=1)), 120.0)
        result = await execute(line, cwd=self.cwd, timeout=timeout, max_output=MAX_OUTPUT_CHARS)
        text = result.output
        if result.truncated:
            text += f"\n[output truncated at {MAX_OUTPUT_CHARS} bytes]"
        if result.timed_out:
            return ToolResult(text + f"\n[command timed out after {timeout:g}s]", is_error=True)
        if result.exit_code != 0:
            text += f"\n[exit code {result.exit_code}]"
        return ToolResult(text or "(no output)")


def memory_rel(root: Path, raw: str) -> str:
    """The store-relative name for a model-supplied path; raises if it is outside ``root``."""
    path = Path(raw)
    if path.is_absolute():
        real_root = Path(os.path.realpath(root))
        if not is_within(Path(os.path.abspath(root)), path) and is_within(real_root, path):
            root = real_root  # the model used the resolved spelling of the same directory
        return relative_to_root(root, path)
    return relative_to_root(root, raw)


class _StoreTool(ThreadedTool):
    def __init__(self, store: WritableRoot) -> None:
        self.store = store

    def _target(self, raw: str) -> tuple[str, Path]:
        try:
            rel = memory_rel(self.store.root, raw)
        except UnsafePathError as exc:
            raise UnsafePathError(f"{raw} is not inside the memory directory: {exc}") from None
        return rel, self.store.root / rel


class EditTool(_StoreTool):
    spec = ToolSpec(
        "Edit",
        "Replace an exact string in a file. old_string must match exactly once unless "
        "replace_all is true.",
        schema(
            ["file_path", "old_string", "new_string"],
            file_path={"type": "string"},
            old_string={"type": "string"},
            new_string={"type": "string"},
            replace_all={"type": "boolean"},
        ),
    )

    def run_sync(self, input: Mapping[str, Any]) -> ToolResult:
        rel, path = self._target(get_str(input, "file_path"))
        old, new = get_str(input, "old_string"), get_str(input, "new_string")
        if old == new:
            return ToolResult("Edit: old_string and new_string are identical", is_error=True)
        self.store.edit(rel, old, new, replace_all=get_bool(input, "replace_all"))
        return ToolResult(f"The file {path} has been updated.", written_path=path)


class WriteTool(_StoreTool):
    spec = ToolSpec(
        "Write",
        "Create or overwrite a file with the given content.",
        schema(
            ["file_path", "content"],
            file_path={"type": "string"},
            content={"type": "string"},
        ),
    )

    def run_sync(self, input: Mapping[str, Any]) -> ToolResult:
        rel, path = self._target(get_str(input, "file_path"))
        content = get_str(input, "content")
        existed = path.exists()
        self.store.write_text(rel, content)
        verb = "updated" if existed else "created"
        return ToolResult(f"File {verb} successfully at: {path}", written_path=path)


def memory_tools(store: WritableRoot, *, cwd: Path | None = None) -> ToolBox:
    """All six tools: reads relative to ``cwd`` (default: the store root), writes via ``store``."""
    base = cwd if cwd is not None else store.root
    tools: list[Tool] = [
        ReadTool(base),
        GrepTool(base),
        GlobTool(base),
        BashTool(base),
        EditTool(store),
        WriteTool(store),
    ]
    return ToolBox(tools)
