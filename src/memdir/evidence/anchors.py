"""What a memory's text names that the repository can confirm: paths, code identifiers, commands,
declared packages — derived from the text, so nobody writes citations by hand.

A candidate becomes an anchor only if the repository had it when the memory was written (the
check's job, :mod:`memdir.evidence.check`): a code span naming a git flag or a shell builtin
never was in the tree and anchors nothing.

Invariants:
- Pure text work, bounded: at most :data:`MAX_ANCHORS` candidates per memory, each at most
  :data:`MAX_ANCHOR_CHARS`; anything else is counted in ``skipped`` with the reason.
- A path is always relative to the repository root: absolute paths, ``..`` segments, ``~``,
  URLs, NUL and newlines are skipped (reported), never resolved.
- ``depends`` is False where the text names the anchor only to rule it out ("never add
  `psycopg2` back", "we moved off Jest", "instead of `npm`"): its absence is what the memory
  asks for, so a ``gone`` verdict must not hold it back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_ANCHORS = 24
MAX_ANCHOR_CHARS = 200
KINDS = ("path", "symbol", "command", "package")

_CODE_SPAN = re.compile(r"`([^`\n]{1,300})`")
_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.MULTILINE | re.DOTALL)
# a path in prose: at least one slash between name characters, or a name with a known extension
_PROSE_PATH = re.compile(
    r"(?<![\w/.:~-])((?:[\w.-]+/)+[\w.-]*|[\w-]+(?:\.[\w-]+)*\.(?:"
    r"py|pyi|ts|tsx|js|jsx|mjs|cjs|go|rs|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sql|sh|toml|"
    r"ya?ml|json|ini|cfg|lock|md|rst|txt|html|css|scss|vue|svelte|proto|gradle|tf))(?![\w/-])"
)
_IDENT = re.compile(r"^(?:--?[A-Za-z][\w-]*|[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)$")
_COMMAND = re.compile(r"^([a-z][\w.-]*)\s+\S")
_WORD = re.compile(r"[A-Za-z][\w.-]{2,}")
# words before an anchor that rule it out rather than rely on it
_NEGATED_BEFORE = re.compile(
    r"(?:\bnever\b|\bdon'?t\b|\bdo not\b|\bno longer\b|\bnot\b|\bavoid\b|\binstead of\b|"
    r"\bremoved?\b|\bdeprecated\b|\breplaced?\b|\bdropp?(?:ed)?\b|\bstop(?:ped)? using\b|"
    r"\bwithout\b|\b(?:moved|migrated|switched) (?:away )?(?:off|from)\b|\boff\b|\brather than\b|"
    r"\bban(?:ned)?\b|\bforbid(?:den)?\b|\bno\b|\bnor\b|"
    r"不要|不再|禁止|别|不用|避免|移除|删除|弃用)[^.;:!?。；！？\n]{0,40}$",
    re.IGNORECASE,
)
_NEGATED_AFTER = re.compile(
    r"^[`'\")\s]*(?:is|was|has been|got|are|were)?\s*(?:gone|removed|deleted|deprecated|dropped|"
    r"banned|forbidden|no longer)\b",
    re.IGNORECASE,
)
_NOT_PATHS = {"e.g", "i.e", "etc", "vs", "and/or", "n/a", "w/o", "w/"}
_COMMON = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "when",
        "then",
        "use",
        "uses",
        "used",
        "into",
        "only",
        "also",
        "must",
        "never",
        "always",
        "test",
        "tests",
        "code",
        "file",
        "files",
        "data",
        "user",
        "users",
        "run",
        "runs",
        "build",
        "make",
        "time",
        "next",
        "core",
        "main",
        "app",
        "api",
        "http",
        "https",
        "json",
        "yaml",
        "path",
        "paths",
        "type",
        "types",
        "node",
        "server",
        "client",
        "config",
        "debug",
        "error",
        "errors",
        "format",
        "lint",
        "docs",
        "doc",
        "version",
        "update",
        "release",
        "package",
        "packages",
        "module",
        "modules",
    ]
)


@dataclass(frozen=True, slots=True)
class Anchor:
    """One thing a memory names: ``kind`` is one of :data:`KINDS`."""

    text: str
    kind: str
    depends: bool = True


@dataclass
class Candidates:
    """A memory's anchor candidates, and what was left out (for ``--explain``)."""

    anchors: list[Anchor] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    words: set[str] = field(default_factory=set)  # prose words, matched against declared packages


