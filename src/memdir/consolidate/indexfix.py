"""Repair one MEMORY.md so it is correct and within its limits.

Rules, in order:

* hand-written lines (anything that is not an entry pointing at a local ``.md`` file) stay
  where they are, byte for byte;
* an entry for a current memory is regenerated in place from the memory's frontmatter (title and
  a hook cut to keep the line near 150 characters); later entries for the same file are dropped;
* entries for missing files (dead links) and for retired/expired/superseded memories are dropped;
* current memories without an entry get one at the end, newest first;
* when the result would pass 200 lines or 25,000 characters, the oldest entries are left out and
  one line says how many, so the index always loads whole (recall still finds every memory —
  it does not depend on the index).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memdir import index

TITLE_CHARS = 60
NOTE_MARK = "older memories are not listed here"
LINE_BUDGET = index.MAX_ENTRYPOINT_LINES
CHAR_BUDGET = index.MAX_ENTRYPOINT_CHARS - 1_000  # headroom for a hand edit before the next dream


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """A current memory in this index's scope: its link (relative to the index), title, hook."""

    link: str
    title: str
    hook: str
    order: tuple[int, float, str]  # larger = newer: (day ordinal, mtime, link) — no ties


@dataclass
class IndexRepair:
    text: str
    dead: list[str] = field(default_factory=list)
    dropped_inactive: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    shortened: int = 0
    left_out: int = 0


def _line(entry: IndexEntry) -> str:
    title = " ".join(entry.title.split())
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip() + "…"
    return index.entry_line(title, entry.link, entry.hook)


def _is_memory_entry(line: str) -> str | None:
    link = index.entry_link(line)
    if link is None or "://" in link or link.startswith("#") or not link.endswith(".md"):
        return None
    return link


def repair(
    text: str, current: Sequence[IndexEntry], existing: set[str], *, fit: bool = True
) -> IndexRepair:
    """The repaired index for ``text``; ``existing`` holds every file link that exists.
    ``fit``: leave the oldest entries out to stay within the limits (without it the caller
    keeps the index whole in sections, :mod:`memdir.index_sections`)."""
    by_link = {e.link: e for e in current}
    out: list[tuple[str, str | None]] = []  # (line, link of the entry or None)
    result = IndexRepair(text="")
    seen: set[str] = set()
    for line in text.splitlines():
        link = _is_memory_entry(line)
        if link is None:
            if NOTE_MARK not in line:  # the previous dream's note is rewritten below if needed
                out.append((line, None))
            continue
        if link in seen:
            result.duplicates.append(link)
            continue
        seen.add(link)
        entry = by_link.get(link)
        if entry is None:
            (result.dead if link not in existing else result.dropped_inactive).append(link)
            continue
        fresh = _line(entry)
        if len(line) > index.ENTRY_TARGET_CHARS and len(fresh) < len(line):
            result.shortened += 1
        out.append((fresh, link))
    unseen = [e for e in current if e.link not in seen]
    missing = sorted(unseen, key=lambda e: e.order, reverse=True)
    if missing:
        while out and not out[-1][0].strip():
            out.pop()
        out += [(_line(e), e.link) for e in missing]
        result.added = [e.link for e in missing]
    if fit:
        out = _fit(out, by_link, result)
    result.text = "\n".join(line for line, _ in out).rstrip("\n") + "\n" if out else ""
    return result


def _fit(
    lines: list[tuple[str, str | None]], by_link: dict[str, IndexEntry], result: IndexRepair
) -> list[tuple[str, str | None]]:
    def size(rows: list[tuple[str, str | None]]) -> tuple[int, int]:
        return len(rows), sum(len(r[0]) + 1 for r in rows)

    n, chars = size(lines)
    if n <= LINE_BUDGET and chars <= CHAR_BUDGET:
        return lines
    pairs = [(line, link) for line, link in lines if link is not None]
    entries = sorted(pairs, key=lambda r: by_link[r[1]].order)
    lengths = {link: len(line) + 1 for line, link in entries}
    drop: set[str] = set()
    note_len = 100
    for _, link in entries:  # oldest first
        if n + 1 <= LINE_BUDGET and chars + note_len <= CHAR_BUDGET:
            break
        assert link is not None
        drop.add(link)
        n -= 1
        chars -= lengths[link]
    kept = [r for r in lines if r[1] not in drop]
    result.left_out = len(drop)
    note = f"- _{len(drop)} {NOTE_MARK} to keep this index within its limits; they are still "
    note += "recalled and shown by `memdir list`._"
    return [*kept, (note, None)]
