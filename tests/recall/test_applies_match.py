"""Request words against applies_when situations: stems match, words of any request do not."""

from __future__ import annotations

import pytest

from memdir.recall.applies_match import AppliesMatcher

DEPENDENCY = "adding, installing or upgrading a dependency, package or library"
EXPLAIN = "explaining, describing or teaching a concept; walking through how something works"


@pytest.mark.parametrize(
    ("query", "situations", "matched"),
    [
        ("Install the charting library", [DEPENDENCY], True),
        ("Bring a date-picker dependency into the console", [DEPENDENCY], True),
        ("Write a haiku about autumn", ["writing shell scripts and automation"], False),
        ("Explain what a closure is", [EXPLAIN], True),  # "explain" is a BM25 stopword
        ("What is a mutex?", [EXPLAIN], True),  # a concept question asks for an explanation
        ("Convert 72 Fahrenheit to Celsius", [DEPENDENCY, EXPLAIN], False),
    ],
)
def test_match(query: str, situations: list[str], matched: bool) -> None:
    matcher = AppliesMatcher()
    found = matcher.match(matcher.query_terms(query), situations)
    assert found.specific is matched
    assert bool(found.situations) is matched
