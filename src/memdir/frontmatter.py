"""Parse and write the YAML frontmatter of memory files.

Format: an opening ``---`` line, YAML mapping, a closing ``---`` line, then the body. Tolerated: a
UTF-8 BOM, CRLF line ends, trailing spaces on fences. A file with no opening fence has no
frontmatter (the whole text is the body).

Strict parsing (the default) raises :class:`FrontmatterError` naming the file and line for an
unclosed fence, YAML that does not parse, or YAML that is not a mapping. Lenient parsing (what
scans and recall use) follows the reference: retry once with every simple ``key: value`` line
whose value holds a YAML-special character double-quoted; if that fails too, the file keeps an
empty header and stays a memory. Either way :class:`Repair` says what was needed, so ``doctor``
can report it and ``doctor --fix`` can write the quoted form back.

Parsing is bounded before anything is built: at most 64 KiB of YAML, nesting depth 32, and
10,000 nodes *after* alias expansion (counted on the event stream), so an alias bomb or a deeply
nested block is refused in linear time instead of eating memory. Dates are kept as the strings
written (``created: 2020-13-45`` is a bad value for ``doctor`` to report, not a crash).

Round-trip invariant: ``parse(dump(meta, body)).body == body`` byte for byte; only the fence lines
and the YAML block are memdir's to rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from memdir.errors import FrontmatterError, InvalidTextError
from memdir.model import Memory
from memdir.yaml_block import fast_dump, fast_load

BOM = "\ufeff"
FENCE = "---"
MAX_YAML_CHARS = 64 * 1024
MAX_DEPTH = 32
MAX_NODES = 10_000

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """SafeLoader that keeps timestamps as the text written (no ``datetime`` to fail on)."""


def _timestamp_as_text(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)

# A value holding any of these makes a plain scalar fail or change meaning (reference facts §3).
_SPECIAL = frozenset("{}[]*&#!|>%@`")
_SIMPLE_LINE = re.compile(r"^(?P<key>[A-Za-z_][\w.-]*):[ \t]+(?P<value>\S(?:.*\S)?)[ \t]*$")
_BLOCK_INDICATOR = re.compile(r"^[|>][-+0-9]*$")


@dataclass(frozen=True, slots=True)
class Repair:
    """What lenient parsing had to do: ``quoted`` values (kept) or ``dropped`` the header."""

    kind: Literal["quoted", "dropped"]
    reason: str
    lines: tuple[int, ...] = ()  # 1-based file lines that were quoted

    def describe(self) -> str:
        if self.kind == "quoted":
            where = ", ".join(str(n) for n in self.lines)
            return f"frontmatter needed quoting on line(s) {where} ({self.reason})"
        return f"frontmatter unreadable, kept with an empty header ({self.reason})"


@dataclass(frozen=True, slots=True)
class Parsed:
    meta: dict[str, Any]
    body: str
    has_frontmatter: bool
    repair: Repair | None = None


def _is_fence(line: str) -> bool:
    return line.rstrip("\r\n").rstrip(" \t") == FENCE


class _BoundsError(FrontmatterError):
    """Over a parsing limit: reported as corrupt, never retried."""


def _check_bounds(block: str, source: Path | str | None) -> None:
    """Refuse YAML whose size, depth or alias-expanded node count is over the limits."""
    if len(block) > MAX_YAML_CHARS:
        raise _BoundsError(
            f"frontmatter is {len(block)} characters (limit {MAX_YAML_CHARS})", path=source, line=2
        )
    total = 0
    open_nodes: list[tuple[str | None, int]] = []  # (anchor, total when it opened)
    sizes: dict[str, int] = {}
    for event in yaml.parse(block, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            name = event.anchor
            if any(anchor == name for anchor, _ in open_nodes):
                raise _BoundsError("recursive YAML alias", path=source, line=_line(event))
            total += sizes.get(name, 1) if name is not None else 1
        elif isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            total += 1
            open_nodes.append((event.anchor, total - 1))
            if len(open_nodes) > MAX_DEPTH:
                raise _BoundsError(
                    f"frontmatter nests deeper than {MAX_DEPTH} levels",
                    path=source,
                    line=_line(event),
                )
        elif isinstance(event, yaml.CollectionEndEvent) and open_nodes:
            anchor, start = open_nodes.pop()
            if anchor is not None:
                sizes[anchor] = total - start
        if total > MAX_NODES:
            raise _BoundsError(
                f"frontmatter expands to more than {MAX_NODES} nodes (YAML alias bomb?)",
                path=source,
                line=_line(event),
            )


def _line(event: yaml.Event) -> int | None:
    mark = getattr(event, "start_mark", None)
    return mark.line + 2 if mark is not None else None  # +1 for 1-based, +1 for the fence


def _load_yaml(block: str, source: Path | str | None) -> dict[str, Any]:
    fast = fast_load(block) if len(block) <= MAX_YAML_CHARS else None
    if fast is not None:
        return dict(fast)  # plain "key: value" lines: no alias, no nesting, nothing to bound
    try:
        _check_bounds(block, source)
        data = yaml.load(block, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontmatterError(
            f"invalid YAML in frontmatter: {problem}", path=source, line=line
        ) from None
    except (ValueError, TypeError, RecursionError) as exc:  # a constructor's own error
        raise FrontmatterError(f"invalid value in frontmatter: {exc}", path=source) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(
            f"frontmatter must be a mapping, got {type(data).__name__}", path=source, line=2
        )
    return {str(k): v for k, v in data.items()}


def quote_simple_values(block: str, *, only_failing: bool = False) -> tuple[str, tuple[int, ...]]:
    """The reference's retry: double-quote every unquoted simple value with a special character.

    ``only_failing`` narrows it to lines that do not parse on their own, so a valid
    ``tags: [a, b]`` next to a broken description stays a list. Returns the new block and the
    0-based indexes of the lines that changed.
    """
    out: list[str] = []
    changed: list[int] = []
    for i, line in enumerate(block.splitlines(keepends=True)):
        text = line.rstrip("\r\n")
        match = _SIMPLE_LINE.match(text)
        if match is not None:
            value = match["value"]
            risky = any(c in _SPECIAL for c in value) or ": " in value
            if (
                risky
                and value[0] not in "\"'"
                and not _BLOCK_INDICATOR.match(value)
                and not (only_failing and _parses_alone(text))
            ):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{match["key"]}: "{escaped}"{line[len(text) :]}'
                changed.append(i)
        out.append(line)
    return "".join(out), tuple(changed)


def _parses_alone(line: str) -> bool:
    try:
        _check_bounds(line, None)
        yaml.load(line, Loader=_Loader)
    except (yaml.YAMLError, FrontmatterError, ValueError, TypeError):
        return False
    return True


def _load_lenient(block: str, source: Path | str | None) -> tuple[dict[str, Any], Repair | None]:
    try:
        return _load_yaml(block, source), None
    except _BoundsError as exc:  # quoting could turn a bomb into strings; report it instead
        return {}, Repair("dropped", exc.reason)
    except FrontmatterError as exc:
        reason = exc.reason
    for only_failing in (True, False):
        quoted, changed = quote_simple_values(block, only_failing=only_failing)
        if not changed:
            continue
        try:
            meta = _load_yaml(quoted, source)
        except FrontmatterError:
            continue
        return meta, Repair("quoted", reason, tuple(i + 2 for i in changed))
    return {}, Repair("dropped", reason)


def parse_header_lines(
    lines: Iterable[str], *, source: Path | str | None = None
) -> tuple[dict[str, Any], Repair | None]:
    """Lenient header parse of a file's first lines (what scans use); never raises."""
    it = iter(lines)
    first = next(it, None)
    if first is None or not _is_fence(first.removeprefix(BOM)):
        return {}, None
    block: list[str] = []
    for line in it:
        if _is_fence(line):
            return _load_lenient("".join(block), source)
        block.append(line)
    return {}, Repair("dropped", "frontmatter opened with '---' is never closed")


