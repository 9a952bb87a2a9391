"""The read tools: Read, Grep and Glob — plain Python file reads, bounded.

Invariant: every read tool bounds what it touches and returns — lines and characters per line
(Read), files visited, bytes scanned and output size (Grep), results (Glob) — and runs in a
worker thread, so a huge tree or file can slow a run down but never stall the event loop or
exhaust memory.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Mapping
from itertools import islice
from pathlib import Path
from typing import Any, TextIO

from memdir.agent.toolset import (
    ThreadedTool,
    ToolResult,
    get_bool,
    get_int,
    get_opt_str,
    get_str,
    resolve_input_path,
    schema,
)
from memdir.errors import NotRegularFileError
from memdir.llm.base import ToolSpec
from memdir.pathsafe import open_regular, read_regular

MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 30_000
MAX_READ_LINES = 2000
MAX_GREP_FILE_BYTES = 2_000_000
MAX_GREP_FILES = 10_000
MAX_GREP_TOTAL_BYTES = 50_000_000
MAX_GLOB_RESULTS = 100
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".hg", ".svn"}


def _cap(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut if cut > 0 else limit] + f"\n[output truncated at {limit} characters]"


def _is_binary(path: Path) -> bool:
    """NUL in the first 8 KiB; a FIFO or device raises NotRegularFileError (never blocks)."""
    return b"\x00" in read_regular(path, limit=8192)


class ReadTool(ThreadedTool):
    spec = ToolSpec(
        "Read",
        "Read a text file. Returns numbered lines (cat -n style). Use offset (1-based line) and "
        "limit for long files.",
        schema(
            ["file_path"],
            file_path={"type": "string", "description": "absolute path of the file"},
            offset={"type": "integer", "description": "first line to read (1-based)"},
            limit={"type": "integer", "description": f"lines to read (default {MAX_READ_LINES})"},
        ),
    )

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def run_sync(self, input: Mapping[str, Any]) -> ToolResult:
        path = resolve_input_path(get_str(input, "file_path"), self.cwd)
        offset = get_int(input, "offset", 1, minimum=0) or 1
        limit = get_int(input, "limit", MAX_READ_LINES, minimum=1)
        if path.is_dir():
            return ToolResult(f"{path} is a directory; use Glob or Bash ls", is_error=True)
        if not path.exists():
            return ToolResult(f"File does not exist: {path}", is_error=True)
        try:
            if _is_binary(path):
                return ToolResult(f"{path} looks like a binary file; not shown", is_error=True)
        except NotRegularFileError as exc:
            return ToolResult(str(exc), is_error=True)
        lines: list[str] = []
        with open(open_regular(path), encoding="utf-8", errors="replace") as fh:
            window = islice(_bounded_lines(fh), offset - 1, offset - 1 + limit)
            for number, text in enumerate(window, offset):
                lines.append(f"{number:>6}\t{text}")
        if not lines:
            note = "is empty" if offset == 1 else f"has fewer than {offset} lines"
            return ToolResult(f"<file {note}: {path}>")
        return ToolResult(_cap("\n".join(lines)))


def _bounded_lines(fh: TextIO) -> Iterator[str]:
    """Lines without their newline, each cut at MAX_LINE_CHARS without reading it all into
    memory (a minified file can be one 100 MB line)."""
    while chunk := fh.readline(MAX_LINE_CHARS + 1):
        if len(chunk) > MAX_LINE_CHARS and not chunk.endswith("\n"):
            rest = fh.readline(65536)  # skip the remainder of the long line
            while rest and not rest.endswith("\n"):
                rest = fh.readline(65536)
            yield chunk[:MAX_LINE_CHARS] + " [line truncated]"
        else:
            yield chunk.rstrip("\r\n")


def _walk_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found: list[Path] = []
    real_root = Path(os.path.realpath(root))
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            # A search of a directory never reads through a link out of it (issue #8 item 1).
            if path.is_symlink() and not Path(os.path.realpath(path)).is_relative_to(real_root):
                continue
            found.append(path)
            if len(found) >= MAX_GREP_FILES:
                return found
    return found


def _glob_matches(path: Path, root: Path, glob: str | None) -> bool:
    if glob is None:
        return True
    target = path.relative_to(root).as_posix() if "/" in glob and path != root else path.name
    return fnmatch.fnmatch(target, glob)


class GrepTool(ThreadedTool):
    spec = ToolSpec(
        "Grep",
        "Search file contents with a Python regular expression. output_mode: "
        "'files_with_matches' (default), 'content' (path:line:text) or 'count'.",
        schema(
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

    def run_sync(self, input: Mapping[str, Any]) -> ToolResult:
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
        size = scanned = 0
        for path in _walk_files(root):
            if not _glob_matches(path, root, glob) or _unsearchable(path):
                continue
            scanned += path.stat().st_size
            if scanned > MAX_GREP_TOTAL_BYTES:
                out.append(f"[search stopped after {MAX_GREP_TOTAL_BYTES} bytes; narrow the path]")
                break
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
        text = read_regular(path).decode("utf-8", errors="replace")
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


class GlobTool(ThreadedTool):
    spec = ToolSpec(
        "Glob",
        "Find files by glob pattern (e.g. '**/*.md'), newest first.",
        schema(
            ["pattern"],
            pattern={"type": "string", "description": "glob relative to path"},
            path={"type": "string", "description": "directory to search (default: working dir)"},
        ),
    )

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def run_sync(self, input: Mapping[str, Any]) -> ToolResult:
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
