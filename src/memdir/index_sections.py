"""Sections of MEMORY.md: an index that stays whole at any number of memories.

MEMORY.md is loaded into every prompt and capped (200 lines, 25,000 characters); past the cap
the agent sees a prefix of it. While a scope's entries fit (:data:`FLAT_ENTRIES` lines,
:data:`FLAT_CHARS`), MEMORY.md lists every memory itself, as before. Past that, memdir keeps in
MEMORY.md the entries of user and feedback memories (how to work with this person: wanted in
every prompt), as many as :data:`INLINE_ENTRIES`, and moves the others into section files,
``index/<type>.md``, ``index/<type>-2.md``, … of at most :data:`SECTION_ENTRIES` entries, with
one line per section in MEMORY.md. Every memory keeps exactly one entry, in MEMORY.md or in one
section; recall is unchanged (it reads the memory files, not the index). When the entries fit
again the sections fold back into MEMORY.md.

Invariants:
- Lines a person wrote in MEMORY.md (headings, notes, outside links) are kept, in their order.
- Section files are derived: rewritten whole by :func:`settle`. An entry found in MEMORY.md (an
  agent appended it with its file tools) wins over the same memory's line in a section.
- Nothing here scans memory files: the entries are read from the index files; a memory's type is
  read from its frontmatter only when its entry first moves into a section.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memdir.atomic import atomic_write
from memdir.errors import MemdirError
from memdir.frontmatter import parse
from memdir.index import (
    ENTRYPOINT_NAME,
    MAX_ENTRYPOINT_CHARS,
    MAX_ENTRYPOINT_LINES,
    SECTIONS_DIR,
    TEAM_PREFIX,
    IndexReport,
    entry_line,
    entry_link,
    index_scope,
    read_entrypoint,
)
from memdir.index import check_dir as index_check_dir
from memdir.pathsafe import open_inside
from memdir.validity import validity_of

FLAT_ENTRIES = 150  # entries MEMORY.md lists itself before it is sectioned
FLAT_CHARS = 20_000
INLINE_ENTRIES = 60  # user and feedback entries kept in a sectioned MEMORY.md
INLINE_CHARS = 9_000
SECTION_ENTRIES = 150  # per section file (each one is within the index's own limits)
SECTION_CHARS = 22_000
KINDS = ("user", "feedback", "project", "reference", "other")
_TITLES = {
    "user": "About the user",
    "feedback": "How to work (feedback)",
    "project": "Project memories",
    "reference": "References",
    "other": "Other memories",
}
_PART = re.compile(r"^(?P<kind>[a-z]+)(?:-(?P<n>[0-9]+))?\.md$")
_LINK_START = re.compile(r"^(\s*[-*]\s+\[[^\]]*\]\()")
_NOTE = "Part of the memory index: MEMORY.md lists this file. memdir keeps it, one line per memory."
_LIST_NOTE = "Part of the memory index: the parts of this section, one line each. memdir keeps it."


@dataclass(slots=True)
class _Entry:
    link: str  # relative to the scope's MEMORY.md
    line: str  # as it reads in MEMORY.md
    kind: str | None  # the memory's type when known


def _memory_link(link: str | None) -> bool:
    return (
        link is not None
        and "://" not in link
        and not link.startswith(("#", SECTIONS_DIR + "/"))
        and link.endswith(".md")
    )


def _section_files(base: Path) -> list[str]:
    """Section file names under ``base/index`` (regular files only: a FIFO is never opened)."""
    try:
        names = os.listdir(base / SECTIONS_DIR)
    except OSError:
        return []
    return sorted(n for n in names if _PART.match(n) and (base / SECTIONS_DIR / n).is_file())


def _from_section(line: str) -> str:
    """A section's entry line as MEMORY.md would hold it (``../x.md`` → ``x.md``)."""
    return _LINK_START.sub(lambda m: m.group(1), line.replace("](../", "](", 1), count=1)


def _to_section(line: str) -> str:
    return _LINK_START.sub(lambda m: m.group(1) + "../", line, count=1)


