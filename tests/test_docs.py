"""Every CLI command word is documented in the README's command table (sqlite-utils' test_docs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memdir.cli.main import _GROUPS

README = Path(__file__).resolve().parents[1] / "README.md"
WORDS = sorted({word for words in _GROUPS.values() for word in words})


def _table_words() -> set[str]:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("### Commands") :].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    cells = [re.split(r"(?<!\\)\|", row)[1] for row in rows]  # `\|` inside a cell is text
    return {w for cell in cells for w in re.findall(r"[a-z][a-z-]*", cell)}


@pytest.mark.parametrize("word", WORDS)
def test_command_is_in_the_readme_table(word: str) -> None:
    assert word in _table_words(), f"`memdir {word}` is missing from README's command table"
