"""Request words against applies_when situations: stems match, words of any request do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.recall.applies_match import AppliesMatcher
from memdir.recall.memory_text import read_memory_text

DEPENDENCY = "adding, installing or upgrading a dependency, package or library"
EXPLAIN = "explaining, describing or teaching a concept; walking through how something works"


@pytest.mark.parametrize(
    ("query", "situations", "matched"),
    [
        ("Install the charting library", [DEPENDENCY], True),
        ("Bring a date-picker dependency into the console", [DEPENDENCY], True),
        ("Write a haiku about autumn", ["writing shell scripts and automation"], False),
        ("Explain what a closure is", [EXPLAIN], True),  # "explain" is a BM25 stopword
        # A question's form is not a situation word: it matched nearly every question.
        ("What's a good name for a list of users?", [EXPLAIN], False),
        ("Teach me what a pointer is", [EXPLAIN], True),
        ("Convert 72 Fahrenheit to Celsius", [DEPENDENCY, EXPLAIN], False),
    ],
)
def test_match(query: str, situations: list[str], matched: bool) -> None:
    matcher = AppliesMatcher()
    found = matcher.match(matcher.query_terms(query), situations)
    assert found.specific is matched
    assert bool(found.situations) is matched


def test_best_counts_words_of_one_situation() -> None:
    """Two request words in one situation is a match; one word in each of two is chance."""
    matcher = AppliesMatcher()
    secrets = "handling passwords, tokens, API keys, credentials or other secrets"
    scripts = "writing shell scripts and automation"
    found = matcher.match(
        matcher.query_terms("handle Ctrl-C in a Python script"), [secrets, scripts]
    )
    assert len(found.words) == 2 and found.best == 1
    found = matcher.match(
        matcher.query_terms("Install the charting library"), [secrets, DEPENDENCY]
    )
    assert found.best == 2 and found.situations == (DEPENDENCY,)


def test_only_a_stored_list_joins_the_bm25_text(tmp_path: Path) -> None:
    """A dir nobody reindexed keeps its ranking; the rules' list is evidence only (LoCoMo)."""
    plain = tmp_path / "plain.md"
    plain.write_text("---\nname: pnpm\ndescription: the docs use pnpm\ntype: feedback\n---\nbody\n")
    text = read_memory_text(plain, "plain.md")[0]
    assert text.applies_when and not text.stored_when
    assert "dependency" not in text.for_lexical()
    stored = tmp_path / "stored.md"
    stored.write_text(plain.read_text().replace("type:", "applies_when: [adding a library]\ntype:"))
    text = read_memory_text(stored, "stored.md")[0]
    assert "adding a library" in text.for_lexical() and "dependency" not in text.for_lexical()
    # The rules' situations stay evidence, before the stored ones (docs/recall.md).
    rules = read_memory_text(plain, "plain.md")[0].applies_when
    assert text.applies_when == (*rules, "adding a library")
    assert read_memory_text(stored, "stored.md", applies=False)[0].applies_when == ()
