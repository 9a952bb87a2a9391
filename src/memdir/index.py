"""MEMORY.md: the maintained one-line-per-memory index, and how it is loaded into prompts.

The index is derived from the memory files but also a human document: memdir rewrites only the
entry lines that link to files it writes (``- [Title](path.md) — hook``) and leaves every other
line (headings, notes, links a person wrote) exactly where it was. ``rebuild`` regenerates the
entries from frontmatter; ``check`` reports drift instead of silently fixing it.

Each directory that holds memories for a scope has its own index: the private root, and
``team/`` for shared memory. Daily logs under ``logs/`` are not indexed.

The text functions are pure; the file-level ones at the end (one file's entry, a whole-dir check
or rebuild) are what the store and crash recovery call while they hold the store lock. A
MEMORY.md that links out of the memory dir is never read (it counts as empty, with a warning).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from memdir.atomic import atomic_write
from memdir.errors import UnsafePathError
from memdir.frontmatter import parse
from memdir.pathsafe import open_inside, resolve_inside
from memdir.script import printable
from memdir.validity import validity_of

_log = logging.getLogger("memdir")

ENTRYPOINT_NAME = "MEMORY.md"
MAX_ENTRYPOINT_LINES = 200
MAX_ENTRYPOINT_CHARS = 25_000
ENTRY_TARGET_CHARS = 150
TEAM_PREFIX = "team/"
LOGS_DIR = "logs"  # the daily logs (memdir.daily_log): a journal, not memories
SECTIONS_DIR = "index"  # MEMORY.md's sections once it outgrows its limits (memdir.index_sections)
# never indexed, listed or recalled
UNINDEXED_PREFIXES = (f"{LOGS_DIR}/", f"{SECTIONS_DIR}/", f"{TEAM_PREFIX}{SECTIONS_DIR}/")

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


_LINK_UNSAFE = frozenset(" ()[]<>%\\")


def _quote(link: str) -> str:
    """Percent-encode only what would end or break a Markdown link target.

    Letters of every script stay as they are: MEMORY.md is read by people and loaded into the
    prompt, where ``数据库.md`` is three characters and ``%E6%95%B0…`` is twenty-seven.
    """
    return "".join(
        urllib.parse.quote(ch, safe="")
        if ch in _LINK_UNSAFE or ch.isspace() or not ch.isprintable()
        else ch
        for ch in link
    )


def entry_line(title: str, link: str, hook: str) -> str:
    """``- [Title](link) — hook``, with the hook shortened to keep the line near 150 chars."""
    # the index is loaded into prompts and shown by `cat`: whoever wrote the memory's header,
    # its line carries no terminal escape, NUL or bidi override
    title = " ".join(printable(title).split()).replace("[", "(").replace("]", ")") or link
    head = f"- [{title}]({_quote(link)})"
    hook = " ".join(printable(hook).split())
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


# -- keeping an index in step with one file (used by the store and by crash recovery) ----------


def upsert_file_entry(root: Path, rel: str, text: str) -> None:
    """Add or refresh the entry for memory file ``rel`` (with content ``text``) in its index."""
    scope = index_scope(rel)
    if scope is None:
        return
    index_rel, link = scope
    meta = parse(text, lenient=True).meta
    title = str(meta.get("name") or Path(rel).stem)
    hook = str(meta.get("description") or "")
    current = read_entrypoint(root, index_rel)
    if validity_of(meta).is_current(dt.date.today()):
        updated = upsert_entry(current, link, entry_line(title, link, hook))
    else:  # retired, superseded or expired: kept on disk, left out of the index
        updated = remove_entry(current, link) if link in entries(current) else current
    if updated != current:
        atomic_write(root / index_rel, updated)


def remove_file_entry(root: Path, rel: str) -> None:
    """Drop the entry for ``rel`` from its index (the file is gone)."""
    scope = index_scope(rel)
    if scope is None:
        return
    index_rel, link = scope
    current = read_entrypoint(root, index_rel)
    updated = remove_entry(current, link)
    if updated != current:
        atomic_write(root / index_rel, updated)


def resync_file_entries(root: Path, rels: list[str]) -> None:
    """Re-derive each file's entry from the file itself: the Markdown file is the truth."""
    real_root = Path(os.path.realpath(root))
    for rel in rels:
        try:
            path = resolve_inside(root, rel)
        except UnsafePathError:
            continue
        try:
            fd = open_inside(real_root, path)
        except (OSError, UnsafePathError):
            if not os.path.lexists(path):
                remove_file_entry(root, rel)
            continue
        with open(fd, "rb") as fh:
            text = fh.read().decode("utf-8", errors="replace")
        upsert_file_entry(root, rel, text)


def check_dir(root: Path, memory_rels: list[str]) -> list[IndexReport]:
    """Drift between each MEMORY.md under ``root`` and the memory files (``memory_rels``)."""
    reports = []
    for index_rel, prefix in ((ENTRYPOINT_NAME, ""), (TEAM_PREFIX + ENTRYPOINT_NAME, TEAM_PREFIX)):
        if prefix and not (root / prefix).is_dir():
            continue
        links = {s[1] for rel in memory_rels if (s := index_scope(rel)) and s[0] == index_rel}
        base = root / prefix
        existing = {p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file()}
        text = read_entrypoint(root, index_rel)
        reports.append(check_text(index_rel, text, links, existing))
    return reports


def rebuild_entries(root: Path, memories: list[tuple[str, str, str | None]]) -> list[str]:
    """Rewrite every index's entry lines from (path, title, description); keep other lines.

    Returns the indexes that changed. The caller holds the store lock.
    """
    by_index: dict[str, list[str]] = {}
    for rel, title, description in memories:
        scope = index_scope(rel)
        if scope is not None:
            by_index.setdefault(scope[0], []).append(entry_line(title, scope[1], description or ""))
    targets = set(by_index) | {ENTRYPOINT_NAME}
    if (root / TEAM_PREFIX).is_dir():
        targets.add(TEAM_PREFIX + ENTRYPOINT_NAME)
    written: list[str] = []
    for index_rel in sorted(targets):
        current = read_entrypoint(root, index_rel)
        kept = [ln for ln in current.splitlines() if not _memory_entry(ln)]
        while kept and not kept[-1].strip():
            kept.pop()
        lines = kept + ([""] if kept else []) + by_index.get(index_rel, [])
        text = "\n".join(lines) + "\n" if lines else ""
        if text != current:
            atomic_write(root / index_rel, text)
            written.append(index_rel)
    return written


def _memory_entry(line: str) -> bool:
    """An index line that points at a local Markdown file (regenerated by rebuild)."""
    link = entry_link(line)
    return link is not None and "://" not in link and link.endswith(".md")
