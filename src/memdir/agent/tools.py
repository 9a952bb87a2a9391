"""The memory tools a background agent gets: Read, Grep, Glob, Bash, Edit, Write.

Invariants:

* Reads are plain Python file reads, bounded in lines, characters and files visited.
* Writes never shell out and never touch the disk directly: Edit and Write go through a
  :class:`WritableRoot` (a :class:`memdir.store.MemoryStore` in practice), which writes atomically
  under its lock, runs its guards (e.g. the team secret guard) and keeps MEMORY.md in step. A path
  outside that root is an error here even without a policy — the jail policy only makes the
  refusal explicit and earlier.
* Bash runs only commands the read-only parser accepts, without a shell, time- and output-capped.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Mapping
from itertools import islice
from pathlib import Path
from typing import Any, Protocol

from memdir.agent.shell import CommandLine, parse_read_only
from memdir.agent.shellexec import execute
from memdir.agent.toolset import (
    Tool,
    ToolBox,
    ToolResult,
    get_bool,
    get_int,
    get_opt_str,
    get_str,
    resolve_input_path,
)
from memdir.errors import UnsafePathError
from memdir.llm.base import ToolSpec
from memdir.pathsafe import is_within, relative_to_root

MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 30_000
MAX_READ_LINES = 2000
MAX_GREP_FILE_BYTES = 2_000_000
MAX_GREP_FILES = 10_000
MAX_GLOB_RESULTS = 100
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".hg", ".svn"}


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


def _schema(required: list[str], **props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


def _cap(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut if cut > 0 else limit] + f"\n[output truncated at {limit} characters]"


def _is_binary(path: Path) -> bool:
    with path.open("rb") as fh:
        return b"\x00" in fh.read(8192)


class ReadTool:
    spec = ToolSpec(
        "Read",
        "Read a text file. Returns numbered lines (cat -n style). Use offset (1-based line) and "
        "limit for long files.",
        _schema(
            ["file_path"],
            file_path={"type": "string", "description": "absolute path of the file"},
            offset={"type": "integer", "description": "first line to read (1-based)"},
            limit={"type": "integer", "description": f"lines to read (default {MAX_READ_LINES})"},
        ),
    )

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
        path = resolve_input_path(get_str(input, "file_path"), self.cwd)
        offset = get_int(input, "offset", 1, minimum=0) or 1
        limit = get_int(input, "limit", MAX_READ_LINES, minimum=1)
        if path.is_dir():
            return ToolResult(f"{path} is a directory; use Glob or Bash ls", is_error=True)
        if not path.exists():
            return ToolResult(f"File does not exist: {path}", is_error=True)
        if _is_binary(path):
            return ToolResult(f"{path} looks like a binary file; not shown", is_error=True)
        lines: list[str] = []
        with path.open(encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(islice(fh, offset - 1, offset - 1 + limit), offset):
                text = line.rstrip("\r\n")
                if len(text) > MAX_LINE_CHARS:
                    text = text[:MAX_LINE_CHARS] + " [line truncated]"
                lines.append(f"{number:>6}\t{text}")
        if not lines:
            note = "is empty" if offset == 1 else f"has fewer than {offset} lines"
            return ToolResult(f"<file {note}: {path}>")
        return ToolResult(_cap("\n".join(lines)))


def _walk_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            found.append(Path(dirpath) / name)
            if len(found) >= MAX_GREP_FILES:
                return found
    return found


def _glob_matches(path: Path, root: Path, glob: str | None) -> bool:
    if glob is None:
        return True
    target = path.relative_to(root).as_posix() if "/" in glob and path != root else path.name
    return fnmatch.fnmatch(target, glob)


class GrepTool:
    spec = ToolSpec(
        "Grep",
        "Search file contents with a Python regular expression. output_mode: "
        "'files_with_matches' (default), 'content' (path:line:text) or 'count'.",
        _schema(
            ["pattern"],
            pattern={"type": "string", "description": "regular expression"},
            path={"type": "string", "description": "file or directory (default: working dir)"},
            glob={"type": "string", "description": "only files matching this, e.g. '*.md'"},
            output_mode={"type": "string", "enum": ["files_with_matches", "content", "count"]},
            case_insensitive={"type": "boolean"},
        ),
    )

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
        raw = get_str(input, "pattern")
        root = resolve_input_path(get_opt_str(input, "path") or str(self.cwd), self.cwd)
        glob = get_opt_str(input, "glob")
        mode = get_opt_str(input, "output_mode") or "files_with_matches"
        if mode not in ("files_with_matches", "content", "count"):
            return ToolResult(f"Grep: unknown output_mode {mode!r}", is_error=True)
        try:
            regex = re.compile(raw, re.IGNORECASE if get_bool(input, "case_insensitive") else 0)
        except re.error as exc:
            return ToolResult(f"Grep: invalid regular expression: {exc}", is_error=True)
        if not root.exists():
            return ToolResult(f"Path does not exist: {root}", is_error=True)
        out: list[str] = []
        size = 0
        for path in _walk_files(root):
            if not _glob_matches(path, root, glob) or _unsearchable(path):
                continue
            hits = _grep_file(path, regex, mode)
            if not hits:
                continue
            for hit in hits:
                out.append(hit)
                size += len(hit) + 1
            if size > MAX_OUTPUT_CHARS:
                break
        if not out:
            return ToolResult("No matches found")
        return ToolResult(_cap("\n".join(out)))


def _unsearchable(path: Path) -> bool:
    try:
        return path.stat().st_size > MAX_GREP_FILE_BYTES or _is_binary(path)
    except OSError:
        return True


def _grep_file(path: Path, regex: re.Pattern[str], mode: str) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if mode == "files_with_matches":
        return [str(path)] if regex.search(text) else []
    hits = [
        (n, line) for n, line in enumerate(text.splitlines(), 1) if regex.search(line) is not None
    ]
    if mode == "count":
        return [f"{path}:{len(hits)}"] if hits else []
    return [f"{path}:{n}:{line[:MAX_LINE_CHARS]}" for n, line in hits]


class GlobTool:
    spec = ToolSpec(
        "Glob",
        "Find files by glob pattern (e.g. '**/*.md'), newest first.",
        _schema(
            ["pattern"],
            pattern={"type": "string", "description": "glob relative to path"},
            path={"type": "string", "description": "directory to search (default: working dir)"},
        ),
    )

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
        pattern = get_str(input, "pattern")
        root = resolve_input_path(get_opt_str(input, "path") or str(self.cwd), self.cwd)
        if pattern.startswith("/"):
            return ToolResult("Glob: pattern must be relative; put the directory in 'path'", True)
        if not root.is_dir():
            return ToolResult(f"Directory does not exist: {root}", is_error=True)
        found: list[tuple[float, Path]] = []
        for path in islice(root.glob(pattern), MAX_GREP_FILES):
            if path.is_file() and not _SKIP_DIRS.intersection(path.relative_to(root).parts):
                found.append((path.stat().st_mtime, path))
        if not found:
            return ToolResult("No files found")
        found.sort(key=lambda item: item[0], reverse=True)
        lines = [str(p) for _, p in found[:MAX_GLOB_RESULTS]]
        if len(found) > MAX_GLOB_RESULTS:
            lines.append(f"[{len(found) - MAX_GLOB_RESULTS} more not shown; narrow the pattern]")
        return ToolResult("\n".join(lines))


class BashTool:
    spec = ToolSpec(
        "Bash",
        "Run a read-only shell command (ls, cat, head, tail, wc, grep, find, sort, uniq, cut, "
        "diff, ...). No redirections, expansions, globs or commands that write.",
        _schema(
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


class _StoreTool:
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
        _schema(
            ["file_path", "old_string", "new_string"],
            file_path={"type": "string"},
            old_string={"type": "string"},
            new_string={"type": "string"},
            replace_all={"type": "boolean"},
        ),
    )

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
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
        _schema(
            ["file_path", "content"],
            file_path={"type": "string"},
            content={"type": "string"},
        ),
    )

    async def run(self, input: Mapping[str, Any]) -> ToolResult:
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
