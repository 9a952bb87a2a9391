"""Scan a memory dir for headers (frontmatter of the first 30 lines) and render the manifest.

Invariants:
- A scan never raises for a bad file and never touches one. Files it cannot read (binary, not
  UTF-8, unreadable, or a symlink that resolves outside the memory dir) are reported in
  ``errors`` and skipped: a link out of the dir is an error to report, never content to read.
- A memory is never dropped for its header: frontmatter is parsed leniently (the reference's
  quote-and-retry, then an empty header), bounded (alias bombs, deep nesting), and whatever
  needed repair, plus bad field values such as ``created: 2020-13-45``, is reported in
  ``notes`` while the file stays in the scan.
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
from memdir.errors import UnsafePathError
from memdir.frontmatter import parse_header_lines
from memdir.index import ENTRYPOINT_NAME, UNINDEXED_PREFIXES
from memdir.model import MemoryHeader
from memdir.pathsafe import is_within, open_inside, open_regular
from memdir.validity import VALIDITY_KEYS, validity_meta

MAX_MEMORY_FILES = 200
FRONTMATTER_MAX_LINES = 30
_MAX_LINE_CHARS = 8_192
_CACHE_VERSION = 3  # 3: headers keep the validity keys (memdir.validity)
_DATE_KEYS = ("created", "updated")


@dataclass(frozen=True, slots=True)
class ScanIssue:
    path: Path
    reason: str
    kind: str = "unreadable"  # errors: unreadable, symlink-escape; notes: frontmatter-*, bad-value


@dataclass
class ScanResult:
    headers: list[MemoryHeader]
    errors: list[ScanIssue] = field(default_factory=list)  # files skipped
    total: int = 0  # memory files found before the cap
    notes: list[ScanIssue] = field(default_factory=list)  # files kept, with something to fix


def iter_memory_files(
    root: Path, issues: list[ScanIssue] | None = None
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(relative POSIX path, dir entry) for every candidate memory file below ``root``.

    The daily logs (``logs/``) are not memories and are not entered. A symlinked file that
    resolves outside ``root`` is never yielded; it goes to ``issues``.
    """
    real_root = Path(os.path.realpath(root))
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
                    if not (rel + "/").startswith(UNINDEXED_PREFIXES):
                        stack.append((entry.path, rel + "/"))
                elif entry.name.endswith(".md") and entry.name != ENTRYPOINT_NAME:
                    if entry.is_symlink() and not link_inside(real_root, entry, issues):
                        continue
                    if entry.is_file(follow_symlinks=True):
                        yield rel, entry
            except OSError:
                continue


def link_inside(real_root: Path, entry: os.DirEntry[str], issues: list[ScanIssue] | None) -> bool:
    """Whether symlink ``entry`` resolves inside ``real_root`` (a realpath); escapes, dangling
    links and loops go to ``issues``. Every lister of memory files uses this one rule."""
    try:
        target = Path(os.path.realpath(entry.path, strict=True))
    except (OSError, RuntimeError):
        if issues is not None:
            issues.append(ScanIssue(Path(entry.path), "dangling symlink or symlink loop"))
        return False
    if is_within(real_root, target) and target != real_root:
        return True
    if issues is not None:
        issues.append(
            ScanIssue(
                Path(entry.path),
                "symlink resolves outside the memory dir; not read",
                "symlink-escape",
            )
        )
    return False


def read_head(
    path: Path, max_lines: int = FRONTMATTER_MAX_LINES, *, root: Path | None = None
) -> list[str]:
    """The first ``max_lines`` lines (line ends kept), each capped; raises on binary data.

    With ``root`` (a realpath), a file that resolves outside it raises UnsafePathError.
    """
    lines: list[str] = []
    source = open_inside(root, path) if root is not None else open_regular(path)
    with open(source, "rb") as fh:
        for _ in range(max_lines):
            raw = fh.readline(_MAX_LINE_CHARS)
            if not raw:
                break
            if b"\x00" in raw:
                raise UnicodeDecodeError("utf-8", raw, 0, 1, "binary file (NUL byte)")
            lines.append(raw.decode("utf-8"))
    return lines


