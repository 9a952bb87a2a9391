"""The session notes file: a 10-section Markdown template, kept current during one session.

Layout (reference §6): ``<projects>/<slug>/<session id>/session-memory/summary.md``, directory
0700, file 0600, created exclusively from the template (a concurrent creator never clobbers
notes that already exist). Each section is a ``# Header`` line and an italic description line
(``_..._``); what follows, up to the next header, is the section's body.

Invariants:

* :func:`structure_problems` is the one definition of "the structure is intact": every template
  header and description line is present, in order, and there is no other ``# `` header. Both
  updaters are held to it; the LLM updater's result is rolled back when it fails.
* A user template (``template.md`` in the config dir) that does not carry the 10 standard
  headers is not used: the built-in template is, and the reason is logged — the offline updater
  and the compaction summary address sections by those headers.
* Reading never fails on content: a notes file edited by hand into any shape parses into
  whatever sections are recognisable (``Notes.intact`` says whether it still matches).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.atomic import DIR_MODE, FILE_MODE, atomic_write, ensure_dir
from memdir.pathsafe import read_regular
from memdir.session.tokens import text_tokens

log = logging.getLogger(__name__)

SECTION_MAX_TOKENS = 2_000
TOTAL_MAX_TOKENS = 12_000

SECTIONS: tuple[tuple[str, str], ...] = (
    ("Session Title", "A short, specific title for this session (five to ten words)."),
    ("Current State", "What is being worked on right now, what is pending, the next step."),
    (
        "Task specification",
        "What the user asked for, in their own words: requests, decisions and constraints.",
    ),
    ("Files and Functions", "Files and functions that matter here, and why."),
    ("Workflow", "Commands that were run, in what order, and how to read their output."),
    ("Errors & Corrections", "What failed and how it was fixed; where the user corrected us."),
    (
        "Codebase and System Documentation",
        "How the pieces of the system fit together, as far as this session learned.",
    ),
    ("Learnings", "What worked, what did not, what to avoid; standing instructions."),
    ("Key results", "Exact outputs the user asked for: numbers, tables, answers."),
    ("Worklog", "One terse line per step taken, oldest first."),
)
SECTION_NAMES = tuple(name for name, _ in SECTIONS)


def builtin_template() -> str:
    return "\n".join(f"# {name}\n_{desc}_\n" for name, desc in SECTIONS)


_HEADER = re.compile(r"^# (?P<name>\S.*?)\s*$")
_DESCRIPTION = re.compile(r"^_.*_\s*$")


@dataclass(frozen=True)
class Section:
    name: str
    description: str  # the italic line as written ("" when missing)
    body: str  # everything after the description, stripped

    @property
    def tokens(self) -> int:
        return text_tokens(self.body)


@dataclass(frozen=True)
class Notes:
    sections: tuple[Section, ...]
    preamble: str  # text before the first header (hand edits)
    intact: bool  # all 10 standard sections present with description lines, nothing else

    def get(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def body(self, name: str) -> str:
        section = self.get(name)
        return section.body if section else ""

    @property
    def total_tokens(self) -> int:
        return sum(s.tokens for s in self.sections) + text_tokens(self.preamble)

    def oversized(self, per_section: int = SECTION_MAX_TOKENS) -> list[str]:
        return [s.name for s in self.sections if s.tokens > per_section]


def parse_notes(text: str) -> Notes:
    """Split notes into sections by ``# `` headers (never raises)."""
    preamble: list[str] = []
    sections: list[Section] = []
    current: tuple[str, str, list[str]] | None = None
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _HEADER.match(line)
        if match:
            if current is not None:
                sections.append(Section(current[0], current[1], "\n".join(current[2]).strip()))
            description = ""
            if i + 1 < len(lines) and _DESCRIPTION.match(lines[i + 1]):
                description = lines[i + 1].strip()
                i += 1
            current = (match.group("name"), description, [])
        elif current is None:
            preamble.append(line)
        else:
            current[2].append(line)
        i += 1
    if current is not None:
        sections.append(Section(current[0], current[1], "\n".join(current[2]).strip()))
    names = [s.name for s in sections]
    intact = names == list(SECTION_NAMES) and all(s.description for s in sections)
    return Notes(tuple(sections), "\n".join(preamble).strip(), intact)


def render_notes(bodies: Mapping[str, str], template: str) -> str:
    """The template with each section's body filled in after its description line."""
    skeleton = parse_notes(template)
    parts = []
    for section in skeleton.sections:
        chunk = f"# {section.name}\n{section.description}\n"
        body = bodies.get(section.name, "").strip()
        if body:
            chunk += f"{body}\n"
        parts.append(chunk)
    return "\n".join(parts)


