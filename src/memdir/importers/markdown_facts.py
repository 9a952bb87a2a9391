"""Bullets of a Markdown section as facts: what Gemini CLI's ``save_memory`` and Codex's
``MEMORY.md`` keep (one ``- fact`` line each, continuation lines indented under it)."""

from __future__ import annotations

import re
from collections.abc import Iterator

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^[-*+]\s+(?:\[[ xX]\]\s+)?(.*)$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")


def bullets(text: str, *, section: str | None = None) -> Iterator[tuple[str, str]]:
    """(heading path, bullet text) for each top-level bullet; with ``section``, only those under
    the heading of that title (until a heading of the same or a higher level, or a ``---``)."""
    headings: list[tuple[int, str]] = []
    inside = section is None
    level_of_section = 0
    current: list[str] | None = None
    in_fence = False

    def flush() -> Iterator[tuple[str, str]]:
        if current:
            path = " / ".join(h for _, h in headings)
            yield path, " ".join(" ".join(current).split())

    for raw in text.splitlines():
        line = raw.rstrip()
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if m := _HEADING.match(line):
            yield from flush()
            current = None
            level, title = len(m.group(1)), m.group(2)
            if section is not None:
                if title.strip().casefold() == section.casefold():
                    inside, level_of_section = True, level
                elif inside and level <= level_of_section:
                    inside = False
            headings = [h for h in headings if h[0] < level] + [(level, title)]
            continue
        if line.strip() == "---":  # a thematic break ends a bullet (and a named section)
            yield from flush()
            current = None
            inside = section is None
            continue
        if not inside:
            continue
        if m := _BULLET.match(line):
            yield from flush()
            current = [m.group(1)]
        elif current is not None and line.startswith((" ", "\t")) and line.strip():
            current.append(line.strip())
        elif not line.strip():
            yield from flush()
            current = None
    yield from flush()