def parse_lines(lines: Iterable[str], *, source: Path | str | None = None) -> dict[str, Any]:
    """Strictly parse only the frontmatter from the first lines of a file.

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


def _split(text: str) -> tuple[list[str], int | None]:
    """Lines of ``text`` (BOM removed) and the index of the closing fence (None: no header)."""
    lines = text.splitlines(keepends=True)
    if not lines or not _is_fence(lines[0]):
        return lines, None
    for i in range(1, len(lines)):
        if _is_fence(lines[i]):
            return lines, i
    return lines, -1


def parse(text: str, *, source: Path | str | None = None, lenient: bool = False) -> Parsed:
    """Split ``text`` into frontmatter mapping and body.

    ``lenient``: never raise for the header; :attr:`Parsed.repair` says what was needed. An
    unclosed fence then means no frontmatter (the whole text is the body, nothing is lost).
    """
    text = text.removeprefix(BOM)
    lines, close = _split(text)
    if close is None:
        return Parsed({}, text, False)
    if close == -1:
        if lenient:
            return Parsed(
                {}, text, False, Repair("dropped", "frontmatter opened with '---' is never closed")
            )
        raise FrontmatterError("frontmatter opened with '---' is never closed", path=source, line=1)
    block = "".join(lines[1:close])
    body = "".join(lines[close + 1 :])
    if lenient:
        meta, repair = _load_lenient(block, source)
        return Parsed(meta, body, True, repair)
    return Parsed(_load_yaml(block, source), body, True)


def repaired_text(text: str) -> str | None:
    """``text`` with the header lines quoted as lenient parsing did, or None if that can't help.

    Everything else (the other header lines, the fences, the body) is kept byte for byte.
    """
    had_bom = text.startswith(BOM)
    stripped = text.removeprefix(BOM)
    lines, close = _split(stripped)
    if close is None or close == -1:
        return None
    parsed = parse(stripped, lenient=True)
    if parsed.repair is None or parsed.repair.kind != "quoted":
        return None
    block = lines[1:close]
    fixed = [
        quote_simple_values(line)[0] if i + 2 in parsed.repair.lines else line
        for i, line in enumerate(block)
    ]
    return (BOM if had_bom else "") + lines[0] + "".join(fixed) + "".join(lines[close:])


def _dump_yaml(meta: Mapping[str, Any]) -> str:
    """``meta`` as block YAML, one line per scalar. A lone surrogate in a value (legal in a JSON
    ``\\ud800`` escape, so a tool caller can send one) raises :class:`InvalidTextError`, as the
    same text in a body does when it is written, instead of the emitter's UnicodeEncodeError."""
    fast = fast_dump(meta)
    if fast is not None:
        return fast
    try:
        return yaml.dump(
            dict(meta),
            Dumper=_Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=1_000_000,
        )
    except UnicodeEncodeError:
        raise InvalidTextError(
            "a frontmatter value is not valid Unicode (it holds a lone surrogate)"
        ) from None


