"""The dependency-free recall fallback: selective, rare words first, newest on ties."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.model import MemoryHeader
from memdir.recall.keyword import KeywordSelector, words


def header(
    filename: str, description: str, mtime: float = 0.0, name: str | None = None
) -> MemoryHeader:
    return MemoryHeader(filename, Path("/m") / filename, mtime, description, "user", name)


HEADERS = [
    header("coffee.md", "user takes oat milk in coffee", 1.0),
    header("tea.md", "user drinks green tea in the afternoon", 2.0),
    header("deploy.md", "deploys frozen on Fridays", 3.0, name="Release freeze"),
    header("milk_old.md", "milk allergy note", 0.5),
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what does the user put in coffee?", ["coffee.md", "tea.md"]),
        ("milk", ["coffee.md", "milk_old.md"]),  # same score: newer first
        ("can we deploy on friday", ["deploy.md"]),
        ("release freeze", ["deploy.md"]),
        ("old milk", ["milk_old.md", "coffee.md"]),  # the the filename counts: rarer words win
        ("zebra", []),
        ("what is the", []),  # only stopwords
    ],
)
async def test_select(query: str, expected: list[str]) -> None:
    chosen = await KeywordSelector().select(query, HEADERS)
    assert [s.filename for s in chosen] == expected


async def test_limit_and_only_given_headers() -> None:
    chosen = await KeywordSelector().select("user", HEADERS, limit=1)
    assert [s.filename for s in chosen] == ["tea.md"]
    assert await KeywordSelector().select("user", HEADERS, limit=0) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Deploys on Fridays!", {"deploy", "friday"}), ("the class", {"class"}), ("", set())],
)
def test_words(text: str, expected: set[str]) -> None:
    assert words(text) == expected
