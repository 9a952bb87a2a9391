"""MEMORY.md: the maintained one-line-per-memory index, and how it is loaded into prompts.

The index is derived from the memory files but also a human document: memdir rewrites only the
entry lines that link to files it writes (``- [Title](path.md) — hook``) and leaves every other
line (headings, notes, links a person wrote) exactly where it was. ``rebuild`` regenerates the
entries from frontmatter; ``check`` reports drift instead of silently fixing it.

Each directory that holds memories for a scope has its own index: the private root, and
``team/`` for shared memory. Daily logs under ``logs/`` are not indexed.
"""

from __future__ import annotations

import logging
import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from memdir.errors import UnsafePathError
from memdir.pathsafe import open_inside

_log = logging.getLogger("memdir")

ENTRYPOINT_NAME = "MEMORY.md"
MAX_ENTRYPOINT_LINES = 200
MAX_ENTRYPOINT_CHARS = 25_000
ENTRY_TARGET_CHARS = 150
TEAM_PREFIX = "team/"
UNINDEXED_PREFIXES = ("logs/",)

_ENTRY = re.compile(r"^\s*[-*]\s+\[(?P<title>[^\]]*)\]\((?P<link>[^)\s]+)\)")


@dataclass(frozen=True, slots=True)
class Truncation:
    content: str
    line_count: int
    byte_count: int
    was_line_truncated: bool
    was_byte_truncated: bool

    @property
    def truncated(self) -> bool:
        return self.was_line_truncated or self.was_byte_truncated


def format_size(n: int) -> str:
    """'N bytes' below 1 KiB, else KB/MB with one decimal and a trailing '.0' dropped."""
    if n < 1024:
        return f"{n} bytes"
    for unit, scale in (("KB", 1024), ("MB", 1024 * 1024)):
        value = n / scale
        if unit == "MB" or value < 1024:
            return f"{value:.1f}".removesuffix(".0") + unit
    raise AssertionError("unreachable")


def load_for_prompt(text: str) -> Truncation:
    """Apply the 200-line then 25,000-char cap; append a warning naming the cap that fired.

    Sizes are measured in characters (not UTF-8 bytes), as the reference does.
    """
    trimmed = text.strip()
    lines = trimmed.split("\n")
    line_count = len(lines)
    byte_count = len(trimmed)
    by_lines = line_count > MAX_ENTRYPOINT_LINES
    by_chars = byte_count > MAX_ENTRYPOINT_CHARS
    if not by_lines and not by_chars:
        return Truncation(trimmed, line_count, byte_count, False, False)
    content = "\n".join(lines[:MAX_ENTRYPOINT_LINES]) if by_lines else trimmed
    if len(content) > MAX_ENTRYPOINT_CHARS:
        cut = content.rfind("\n", 0, MAX_ENTRYPOINT_CHARS)
        content = content[: cut if cut > 0 else MAX_ENTRYPOINT_CHARS]
    if by_chars and not by_lines:
        reason = (
            f"{format_size(byte_count)} (limit: {format_size(MAX_ENTRYPOINT_CHARS)})"
            " — index entries are too long"
        )
    elif by_lines and not by_chars:
        reason = f"{line_count} lines (limit: {MAX_ENTRYPOINT_LINES})"
    else:
        reason = f"{line_count} lines and {format_size(byte_count)}"
    warning = (
        f"\n\n> WARNING: {ENTRYPOINT_NAME} is {reason}. Only part of it was loaded. Keep each "
        "index entry to one line under ~200 characters and move detail into topic files."
    )
    return Truncation(content + warning, line_count, byte_count, by_lines, by_chars)


def index_scope(rel: str) -> tuple[str, str] | None:
    """(index file relative to the memory root, link relative to that index) for a memory path.

    None when the file is not indexed (MEMORY.md itself, non-Markdown files, daily logs).
    """
    name = rel.rsplit("/", 1)[-1]
    if name == ENTRYPOINT_NAME or not rel.endswith(".md"):
        return None
    if rel.startswith(UNINDEXED_PREFIXES):
        return None
    if rel.startswith(TEAM_PREFIX):
        return TEAM_PREFIX + ENTRYPOINT_NAME, rel[len(TEAM_PREFIX) :]
    return ENTRYPOINT_NAME, rel