def dump(meta: Mapping[str, Any], body: str) -> str:
    """Render frontmatter + body. An empty mapping still gets fences (memdir files always do)."""
    block = _dump_yaml(meta)
    if block.strip() == "{}":
        block = ""
    return f"{FENCE}\n{block}{FENCE}\n{body}"


def with_keys(text: str, values: Mapping[str, Any]) -> str:
    """``text`` with top-level header keys set (a ``None`` value removes the key), every other
    byte kept: the other header lines (their quoting, order, comments), the fences and the body.

    For fields memdir adds to files people edit (``applies_when``), where a full :func:`dump`
    would reformat a hand-written header. A key's old lines (the key line and the indented or
    ``- `` lines under it) are dropped and its new lines go last. Raises
    :class:`FrontmatterError` when the header is not plain enough to edit by lines (it needs a
    lenient repair, or the result would not read back as exactly those values): callers leave
    such a file alone.
    """
    bom = BOM if text.startswith(BOM) else ""
    stripped = text.removeprefix(BOM)
    before = parse(stripped, lenient=True)
    if before.repair is not None:
        raise FrontmatterError(f"header needs a repair first ({before.repair.reason})")
    lines, close = _split(stripped)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    if close is None:
        opening, block, closing, tail = FENCE + newline, [], FENCE + newline, stripped
    else:
        assert close > 0  # parse() above raised for an unclosed fence
        opening, block, closing = lines[0], lines[1:close], lines[close]
        tail = "".join(lines[close + 1 :])
    expected = dict(before.meta)
    for key, value in values.items():
        block = _without_key(block, key)
        if value is None:
            expected.pop(key, None)
            continue
        expected[key] = value
        if block and not block[-1].endswith("\n"):
            block[-1] += newline
        dumped = _dump_yaml({key: value})
        block += [line + newline for line in dumped.splitlines()]
    out = opening + "".join(block) + closing + tail
    after = parse(out)
    if after.meta != expected or after.body != before.body:
        raise FrontmatterError("the header is not plain enough to edit by lines")
    return bom + out


def _without_key(block: list[str], key: str) -> list[str]:
    """The header lines without ``key``'s line and the lines nested under it."""
    start = re.compile(rf"^(?:{re.escape(key)}|'{re.escape(key)}'|\"{re.escape(key)}\")\s*:")
    out: list[str] = []
    inside = False
    for line in block:
        if inside and (line[:1] in (" ", "\t", "-") or not line.strip()):
            continue  # nested under the key (a blank line inside it goes with it)
        inside = bool(start.match(line))
        if not inside:
            out.append(line)
    return out


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
    """A :class:`Memory` from a file's text. Values the reference would quote are read quoted;
    a header that cannot be read even so raises (a rewrite would otherwise lose it)."""
    where = source if source is not None else rel
    parsed = parse(text, source=where, lenient=True)
    if parsed.repair is not None and parsed.repair.kind == "dropped":
        raise FrontmatterError(parsed.repair.reason, path=where)
    return to_memory(rel, parsed)


def dump_memory(memory: Memory) -> str:
    return dump(memory.frontmatter(), memory.body)
