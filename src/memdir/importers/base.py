"""What every import source hands the pipeline: :class:`Item`, one memory to be, with its
provenance; and the bounded readers that keep a hostile source from costing more than its size.

Invariants:

* A source only reads. It yields items (or items already marked ``skip`` with the reason the
  source itself knows, e.g. claude-mem's ``bugfix`` records are git history); deciding what is
  kept, merged or refused is the pipeline's (:mod:`memdir.importers.plan`).
* ``source_id`` is stable across runs for the same fact in the same source (a row id, an entity
  name, a file path), so a re-run recognises what it imported before.
* A source whose *structure* is unreadable (another schema, a newer version, JSON nested past
  :data:`MAX_JSON_DEPTH`) raises :class:`~memdir.errors.ImportSourceError` before the pipeline
  writes anything; a single bad *record* becomes a skipped item, never a failed import.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memdir.errors import ImportSourceError, NotRegularFileError
from memdir.model import MemoryType
from memdir.pathsafe import open_regular

MAX_ITEM_CHARS = 64 * 1024  # a memory is a note, not a document: larger records are skipped
MAX_SOURCE_BYTES = 256 * 1024 * 1024
MAX_JSON_DEPTH = 64


@dataclass(slots=True)
class Item:
    """One memory-to-be. ``name`` states the fact, ``description`` says when it matters."""

    source: str
    source_id: str
    type: MemoryType
    name: str
    description: str
    body: str
    created: str | None = None  # ISO date from the source, when it has one
    skip: str | None = None  # set by the source: why this record is not a memory to keep
    filter: bool = True  # False: already in memory form (claude-code), not re-judged by the rules
    fact: str = ""  # the source's own words the rules judge (default: the body)
    extra: dict[str, Any] = field(default_factory=dict)


class Source(Protocol):
    """An import source: a name for the CLI, where it usually lives, and a reader."""

    name: str

    def default_path(self, home: Path, env: Mapping[str, str]) -> Path:
        """Where the tool keeps it for this user (``env``: the tool's own location variables)."""
        ...

    def read(self, path: Path) -> Iterator[Item]: ...


def _open_source(path: Path, what: str) -> int:
    """A descriptor of the regular file at ``path``, never blocking; a clear error for a
    missing file, a directory or a FIFO, socket or device."""
    try:
        return open_regular(path)
    except FileNotFoundError:
        raise ImportSourceError(f"no {what} at {path}") from None
    except NotRegularFileError as exc:
        raise ImportSourceError(str(exc)) from None
    except IsADirectoryError:
        raise ImportSourceError(f"{path} is a directory, not a {what}") from None


def read_text(path: Path, what: str) -> str:
    """A source file as text, bounded; a clear error for a missing, special or non-UTF-8 file."""
    with open(_open_source(path, what), "rb") as fh:
        data = fh.read(MAX_SOURCE_BYTES)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportSourceError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def text_lines(path: Path, what: str) -> Iterator[str]:
    """A JSONL source's lines, read as they come (a 50 MB file is not held twice in memory);
    the errors of :func:`read_text`, a non-UTF-8 line named by its number."""
    fd = _open_source(path, what)
    total, n = 0, 0
    with open(fd, "rb") as fh:
        # bounded per line too: one endless line must not be read whole before the check
        while raw := fh.readline(MAX_SOURCE_BYTES - total + 1):
            n += 1
            total += len(raw)
            if total > MAX_SOURCE_BYTES:
                raise ImportSourceError(f"{path}: over {MAX_SOURCE_BYTES >> 20} MB; not imported")
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise ImportSourceError(
                    f"{path}:{n}: not UTF-8 text (byte {exc.start} of the line)"
                ) from None
            yield line.rstrip("\r\n")


_OPENERS = frozenset(b"[{")
_CLOSERS = frozenset(b"]}")


def _check_depth(text: str, path: Path) -> None:
    """Refuse JSON nested past :data:`MAX_JSON_DEPTH` in linear time, before ``json`` recurses."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return  # it cannot nest deeper than it has openers (the common case, at C speed)
    depth = 0
    in_string = escaped = False
    for ch in text.encode("utf-8", "surrogatepass"):
        if in_string:
            if escaped:
                escaped = False
            elif ch == 0x5C:
                escaped = True
            elif ch == 0x22:
                in_string = False
        elif ch == 0x22:
            in_string = True
        elif ch in _OPENERS:
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise ImportSourceError(
                    f"{path}: JSON nests deeper than {MAX_JSON_DEPTH} levels; not a memory export"
                )
        elif ch in _CLOSERS:
            depth -= 1


def load_json(text: str, path: Path, *, line: int | None = None) -> Any:
    """Parse JSON with a depth bound; errors name the file (and line for JSONL)."""
    where = f"{path}:{line}" if line is not None else str(path)
    try:
        _check_depth(text, Path(where))
        return json.loads(text)
    except ImportSourceError:
        raise
    except (ValueError, RecursionError) as exc:
        raise ImportSourceError(f"{where}: not valid JSON ({str(exc).splitlines()[0]})") from None


_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


def text_problem(*texts: str) -> str | None:
    """Why these strings cannot become a memory (NUL, lone surrogate, too long), or None."""
    total = 0
    for text in texts:
        total += len(text)
        if m := _BAD_CHARS.search(text):
            if m.group(0) == "\x00":
                return "holds NUL characters"
            return "holds a lone surrogate (not valid Unicode)"
    if total > MAX_ITEM_CHARS:
        return f"{total} characters, over the {MAX_ITEM_CHARS}-character limit for one memory"
    return None


def one_line(text: str, limit: int = 150) -> str:
    """``text`` flattened to one line, cut at a word near ``limit`` characters."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    return flat[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def first_sentence(text: str, limit: int = 150) -> str:
    flat = " ".join(str(text).split())
    m = re.search(r"(?<=[.!?])\s", flat)
    return one_line(flat[: m.start()] if m else flat, limit)


def title_of(text: str, words: int = 12) -> str:
    """A name that states the fact: its first sentence when short, else its first clause, else
    its first words; never a trailing stop or a dangling comma."""
    head = first_sentence(text, 300).rstrip(".!?…")
    parts = head.split()
    cut = False
    if len(parts) > words:
        clause = re.split(r"[,;:]\s|\s\(|\s[–—-]\s", head, maxsplit=1)[0].split()
        cut = not 4 <= len(clause) <= words
        parts = parts[: words - 2] if cut else clause
    while cut and len(parts) > 3 and parts[-1].lower().strip(",;:") in _DANGLING:
        parts.pop()  # "User is a data scientist and fairly" → "… a data scientist…"
    title = " ".join(parts).rstrip(",;:") + ("…" if cut else "")
    return title if title.strip("…") else "Imported memory"


# words a name cut short must not end on: it would read as a sentence broken off
_DANGLING = frozenset(
    """a an the and or but nor of to in on at by for with from as than that which who whose
    is are was were be been being very fairly quite rather really so too more most less
    not no his her its their our your my this these those""".split()  # noqa: SIM905
)


def iso_date(value: object) -> str | None:
    """The ``YYYY-MM-DD`` of an ISO timestamp or epoch seconds/milliseconds, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        import datetime as dt

        seconds = value / 1000 if value > 10**11 else value
        try:
            return dt.datetime.fromtimestamp(seconds, dt.UTC).date().isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and re.match(r"\d{4}-\d{2}-\d{2}", value):
        return value[:10]
    return None
