"""The memory list as the Memories page shows it: filter, sort, validity, one page at a time.

Pure functions over scanned headers, so the list stays fast at 10,000 memories (one scan from
the header cache, a filter, a sort, and only one page rendered) and is tested without a server.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memdir.model import MemoryHeader
from memdir.validity import header_validity

SORTS = ("newest", "oldest", "name", "type")
STATUSES = ("all", "current", "expires", "expired", "superseded", "retired")
PAGE_SIZE = 100


@dataclass(frozen=True, slots=True)
class Row:
    header: MemoryHeader
    status: str  # current / expired / superseded / retired
    note: str  # "expires 2026-12-31", "superseded by x.md", a retirement reason

    @property
    def label(self) -> str:
        if self.status == "current" and self.note:
            return "expires"
        return self.status


@dataclass(frozen=True, slots=True)
class Listing:
    rows: list[Row]
    total: int  # memories in the dir
    matched: int  # after the filters
    page: int
    pages: int


def row_of(header: MemoryHeader, today: dt.date) -> Row:
    validity = header_validity(header)
    status = validity.status(today)
    if status == "current":
        note = f"expires {validity.expires}" if validity.expires else ""
    else:
        note = validity.reason(today)
    return Row(header, status, note)


def _matches(row: Row, words: Sequence[str], type_: str, status: str) -> bool:
    h = row.header
    if type_ and (h.type or "") != type_:
        return False
    if status not in ("", "all") and row.label != status and row.status != status:
        return False
    if not words:
        return True
    hay = f"{h.name or ''}\n{h.description or ''}\n{h.filename}".casefold()
    return all(w in hay for w in words)


def _key(sort: str) -> tuple[object, bool]:
    if sort == "oldest":
        return (lambda r: r.header.mtime), False
    if sort == "name":
        return (lambda r: (r.header.name or r.header.filename).casefold()), False
    if sort == "type":
        return (lambda r: (r.header.type or "~", -r.header.mtime)), False
    return (lambda r: r.header.mtime), True


def listing(
    headers: Iterable[MemoryHeader],
    *,
    today: dt.date,
    text: str = "",
    type_: str = "",
    status: str = "all",
    sort: str = "newest",
    page: int = 1,
    page_size: int = PAGE_SIZE,
) -> Listing:
    """One page of the filtered, sorted memories (daily logs are not memories: left out)."""
    all_rows = [row_of(h, today) for h in headers if not h.filename.startswith("logs/")]
    words = text.casefold().split()
    rows = [r for r in all_rows if _matches(r, words, type_, status)]
    key, reverse = _key(sort if sort in SORTS else "newest")
    rows.sort(key=key, reverse=reverse)  # type: ignore[arg-type]
    pages = max(1, -(-len(rows) // page_size))
    page = min(max(1, page), pages)
    start = (page - 1) * page_size
    return Listing(rows[start : start + page_size], len(all_rows), len(rows), page, pages)


def chain(start: str, superseded_by: dict[str, str], limit: int = 20) -> list[str]:
    """``start`` and the memories that replaced it, in order (a cycle stops the walk)."""
    out = [start]
    while (nxt := superseded_by.get(out[-1])) and nxt not in out and len(out) <= limit:
        out.append(nxt)
    return out
