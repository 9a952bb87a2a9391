"""The Memories list without a server: filters, sorts, validity labels, pages, chains."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memdir.model import MemoryHeader
from memdir.ui.listing import Filters, Rows, chain, listing

TODAY = dt.date(2026, 12, 1)


def header(rel: str, mtime: float, **validity: str) -> MemoryHeader:
    return MemoryHeader(
        filename=rel,
        path=Path("/m") / rel,
        mtime=mtime,
        description=f"about {rel}",
        type="user" if "u" in rel else "project",
        name=rel.removesuffix(".md").upper(),
        validity=tuple(sorted(validity.items())),
    )


HEADERS = [
    header("u-a.md", 5),
    header("p-b.md", 4, expires="2026-12-31"),
    header("p-c.md", 3, expires="2026-01-01"),
    header("u-d.md", 2, superseded_by="u-a.md"),
    header("p-e.md", 1, retired="2026-11-30", retired_reason="moved"),
    header("logs/2026/12/2026-12-01.md", 6),
]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("all", ["u-a.md", "p-b.md", "p-c.md", "u-d.md", "p-e.md"]),
        ("current", ["u-a.md", "p-b.md"]),
        ("expires", ["p-b.md"]),
        ("expired", ["p-c.md"]),
        ("superseded", ["u-d.md"]),
        ("retired", ["p-e.md"]),
    ],
)
def test_validity_filters(status: str, expected: list[str]) -> None:
    found = listing(HEADERS, today=TODAY, filters=Filters(status=status))
    assert [r.header.filename for r in found.rows] == expected
    assert found.total == 5  # daily logs are not memories


def test_notes_say_why() -> None:
    notes = {r.header.filename: r.note for r in listing(HEADERS, today=TODAY).rows}
    assert notes["p-b.md"] == "expires 2026-12-31"
    assert notes["p-c.md"] == "expired on 2026-01-01"
    assert notes["u-d.md"] == "superseded by u-a.md"
    assert notes["p-e.md"] == "moved"


@pytest.mark.parametrize(
    ("sort", "first"), [("newest", "u-a.md"), ("oldest", "p-e.md"), ("name", "p-b.md")]
)
def test_sorts(sort: str, first: str) -> None:
    assert (
        listing(HEADERS, today=TODAY, filters=Filters(sort=sort)).rows[0].header.filename == first
    )


def test_text_and_type_filters_and_pages() -> None:
    assert [
        r.header.filename
        for r in listing(HEADERS, today=TODAY, filters=Filters(text="ABOUT U-A")).rows
    ] == ["u-a.md"]
    assert {
        r.header.type for r in listing(HEADERS, today=TODAY, filters=Filters(type_="user")).rows
    } == {"user"}
    paged = listing(HEADERS, today=TODAY, filters=Filters(page=9), page_size=2)
    assert (paged.page, paged.pages, len(paged.rows)) == (3, 3, 1)


def test_rows_are_reused_until_the_headers_change() -> None:
    rows = Rows()
    first = rows.sorted(HEADERS, TODAY, "newest")
    assert rows.sorted(HEADERS, TODAY, "newest") is first
    changed = [*HEADERS, header("u-z.md", 9)]
    assert rows.sorted(changed, TODAY, "newest")[0].header.filename == "u-z.md"


def test_chain_stops_at_a_cycle() -> None:
    assert chain("a.md", {"a.md": "b.md", "b.md": "c.md"}) == ["a.md", "b.md", "c.md"]
    assert chain("a.md", {"a.md": "b.md", "b.md": "a.md"}) == ["a.md", "b.md"]


def test_filters_from_a_query_string_tolerate_junk() -> None:
    f = Filters.from_query({"q": "pnpm", "page": "x", "sort": "name"})
    assert (f.text, f.page, f.sort, f.status) == ("pnpm", 1, "name", "all")
    assert (
        listing(HEADERS, today=TODAY, filters=Filters(sort="nonsense")).rows[0].header.filename
        == "u-a.md"
    )