def _quote(link: str) -> str:
    return urllib.parse.quote(link, safe="/._-~+@")


def entry_line(title: str, link: str, hook: str) -> str:
    """``- [Title](link) — hook``, with the hook shortened to keep the line near 150 chars."""
    title = " ".join(title.split()).replace("[", "(").replace("]", ")") or link
    head = f"- [{title}]({_quote(link)})"
    hook = " ".join(hook.split())
    if not hook:
        return head
    room = max(ENTRY_TARGET_CHARS - len(head) - 3, 20)
    if len(hook) > room:
        hook = hook[: room - 1].rstrip() + "…"
    return f"{head} — {hook}"


def entry_link(line: str) -> str | None:
    """The link target of an index entry line (unquoted), or None for any other line."""
    m = _ENTRY.match(line)
    if m is None:
        return None
    link = urllib.parse.unquote(m.group("link"))
    return link.removeprefix("./")


def upsert_entry(text: str, link: str, line: str) -> str:
    """Replace the entry for ``link`` (first one; later duplicates dropped) or append it."""
    out: list[str] = []
    placed = False
    for existing in text.splitlines():
        if entry_link(existing) == link:
            if not placed:
                out.append(line)
                placed = True
            continue
        out.append(existing)
    if not placed:
        while out and not out[-1].strip():
            out.pop()
        out.append(line)
    return "\n".join(out) + "\n"


def remove_entry(text: str, link: str) -> str:
    kept = [ln for ln in text.splitlines() if entry_link(ln) != link]
    return "\n".join(kept) + "\n" if kept else ""


def entries(text: str) -> list[str]:
    """Link targets of all entry lines, in order (duplicates kept)."""
    return [link for ln in text.splitlines() if (link := entry_link(ln)) is not None]


@dataclass
class IndexReport:
    """What ``check`` found for one index file. Empty lists mean healthy."""

    index: str
    dead_links: list[str] = field(default_factory=list)
    unindexed: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    long_lines: list[int] = field(default_factory=list)
    over_limit: str | None = None

    @property
    def ok(self) -> bool:
        return (
            not (self.dead_links or self.unindexed or self.duplicates or self.long_lines)
            and self.over_limit is None
        )


def read_entrypoint(root: Path, index_rel: str = ENTRYPOINT_NAME) -> str:
    """The index text, or '' when there is none yet, it is unreadable as UTF-8, or it is a
    symlink that resolves outside ``root`` (logged: a link out of the dir is never read)."""
    try:
        fd = open_inside(Path(os.path.realpath(root)), root / index_rel)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return ""
    except UnsafePathError as exc:
        if os.path.lexists(root / index_rel):
            _log.warning("%s", exc)
        return ""
    try:
        with open(fd, "rb") as fh:
            return fh.read().decode("utf-8")
    except UnicodeDecodeError:
        return ""


def check_text(index_rel: str, text: str, memory_links: set[str], exists: set[str]) -> IndexReport:
    """Compare one index against the memory files it should cover.

    ``memory_links`` are the links (relative to the index) of memory files in its scope;
    ``exists`` every existing file path relative to the index, for dead-link checks.
    """
    report = IndexReport(index=index_rel)
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > 200:
            report.long_lines.append(number)
        link = entry_link(line)
        if link is None or "://" in link or link.startswith("#"):
            continue
        if link in seen and link not in report.duplicates:
            report.duplicates.append(link)
        seen.add(link)
        if link not in exists:
            report.dead_links.append(link)
    report.unindexed = sorted(memory_links - seen)
    t = load_for_prompt(text)
    if t.was_line_truncated:
        report.over_limit = f"{t.line_count} lines (limit {MAX_ENTRYPOINT_LINES})"
    elif t.was_byte_truncated:
        report.over_limit = f"{t.byte_count} chars (limit {MAX_ENTRYPOINT_CHARS})"
    return report