def _kind_of(root: Path, prefix: str, link: str) -> str:
    """The memory's type from its frontmatter ("other" when unreadable or unknown)."""
    try:
        fd = open_inside(Path(os.path.realpath(root)), root / prefix / link)
        with open(fd, "rb") as fh:
            meta = parse(fh.read(8192).decode("utf-8", "replace"), lenient=True).meta
    except (OSError, MemdirError):
        return "other"
    kind = str(meta.get("type") or "")
    return kind if kind in KINDS else "other"


def _read(
    root: Path, index_rel: str, whole: bool = False
) -> tuple[list[str], list[_Entry], int | None, int]:
    """(MEMORY.md's other lines, every entry, where the entries stand among the other lines,
    how many of the entries MEMORY.md lists — they come first; a line there wins over the same
    memory's line in a section). ``whole``: MEMORY.md holds every entry (it was just rewritten
    whole); the sections only say what type a memory is."""
    prefix = index_rel[: -len(ENTRYPOINT_NAME)]
    entries: dict[str, _Entry] = {}
    for name in _section_files(root / prefix):
        m = _PART.match(name)
        kind = m.group("kind") if m and m.group("kind") in KINDS else None
        for line in read_entrypoint(root, f"{prefix}{SECTIONS_DIR}/{name}").splitlines():
            raw = entry_link(line)
            if raw is None or not raw.startswith("../"):
                continue  # a heading, the note, or a listing's line for one of its parts
            flat = _from_section(line)
            link = entry_link(flat)
            if _memory_link(link) and link not in entries:
                assert link is not None
                entries[link] = _Entry(link, flat, kind)
    kinds = {link: e.kind for link, e in entries.items()}
    if whole:
        entries = {}
    listed: dict[str, _Entry] = {}  # MEMORY.md's own first: what it lists stays listed there
    others: list[str] = []
    at: int | None = None
    for line in read_entrypoint(root, index_rel).splitlines():
        link = entry_link(line)
        if link is not None and link.startswith(SECTIONS_DIR + "/"):
            at = len(others) if at is None else at
            continue
        if not _memory_link(link):
            others.append(line)
            continue
        assert link is not None
        at = len(others) if at is None else at
        entries.pop(link, None)
        listed[link] = _Entry(link, line, kinds.get(link))
    return others, [*listed.values(), *entries.values()], at, len(listed)


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _chunks(entries: list[_Entry]) -> list[list[_Entry]]:
    out: list[list[_Entry]] = []
    chars = 0
    for entry in entries:
        if not out or len(out[-1]) >= SECTION_ENTRIES or chars + len(entry.line) > SECTION_CHARS:
            out.append([])
            chars = 0
        out[-1].append(entry)
        chars += len(entry.line) + 1
    return out


