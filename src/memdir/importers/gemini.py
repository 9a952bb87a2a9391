"""``memdir import gemini [GEMINI.md]``: the bullets Gemini CLI's ``save_memory`` tool appends
under ``## Gemini Added Memories`` (in ``~/.gemini/GEMINI.md``; newer versions also in a
project's ``GEMINI.md``). Everything else in the file is the user's own context, not memories,
and is left alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memdir.errors import ImportSourceError
from memdir.importers.base import Item, read_text
from memdir.importers.facts import fact_item
from memdir.importers.markdown_facts import bullets
from memdir.sameness import normalise

SECTION = "Gemini Added Memories"


class GeminiSource:
    name = "gemini"

    def default_path(self, home: Path) -> Path:
        return home / ".gemini" / "GEMINI.md"

    def read(self, path: Path) -> Iterator[Item]:
        text = read_text(path, "GEMINI.md")
        if f"## {SECTION}".casefold() not in text.casefold():
            raise ImportSourceError(f"{path} has no '## {SECTION}' section")
        for _, fact in bullets(text, section=SECTION):
            yield fact_item(
                self.name,
                f"{path.name}:{normalise(fact)[:80]}",
                fact,
                origin=f"Gemini CLI's saved memories ({path.name})",
            )
