"""The memory list as the Memories page shows it: filter, sort, validity, one page at a time.

Fast at 10,000 memories: the rows (validity and a folded search text per memory) and each sort
order are computed once per header list — the header tracker hands out the same list object
while nothing changed — so a request is one substring pass over the sorted rows and one page of
template. Tested without a server.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
    text: str = ""  # name, description and file name, case-folded, for the text filter

    @property
    def label(self) -> str:
        if self.status == "current" and self.note:
            return "expires"
        return self.status


@dataclass(frozen=True, slots=True)
class Filters:
    """What the user asked the list for (the query string of the Memories page)."""

    text: str = ""
    type_: str = ""
    status: str = "all"
    sort: str = "newest"
    page: int = 1

    @classmethod
    def from_query(cls, q: Mapping[str, str]) -> Filters:
        try:
            page = int(q.get("page", "1"))
        except ValueError:
            page = 1
        return cls(
            text=q.get("q", ""),
            type_=q.get("type", ""),
            status=q.get("status", "all"),
            sort=q.get("sort", "newest"),
            page=page,
        )


@dataclass(frozen=True, slots=True)
class Listing:
    rows: list[Row]
    total: int  # memories in the dir
    matched: int  # after the filters
    page: int
    pages: int


def row_of(header: MemoryHeader, today: dt.date) -> Row:
    h = header
    text = f"{h.name or ''}\n{h.description or ''}\n{h.filename}".casefold()
    if not header.validity:  # most memories: no validity keys, current forever
        return Row(header, "current", "", text)
    validity = header_validity(header)
    status = validity.status(today)
    if status == "current":
        note = f"expires {validity.expires}" if validity.expires else ""
    else:
        note = validity.reason(today)
    return Row(header, status, note, text)


def _matches(row: Row, words: Sequence[str], type_: str, status: str) -> bool:
    h = row.header
    if type_ and (h.type or "") != type_:
        return False
    if status not in ("", "all") and row.label != status and row.status != status:
        return False
    return all(w in row.text for w in words)


def _key(sort: str) -> tuple[Callable[[Row], Any], bool]:
    if sort == "oldest":
        return (lambda r: r.header.mtime), False
    if sort == "name":
        return (lambda r: (r.header.name or r.header.filename).casefold()), False
    if sort == "type":
        return (lambda r: (r.header.type or "~", -r.header.mtime)), False
    return (lambda r: r.header.mtime), True


class Rows:
    """The rows of one header list and its sort orders, computed once and reused."""

    def __init__(self) -> None:
        self._headers: list[MemoryHeader] | None = None
        self._today: dt.date | None = None
        self._rows: list[Row] = []
        self._orders: dict[str, list[Row]] = {}
        self._lock = threading.Lock()  # requests run in a thread pool

    def sorted(self, headers: list[MemoryHeader], today: dt.date, sort: str) -> list[Row]:
        with self._lock:
            return self._sorted(headers, today, sort)

    def _sorted(self, headers: list[MemoryHeader], today: dt.date, sort: str) -> list[Row]:
        if headers is not self._headers or today != self._today:
            self._headers, self._today, self._orders = headers, today, {}
            # daily logs are not memories: left out of the list
            self._rows = [row_of(h, today) for h in headers if not h.filename.startswith("logs/")]
        if sort not in self._orders:
            key, reverse = _key(sort)
            self._orders[sort] = sorted(self._rows, key=key, reverse=reverse)
        return self._orders[sort]

    @property
    def total(self) -> int:
        return len(self._rows)


def listing(
    headers: list[MemoryHeader],
    *,
    today: dt.date,
    filters: Filters = Filters(),
    page_size: int = PAGE_SIZE,
    rows: Rows | None = None,
) -> Listing:
    """One page of the filtered, sorted memories (``rows`` keeps work between calls)."""
    f = filters
    rows = rows or Rows()
    ordered = rows.sorted(headers, today, f.sort if f.sort in SORTS else "newest")
    words = f.text.casefold().split()
    if words or f.type_ or f.status not in ("", "all"):
        ordered = [r for r in ordered if _matches(r, words, f.type_, f.status)]
    pages = max(1, -(-len(ordered) // page_size))
    page = min(max(1, f.page), pages)
    start = (page - 1) * page_size
    return Listing(ordered[start : start + page_size], rows.total, len(ordered), page, pages)


def chain(start: str, superseded_by: dict[str, str], limit: int = 20) -> list[str]:
    """``start`` and the memories that replaced it, in order (a cycle stops the walk)."""
    out = [start]
    while (nxt := superseded_by.get(out[-1])) and nxt not in out and len(out) <= limit:
        out.append(nxt)
    return out