def layout(
    root: Path,
    index_rel: str = ENTRYPOINT_NAME,
    *,
    drop: frozenset[str] = frozenset(),
    whole: bool = False,
    kinds: Mapping[str, str] | None = None,
) -> dict[str, str | None]:
    """What to write (text) or delete (None) so the scope of ``index_rel`` follows the rule;
    empty when it already does. ``drop``: links of memories that are gone; ``whole``: MEMORY.md
    was just rewritten with every entry (a rebuild, a dream), the sections' entries are stale;
    ``kinds``: memory types the caller knows (an import), so their files are not read again."""
    prefix = index_rel[: -len(ENTRYPOINT_NAME)]
    base = root / prefix
    sections = _section_files(base)
    others, entries, at, listed = _read(root, index_rel, whole)
    # sections keep their order and new entries join at the end, so a write rewrites one part
    in_order = [*entries[listed:], *entries[:listed]]
    entries = [e for e in entries if e.link not in drop]
    in_order = [e for e in in_order if e.link not in drop]
    lines = [e.line for e in entries]
    if not sections and len(entries) <= FLAT_ENTRIES and _size(lines) <= FLAT_CHARS:
        return {}  # flat and fitting: MEMORY.md is left exactly as it is
    place = len(others) if at is None else at
    files: dict[str, str | None] = {}
    if len(entries) <= FLAT_ENTRIES and _size(lines) <= FLAT_CHARS:
        block = lines
    else:
        for entry in entries:
            if entry.kind is None:
                known = (kinds or {}).get(entry.link)
                entry.kind = known if known in KINDS else _kind_of(root, prefix, entry.link)
        inline: list[_Entry] = []
        for entry in entries:
            fits = _size([e.line for e in inline]) + len(entry.line) <= INLINE_CHARS
            if entry.kind in ("user", "feedback") and len(inline) < INLINE_ENTRIES and fits:
                inline.append(entry)
        kept = {e.link for e in inline}
        block = [e.line for e in inline]
        for kind in KINDS:
            parts = _chunks([e for e in in_order if e.kind == kind and e.link not in kept])
            block += _kind_files(prefix, kind, parts, files)
    text_lines = [*others[:place], *block, *others[place:]]
    text = "\n".join(text_lines) + "\n" if text_lines else ""
    if text != read_entrypoint(root, index_rel):
        files[index_rel] = text
    for name in sections:
        rel = f"{prefix}{SECTIONS_DIR}/{name}"
        if rel not in files:
            files[rel] = None
        elif files[rel] == read_entrypoint(root, rel):
            del files[rel]
    return files


def _kind_files(
    prefix: str, kind: str, parts: list[list[_Entry]], files: dict[str, str | None]
) -> list[str]:
    """Write one type's section files into ``files``; MEMORY.md's line for them. One part is
    ``index/<type>.md``; more are ``index/<type>-<n>.md``, listed by ``index/<type>.md`` (so
    MEMORY.md keeps one line per type, 100,000 memories or not)."""
    if not parts:
        return []
    where = f"{prefix}{SECTIONS_DIR}/"
    lines = []
    for number, part in enumerate(parts, start=1):
        more = len(parts) > 1
        name = f"{kind}-{number}.md" if more else f"{kind}.md"
        title = _TITLES[kind] + (f", part {number} of {len(parts)}" if more else "")
        body = [f"# {title}", "", _NOTE, "", *(_to_section(e.line) for e in part)]
        files[where + name] = "\n".join(body) + "\n"
        hook = "; ".join(_title(e.line) for e in part[:4])
        lines.append(entry_line(f"{title} ({len(part)})", name, f"e.g. {hook}"))
    if len(parts) == 1:
        return [lines[0].replace(f"]({kind}.md)", f"]({SECTIONS_DIR}/{kind}.md)", 1)]
    listing = [f"# {_TITLES[kind]}", "", _LIST_NOTE, "", *lines]
    files[f"{where}{kind}.md"] = "\n".join(listing) + "\n"
    total = sum(len(part) for part in parts)
    hook = "; ".join(_title(e.line) for e in parts[0][:4])
    label = f"{_TITLES[kind]} ({total} in {len(parts)} parts)"
    return [entry_line(label, f"{SECTIONS_DIR}/{kind}.md", f"e.g. {hook}")]


def _title(line: str) -> str:
    start, end = line.find("["), line.find("](")
    return line[start + 1 : end] if 0 <= start < end else line


def write(root: Path, files: dict[str, str | None]) -> None:
    """Apply a :func:`layout`: sections first, MEMORY.md last (it points at them)."""
    for rel, text in sorted(files.items(), key=lambda kv: kv[0].endswith(ENTRYPOINT_NAME)):
        path = root / rel
        if text is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, text)
    for rel in {r.rsplit("/", 1)[0] for r, t in files.items() if t is None}:
        with contextlib.suppress(OSError):
            os.rmdir(root / rel)  # the sections dir once it is empty


def settle(
    root: Path,
    index_rel: str = ENTRYPOINT_NAME,
    *,
    drop: frozenset[str] = frozenset(),
    whole: bool = False,
) -> list[str]:
    """Lay the scope out by the rule now; the files written or removed."""
    files = layout(root, index_rel, drop=drop, whole=whole)
    write(root, files)
    return sorted(files)