def _clean_path(raw: str) -> tuple[str | None, str | None]:
    """(repo-relative path, None) or (None, why it is skipped)."""
    text = raw.strip().strip(",;:()[]{}<>\"'").rstrip(".")
    if not text or text.lower() in _NOT_PATHS:
        return None, None
    if "\x00" in text or "\n" in text or "\r" in text:
        return None, "a path with a control character"
    if "://" in text or text.startswith(("www.", "@")):
        return None, None
    if text.startswith(("/", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", text):
        return None, f"{text[:60]}: outside the repository (absolute)"
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None, f"{text[:60]}: outside the repository (..)"
    if not parts or len(text) > MAX_ANCHOR_CHARS:
        return None, "a path too long to be one" if parts else None
    if any(ch in text for ch in "*?$<>|"):
        return None, None  # a glob or a placeholder, not one path
    return "/".join(parts) + ("/" if text.endswith("/") else ""), None


def _depends(text: str, start: int, end: int) -> bool:
    before = text[max(0, start - 80) : start]
    sentence = re.split(r"[.!?\n]\s", before)[-1]
    return not (_NEGATED_BEFORE.search(sentence) or _NEGATED_AFTER.match(text[end : end + 40]))


def derive(text: str) -> Candidates:
    """The anchor candidates of a memory's text (name, description and body)."""
    out = Candidates()
    seen: dict[tuple[str, str], int] = {}

    def add(value: str, kind: str, depends: bool) -> None:
        key = (value, kind)
        if key in seen:  # named twice: it depends on it if any mention relies on it
            i = seen[key]
            if depends and not out.anchors[i].depends:
                out.anchors[i] = Anchor(value, kind, True)
            return
        if len(out.anchors) >= MAX_ANCHORS:
            out.skipped.append(f"{value[:60]}: over {MAX_ANCHORS} anchors in one memory")
            return
        seen[key] = len(out.anchors)
        out.anchors.append(Anchor(value, kind, depends))

    prose = _FENCE.sub(" ", text)
    spans: list[tuple[int, int]] = []
    for match in _CODE_SPAN.finditer(prose):
        spans.append(match.span())
        raw = match.group(1).strip()
        depends = _depends(prose, match.start(), match.end())
        if "\x00" in raw:
            out.skipped.append("a code span with a NUL")
            continue
        if ("/" in raw and " " not in raw) or _PROSE_PATH.fullmatch(raw):
            path, why = _clean_path(raw)
            if why:
                out.skipped.append(why)
            elif path:
                add(path, "path", depends)
        elif _IDENT.match(raw) and len(raw) <= MAX_ANCHOR_CHARS:
            add(raw, "symbol", depends)
        elif command := _COMMAND.match(raw):
            add(command.group(1), "command", depends)
    masked = list(prose)
    for start, end in spans:
        masked[start:end] = " " * (end - start)
    plain = "".join(masked)
    for match in _PROSE_PATH.finditer(plain):
        raw = match.group(1)
        if "/" not in raw and "." not in raw:
            continue
        path, why = _clean_path(raw)
        if why:
            out.skipped.append(why)
        elif path and not re.fullmatch(r"[\d./-]+", path):  # dates, versions: not paths
            add(path, "path", _depends(plain, match.start(), match.end()))
    for match in _WORD.finditer(plain):
        word = match.group(0).rstrip(".-").lower()
        if word not in _COMMON and len(word) <= 60:
            out.words.add(word)
    return out


def package_anchors(text: str, words: set[str], declared: set[str]) -> list[Anchor]:
    """Anchors for the prose words that name a package the repository declared."""
    out = []
    lowered = text.lower()
    for name in sorted(words & declared):
        at = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", lowered)
        depends = at is None or _depends(lowered, at.start(), at.end())
        out.append(Anchor(name, "package", depends))
    return out


__all__ = ["KINDS", "MAX_ANCHORS", "Anchor", "Candidates", "derive", "package_anchors"]
