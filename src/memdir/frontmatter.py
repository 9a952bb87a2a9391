"""Parse and write the YAML frontmatter of memory files.

Format: an opening ``---`` line, YAML mapping, a closing ``---`` line, then the body. Tolerated: a
UTF-8 BOM, CRLF line ends, trailing spaces on fences. A file with no opening fence has no
frontmatter (the whole text is the body). An opening fence with no closing one, YAML that does not
parse, or YAML that is not a mapping raises :class:`FrontmatterError` naming the file and line.

Round-trip invariant: ``parse(dump(meta, body)).body == body`` byte for byte; only the fence lines
and the YAML block are memdir's to rewrite.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from memdir.errors import FrontmatterError
from memdir.model import Memory

BOM = "\ufeff"
FENCE = "---"

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass(frozen=True, slots=True)
class Parsed:
    meta: dict[str, Any]
    body: str
    has_frontmatter: bool


def _is_fence(line: str) -> bool:
    return line.rstrip("\r\n").rstrip(" \t") == FENCE


def _normalise(value: Any) -> Any:
    # YAML turns 2026-11-29 into a date; memdir keeps dates as ISO strings everywhere.
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    return value


def _load_yaml(block: str, source: Path | str | None) -> dict[str, Any]:
    try:
        data = yaml.load(block, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None  # +1 for 1-based, +1 for the fence
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontmatterError(
            f"invalid YAML in frontmatter: {problem}", path=source, line=line
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(
            f"frontmatter must be a mapping, got {type(data).__name__}", path=source, line=2
        )
    result = _normalise(data)
    assert isinstance(result, dict)
    return result


def parse_lines(lines: Iterable[str], *, source: Path | str | None = None) -> dict[str, Any]:
    """Parse only the frontmatter from the first lines of a file (used by scans).

    ``lines`` keep their line ends. No opening fence: ``{}``. No closing fence within the
    given lines: :class:`FrontmatterError`.
    """
    it = iter(lines)
    first = next(it, None)
    if first is None:
        return {}
    first = first.removeprefix(BOM)
    if not _is_fence(first):
        return {}
    block: list[str] = []
    for line in it:
        if _is_fence(line):
            return _load_yaml("".join(block), source)
        block.append(line)
    raise FrontmatterError("frontmatter opened with '---' is never closed", path=source, line=1)


def parse(text: str, *, source: Path | str | None = None) -> Parsed:
    """Split ``text`` into frontmatter mapping and body."""
    text = text.removeprefix(BOM)
    lines = text.splitlines(keepends=True)
    if not lines or not _is_fence(lines[0]):
        return Parsed({}, text, False)
    for i in range(1, len(lines)):
        if _is_fence(lines[i]):
            meta = _load_yaml("".join(lines[1:i]), source)
            return Parsed(meta, "".join(lines[i + 1 :]), True)
    raise FrontmatterError("frontmatter opened with '---' is never closed", path=source, line=1)


def dump(meta: Mapping[str, Any], body: str) -> str:
    """Render frontmatter + body. An empty mapping still gets fences (memdir files always do)."""
    block = yaml.dump(
        dict(meta),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1_000_000,
    )
    if block.strip() == "{}":
        block = ""
    return f"{FENCE}\n{block}{FENCE}\n{body}"


def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    return str(value)


def to_memory(rel: str, parsed: Parsed) -> Memory:
    """Build a :class:`Memory` from parsed text; unknown keys go to ``extra``."""
    meta = dict(parsed.meta)
    name = _str_or_none(meta.pop("name", None)) or Path(rel).stem
    description = _str_or_none(meta.pop("description", None)) or ""
    mtype = _str_or_none(meta.pop("type", None))
    created = _str_or_none(meta.pop("created", None))
    updated = _str_or_none(meta.pop("updated", None))
    return Memory(
        path=rel,
        name=name,
        description=description,
        type=mtype,
        body=parsed.body,
        created=created,
        updated=updated,
        extra=meta,
    )


def parse_memory(text: str, rel: str, *, source: Path | str | None = None) -> Memory:
    return to_memory(rel, parse(text, source=source if source is not None else rel))


def dump_memory(memory: Memory) -> str:
    return dump(memory.frontmatter(), memory.body)