def settle_for(root: Path, rel: str, text: str | None) -> list[str]:
    """After memory ``rel`` was written (``text``) or removed (None) and its MEMORY.md entry
    updated: keep its scope within the limits, and drop its line from a section when it left
    the index (removed, retired, superseded, expired)."""
    scope = index_scope(rel)
    if scope is None:
        return []
    index_rel, link = scope
    gone = text is None or not validity_of(parse(text, lenient=True).meta).is_current(
        dt.date.today()
    )
    return settle(root, index_rel, drop=frozenset({link}) if gone else frozenset())


def scopes(root: Path) -> list[str]:
    """The index files of the memory dir: MEMORY.md, and team/MEMORY.md when there is a team."""
    team = TEAM_PREFIX + ENTRYPOINT_NAME
    return [ENTRYPOINT_NAME, *([team] if (root / TEAM_PREFIX).is_dir() else [])]


def expanded(root: Path, index_rel: str = ENTRYPOINT_NAME) -> str:
    """The scope's index as one flat text (MEMORY.md with its sections' entries in place of
    their lines): what a rewrite of the whole index starts from."""
    text = read_entrypoint(root, index_rel)
    _, entries, _, listed = _read(root, index_rel)
    if not _section_files(root / index_rel[: -len(ENTRYPOINT_NAME)]):
        return text  # flat already: exactly as it is
    out: list[str] = []
    rest = [e.line for e in entries[listed:]]
    for line in text.splitlines():
        link = entry_link(line)
        if link is not None and link.startswith(SECTIONS_DIR + "/"):
            out += rest  # the sections' entries where their first line stood
            rest = []
            continue
        out.append(line)
    out += rest
    return "\n".join(out) + "\n" if out else ""


def check_dir(root: Path, memory_rels: list[str]) -> list[IndexReport]:
    """:func:`memdir.index.check_dir`, with the sections' entries counted as indexed and their
    dead links reported."""
    reports = index_check_dir(root, memory_rels)
    for report in reports:
        prefix = report.index[: -len(ENTRYPOINT_NAME)]
        _, entries, _, listed = _read(root, report.index)
        known = {e.link for e in entries}
        report.unindexed = [link for link in report.unindexed if link not in known]
        for entry in entries[listed:]:  # MEMORY.md's own were checked above
            if not (root / prefix / entry.link).is_file() and entry.link not in report.dead_links:
                report.dead_links.append(entry.link)
    return reports


def entries(root: Path, index_rel: str = ENTRYPOINT_NAME) -> list[str]:
    """Every memory link the scope's index lists, MEMORY.md's and its sections'."""
    return [e.link for e in _read(root, index_rel)[1]]


def describe(root: Path, index_rel: str = ENTRYPOINT_NAME) -> str:
    """One line on how the scope's index is organised (for ``memdir import`` and ``doctor``)."""
    prefix = index_rel[: -len(ENTRYPOINT_NAME)]
    _, found, _, listed = _read(root, index_rel)
    sections = _section_files(root / prefix)
    if not sections:
        return f"{index_rel} lists all {listed} memories"
    kinds = sorted({m.group("kind") for n in sections if (m := _PART.match(n))})
    return (
        f"{index_rel} lists {listed} memories itself and one line for each of "
        f"{', '.join(kinds)}: the other {len(found) - listed} are listed in "
        f"{len(sections)} section files under {prefix}{SECTIONS_DIR}/"
    )


def fits(text: str) -> bool:
    """A MEMORY.md text within what a prompt loads."""
    lines = text.strip().split("\n")
    return len(lines) <= MAX_ENTRYPOINT_LINES and len(text.strip()) <= MAX_ENTRYPOINT_CHARS


__all__ = [
    "FLAT_ENTRIES",
    "SECTION_ENTRIES",
    "check_dir",
    "describe",
    "entries",
    "expanded",
    "fits",
    "layout",
    "scopes",
    "settle",
    "settle_for",
    "write",
]
