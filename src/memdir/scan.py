"""Scan a memory dir for headers (frontmatter of the first 30 lines) and render the manifest.

Invariants:
- A scan never raises for a bad file: unreadable, binary or corrupt files are reported as
  :class:`ScanIssue` (path + reason) and skipped; the file is never touched.
- Only ``*.md`` files count, except any file named ``MEMORY.md``; hidden files and directories
  (temp files, caches) and symlinked directories are not entered.
- At most the first 30 lines of a file are read, each line capped, so a 50 MB file costs a few
  KB of I/O.
- The header cache (optional, outside the memory dir) is derived: keyed by path + mtime + size, it
  lets a re-scan of unchanged files read no file at all; deleting it only costs a slower scan.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.atomic import atomic_write
from memdir.errors import FrontmatterError
from memdir.frontmatter import parse_lines
from memdir.index import ENTRYPOINT_NAME
from memdir.model import MemoryHeader
from memdir.validity import VALIDITY_KEYS, validity_meta

MAX_MEMORY_FILES = 200
FRONTMATTER_MAX_LINES = 30
_MAX_LINE_CHARS = 8_192
_CACHE_VERSION = 2  # 2: headers keep the validity keys


@dataclass(frozen=True, slots=True)
class ScanIssue:
    path: Path
    reason: str


@dataclass
class ScanResult:
    headers: list[MemoryHeader]
    errors: list[ScanIssue] = field(default_factory=list)
    total: int = 0  # memory files found before the cap


def iter_memory_files(root: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(relative POSIX path, dir entry) for every candidate memory file below ``root``."""
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, rel + "/"))
                elif (
                    entry.name.endswith(".md")
                    and entry.name != ENTRYPOINT_NAME
                    and entry.is_file(follow_symlinks=True)
                ):
                    yield rel, entry
            except OSError:
                continue


def read_head(path: Path, max_lines: int = FRONTMATTER_MAX_LINES) -> list[str]:
    """The first ``max_lines`` lines (line ends kept), each capped; raises on binary data."""
    lines: list[str] = []
    with open(path, "rb") as fh:
        for _ in range(max_lines):
            raw = fh.readline(_MAX_LINE_CHARS)
            if not raw:
                break
            if b"\x00" in raw:
                raise UnicodeDecodeError("utf-8", raw, 0, 1, "binary file (NUL byte)")
            lines.append(raw.decode("utf-8"))
    return lines


def read_header(root: Path, rel: str, mtime: float) -> MemoryHeader:
    """Parse one file's header; raises OSError / UnicodeDecodeError / FrontmatterError."""
    path = root / rel
    return _header(root, rel, mtime, parse_lines(read_head(path), source=path))


def _header(root: Path, rel: str, mtime: float, meta: dict[str, Any]) -> MemoryHeader:
    def text(key: str) -> str | None:
        value = meta.get(key)
        if value is None:
            return None
        s = " ".join(str(value).split())
        return s or None

    return MemoryHeader(
        filename=rel,
        path=root / rel,
        mtime=mtime,
        description=text("description"),
        type=text("type"),
        name=text("name"),
        validity=tuple(sorted(validity_meta(meta).items())),
    )


class HeaderCache:
    """Derived cache of headers in a JSON file outside the memory dir."""

    def __init__(self, path: Path):
        self.path = path
        self._entries: dict[str, list[Any]] = {}
        self._dirty = False
        self.problem: str | None = None
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            self.problem = f"header cache {self.path} unreadable ({exc}); rebuilding"
            self._dirty = True
            return
        if not isinstance(data, dict) or data.get("version") != _CACHE_VERSION:
            self.problem = f"header cache {self.path} has an unknown format; rebuilding"
            self._dirty = True
            return
        entries = data.get("entries")
        if isinstance(entries, dict):
            self._entries = entries

    def get(self, rel: str, mtime_ns: int, size: int) -> dict[str, Any] | None:
        row = self._entries.get(rel)
        if isinstance(row, list) and len(row) == 3 and row[0] == mtime_ns and row[1] == size:
            meta = row[2]
            return meta if isinstance(meta, dict) else None
        return None

    def put(self, rel: str, mtime_ns: int, size: int, meta: dict[str, Any]) -> None:
        self._entries[rel] = [mtime_ns, size, meta]
        self._dirty = True

    def retain(self, live: set[str]) -> None:
        stale = set(self._entries) - live
        for rel in stale:
            del self._entries[rel]
        self._dirty = self._dirty or bool(stale)

    def save(self) -> None:
        if not self._dirty:
            return
        payload = {"version": _CACHE_VERSION, "entries": self._entries}
        atomic_write(self.path, json.dumps(payload, separators=(",", ":")))
        self._dirty = False


def scan_headers(
    root: Path, *, limit: int | None = MAX_MEMORY_FILES, cache: HeaderCache | None = None
) -> ScanResult:
    """Headers of the memory files under ``root``, newest first, at most ``limit`` of them."""
    headers: list[MemoryHeader] = []
    issues: list[ScanIssue] = []
    live: set[str] = set()
    if not root.is_dir():
        return ScanResult([], [])
    for rel, entry in iter_memory_files(root):
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError as exc:
            issues.append(ScanIssue(Path(entry.path), f"cannot stat: {exc.strerror}"))
            continue
        live.add(rel)
        keep = {"description", "type", "name", *VALIDITY_KEYS}
        meta = cache.get(rel, st.st_mtime_ns, st.st_size) if cache is not None else None
        if meta is None:
            try:
                parsed = parse_lines(read_head(Path(entry.path)), source=entry.path)
            except FrontmatterError as exc:
                issues.append(ScanIssue(Path(entry.path), str(exc)))
                continue
            except UnicodeDecodeError:
                issues.append(ScanIssue(Path(entry.path), "not UTF-8 text (binary file?)"))
                continue
            except OSError as exc:
                issues.append(ScanIssue(Path(entry.path), f"cannot read: {exc.strerror}"))
                continue
            meta = {k: v for k, v in parsed.items() if k in keep and v is not None}
            meta = {k: str(v) for k, v in meta.items()}
            if cache is not None:
                cache.put(rel, st.st_mtime_ns, st.st_size, meta)
        headers.append(_header(root, rel, st.st_mtime, meta))
    if cache is not None:
        cache.retain(live)
        try:
            cache.save()
        except OSError as exc:  # a derived cache must never fail a scan
            issues.append(ScanIssue(cache.path, f"cannot write header cache: {exc.strerror}"))
    headers.sort(key=lambda h: (-h.mtime, h.filename))
    total = len(headers)
    if limit is not None:
        headers = headers[:limit]
    return ScanResult(headers, issues, total)


def iso_mtime(mtime: float) -> str:
    """ISO-8601 UTC with milliseconds and 'Z', like JavaScript's toISOString."""
    stamp = dt.datetime.fromtimestamp(mtime, tz=dt.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def manifest_line(header: MemoryHeader) -> str:
    type_part = f"[{header.type}] " if header.type else ""
    desc_part = f": {header.description}" if header.description else ""
    return f"- {type_part}{header.filename} ({iso_mtime(header.mtime)}){desc_part}"


def format_manifest(headers: list[MemoryHeader] | tuple[MemoryHeader, ...]) -> str:
    return "\n".join(manifest_line(h) for h in headers)
