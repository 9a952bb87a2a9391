"""memdir's one section in a Markdown file people own (AGENTS.md, CLAUDE.md, GEMINI.md), as text.

The file is never re-rendered: memdir's part sits between two marker lines (HTML comments, so
they do not show in rendered Markdown) and everything outside them is kept byte for byte::

    <!-- >>> memdir standing instructions (written by `memdir export agents-md`; …) -->
    ## Standing instructions (from memdir)
    …
    <!-- <<< memdir standing instructions -->

Invariants:

* Writing again replaces the lines between the markers in place, wherever the user moved them.
* Removing gives back the file as it was before the first write: the separator memdir added in
  front of the section is recorded in the begin marker (``[no-final-newline]`` when the file did
  not end with a newline; ``[new-file]`` when memdir created the file, which removal deletes).
* Markers only count at the start of a line. Anything but exactly one begin line followed by one
  end line is refused: memdir does not guess which lines are the user's.
* The file's newline style (``\\r\\n`` or ``\\n``) is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memdir.errors import BundleError

BEGIN_TAG = "<!-- >>> memdir standing instructions"
END_LINE = "<!-- <<< memdir standing instructions -->"
NEW_FILE = "new-file"
NO_FINAL_NEWLINE = "no-final-newline"
_FLAG = re.compile(r"\[([a-z-]+)\]")


@dataclass(frozen=True, slots=True)
class Span:
    start: int  # where the begin line starts
    end: int  # just past the end line's newline
    flags: frozenset[str]


def begin_line(flags: frozenset[str]) -> str:
    marks = "".join(f" [{f}]" for f in sorted(flags))
    return (
        f"{BEGIN_TAG} (written by `memdir export agents-md`; edits inside are replaced){marks} -->"
    )


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def find(text: str, where: str = "the file") -> Span | None:
    """The section's span in ``text``; None when there is none; BundleError when the markers are
    broken (a begin without an end, two sections, an end before the begin)."""
    begins: list[tuple[int, str]] = []
    ends: list[int] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if bare.startswith(BEGIN_TAG):
            begins.append((pos, bare))
        elif bare == END_LINE:
            ends.append(pos + len(line))
        pos += len(line)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] <= begins[0][0]:
        raise BundleError(
            f"{where} has {len(begins)} begin and {len(ends)} end marker(s) of memdir's section "
            "out of order; fix them by hand (memdir will not guess which lines are yours)"
        )
    start, line = begins[0]
    return Span(start, ends[0], frozenset(_FLAG.findall(line)))


def _block(flags: frozenset[str], body: str, nl: str) -> str:
    # the body's own line ends never count: only the file's newline style may appear (removal
    # reads the style back from the file)
    lines = [ln.rstrip("\r") for ln in body.rstrip("\r\n").split("\n")] if body.strip() else []
    return nl.join([begin_line(flags), *lines, END_LINE]) + nl


def upsert(text: str | None, body: str, where: str = "the file") -> str:
    """``text`` with the section set to ``body`` (``None``: the file does not exist yet)."""
    if text is None:
        return _block(frozenset({NEW_FILE}), body, "\n")
    nl = newline_of(text)
    span = find(text, where)
    if span is not None:
        return text[: span.start] + _block(span.flags, body, nl) + text[span.end :]
    if not text:
        return _block(frozenset(), body, nl)
    if text.endswith("\n"):
        return text + nl + _block(frozenset(), body, nl)
    return text + nl + nl + _block(frozenset({NO_FINAL_NEWLINE}), body, nl)


def remove(text: str, where: str = "the file") -> str | None:
    """``text`` without the section, as it was before memdir added it; ``None`` when memdir
    created the file and nothing else is in it (delete the file)."""
    span = find(text, where)
    if span is None:
        return text
    nl = newline_of(text)
    before, after = text[: span.start], text[span.end :]
    if NEW_FILE in span.flags and not before and not after:
        return None
    if before.endswith(nl + nl):
        cut = 2 if NO_FINAL_NEWLINE in span.flags and not after else 1
        before = before[: -len(nl) * cut]
    return before + after