def read_header(root: Path, rel: str, mtime: float) -> MemoryHeader:
    """Parse one file's header (leniently); raises OSError / UnicodeDecodeError /
    UnsafePathError (a link out of ``root``)."""
    path = root / rel
    lines = read_head(path, root=Path(os.path.realpath(root)))
    return header_from_meta(root, rel, mtime, header_meta(lines, path)[0])


def header_from_meta(root: Path, rel: str, mtime: float, meta: dict[str, Any]) -> MemoryHeader:
    """The header of ``rel`` from the fields :func:`header_meta` keeps (or the cache holds)."""

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
        row = self._lookup(rel, mtime_ns, size)
        return row[2] if row is not None else None

    def get_notes(self, rel: str, mtime_ns: int, size: int) -> list[tuple[str, str]] | None:
        """(kind, reason) notes stored with a header; None on a miss."""
        row = self._lookup(rel, mtime_ns, size)
        if row is None:
            return None
        return [(str(k), str(r)) for k, r in row[3]]

    def _lookup(self, rel: str, mtime_ns: int, size: int) -> list[Any] | None:
        row = self._entries.get(rel)
        if (
            isinstance(row, list)
            and len(row) == 4
            and row[0] == mtime_ns
            and row[1] == size
            and isinstance(row[2], dict)
            and isinstance(row[3], list)
        ):
            return row
        return None

    def put(
        self,
        rel: str,
        mtime_ns: int,
        size: int,
        meta: dict[str, Any],
        notes: list[tuple[str, str]] | None = None,
    ) -> None:
        self._entries[rel] = [mtime_ns, size, meta, [list(n) for n in notes or []]]
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
    notes: list[ScanIssue] = []
    live: set[str] = set()
    if not root.is_dir():
        return ScanResult([], [])
    real_root = Path(os.path.realpath(root))
    for rel, entry in iter_memory_files(root, issues):
        path = Path(entry.path)
        try:
            st = entry.stat(follow_symlinks=True)
        except OSError as exc:
            issues.append(ScanIssue(path, f"cannot stat: {exc.strerror}"))
            continue
        live.add(rel)
        meta: dict[str, Any] | None = None
        cached: list[tuple[str, str]] | None = None
        if cache is not None:
            cached = cache.get_notes(rel, st.st_mtime_ns, st.st_size)
            meta = cache.get(rel, st.st_mtime_ns, st.st_size)
        if meta is None or cached is None:
            try:
                meta, cached = header_meta(read_head(path, root=real_root), path)
            except UnsafePathError:
                issues.append(
                    ScanIssue(path, "resolves outside the memory dir; not read", "symlink-escape")
                )
                continue
            except UnicodeDecodeError:
                issues.append(ScanIssue(path, "not UTF-8 text (binary file?)"))
                continue
            except OSError as exc:
                issues.append(ScanIssue(path, f"cannot read: {exc.strerror}"))
                continue
            if cache is not None:
                cache.put(rel, st.st_mtime_ns, st.st_size, meta, cached)
        notes += [ScanIssue(path, reason, kind) for kind, reason in cached]
        headers.append(header_from_meta(root, rel, st.st_mtime, meta))
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
    return ScanResult(headers, issues, total, notes)


def header_meta(lines: list[str], source: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The header fields a scan keeps, and (kind, reason) notes on what needed repair."""
    parsed, repair = parse_header_lines(lines, source=source)
    notes: list[tuple[str, str]] = []
    if repair is not None:
        notes.append((f"frontmatter-{repair.kind}", repair.describe()))
    for key in _DATE_KEYS:
        value = parsed.get(key)
        if value is not None and not _is_date(value):
            notes.append(("bad-value", f"{key}: {str(value)[:40]!r} is not an ISO date"))
    keep = ("description", "type", "name", *VALIDITY_KEYS)
    meta = {k: str(parsed[k]) for k in keep if parsed.get(k) is not None}
    return meta, notes


def _is_date(value: Any) -> bool:
    try:
        dt.datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


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