def structure_problems(text: str, template: str) -> list[str]:
    """How ``text`` breaks the template's structure (empty list: intact)."""
    expected = [(s.name, s.description) for s in parse_notes(template).sections]
    found = [(s.name, s.description) for s in parse_notes(text).sections]
    problems: list[str] = []
    expected_names = [n for n, _ in expected]
    for name in [n for n, _ in found if n not in expected_names]:
        problems.append(f"new section {name!r}")
    found_map = dict(found)
    for name, description in expected:
        if name not in found_map:
            problems.append(f"section {name!r} is missing")
        elif found_map[name] != description:
            problems.append(f"the description line of {name!r} was changed")
    order = [n for n, _ in found if n in expected_names]
    if not problems and order != expected_names:
        problems.append("sections are out of order or repeated")
    return problems


def is_template_usable(template: str) -> list[str]:
    """Why a user template cannot be used (empty list: usable)."""
    notes = parse_notes(template)
    names = [s.name for s in notes.sections]
    missing = [n for n in SECTION_NAMES if n not in names]
    problems = [f"missing section {n!r}" for n in missing]
    problems += [
        f"section {s.name!r} has no italic description line"
        for s in notes.sections
        if not s.description
    ]
    return problems


def config_dir(home: Path) -> Path:
    """Where a user's ``template.md`` and ``prompt.md`` live: ``<home>/session-memory/config``
    (``~/.memdir/...``, or ``~/.claude/...`` in Claude mode, as the reference has it)."""
    return home / "session-memory" / "config"


def load_template(config_dir: Path | None) -> str:
    """The user's ``template.md`` in ``config_dir`` if usable, else the built-in one."""
    if config_dir is None:
        return builtin_template()
    path = config_dir / "template.md"
    try:
        text = read_regular(path).decode("utf-8")
    except FileNotFoundError:
        return builtin_template()
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("session notes template %s unreadable (%s); using the built-in one", path, exc)
        return builtin_template()
    problems = is_template_usable(text)
    if problems:
        log.warning(
            "session notes template %s not used (%s); using the built-in one",
            path,
            "; ".join(problems),
        )
        return builtin_template()
    return text


def substitute(prompt: str, values: Mapping[str, str]) -> str:
    """Replace ``{{name}}`` placeholders in one pass (values are never re-scanned)."""

    def repl(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return re.sub(r"\{\{(\w+)\}\}", repl, prompt)


def create_exclusive(path: Path, template: str) -> bool:
    """Create ``path`` from ``template`` unless it exists; True if this call created it."""
    ensure_dir(path.parent)
    with contextlib.suppress(OSError):
        os.chmod(path.parent, DIR_MODE)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return False
    try:
        data = template.encode("utf-8")
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def read_notes(path: Path) -> str | None:
    """The notes text, or None when there is no readable notes file (a directory, no permission:
    logged); bytes that are not UTF-8 are replaced, never fatal."""
    try:
        return read_regular(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("session notes %s unreadable: %s", path, exc)
        return None


def write_notes(path: Path, text: str) -> None:
    atomic_write(path, text)


def cap_instruction(notes: Notes, *, per_section: int, total: int) -> str:
    """The extra instruction for an update when the notes are over their caps ("" if not)."""
    lines: list[str] = []
    oversized = notes.oversized(per_section)
    if notes.total_tokens > total:
        lines.append(
            f"The notes are about {notes.total_tokens} tokens, over the {total}-token limit: "
            "condense them — shorten every section, drop what no longer matters, keep Current "
            "State and Errors & Corrections accurate."
        )
    if oversized:
        lines.append(
            f"These sections are over {per_section} tokens and must be condensed: "
            + ", ".join(oversized)
            + "."
        )
    return "\n".join(lines)


def section_budget(sections: Sequence[Section], budget_chars: int, per_section: int) -> list[str]:
    """Section bodies cut to at most ``per_section`` chars each and ``budget_chars`` in total.

    Cuts fall on line boundaries and say so. When the total is over budget the longest sections
    give up room first (water-filling), so short sections always survive whole.
    """
    lengths = [min(len(s.body), per_section) for s in sections]
    if sum(lengths) > budget_chars and lengths:
        lo, hi = 0, max(lengths)
        while lo < hi:  # the largest per-section ceiling whose total fits
            mid = (lo + hi + 1) // 2
            if sum(min(n, mid) for n in lengths) <= budget_chars:
                lo = mid
            else:
                hi = mid - 1
        lengths = [min(n, lo) for n in lengths]
    return [cut_at_line(s.body, n) for s, n in zip(sections, lengths, strict=True)]


TRUNCATED_MARK = "[… section truncated for length]"


def cut_at_line(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    room = max(0, limit - len(TRUNCATED_MARK) - 1)
    cut = text.rfind("\n", 0, room + 1)
    head = text[: cut if cut > 0 else room].rstrip()
    return f"{head}\n{TRUNCATED_MARK}" if head else TRUNCATED_MARK
