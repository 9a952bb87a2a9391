"""A frontmatter mapping as block YAML, without the YAML emitter, for the headers memdir writes
thousands of (an import of 10,000 memories spent a tenth of its time in ``yaml.dump``).

Invariant: :func:`fast_dump` returns exactly what ``yaml.dump(meta, Dumper=SafeDumper,
sort_keys=False, allow_unicode=True, default_flow_style=False, width=1_000_000)`` returns, or
None when it cannot be sure (then the caller runs that). It only takes mappings of strings to
strings made of a conservative character set; everything else (lists, numbers, quotes, ``#``,
a leading or trailing space, any character outside the set) is left to PyYAML. A test draws
random values from the edge of that set and compares the two byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

# Characters PyYAML writes plain in a block scalar: indicators ('"!&*%@|>[]{}) only after the
# first character, ':' not before a space, no '#', and printable non-ASCII text (CJK, accents)
# except the characters YAML reads as line breaks or a byte order mark.
_TEXT = "\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
_SAFE = re.compile(f"[A-Za-z0-9_({_TEXT}][A-Za-z0-9 _.,;:()/+=~?'\"!&*%@|>\\[\\]{{}}{_TEXT}-]*")
_RESOLVER = yaml.resolver.Resolver()


def _scalar(value: str) -> str | None:
    if not _SAFE.fullmatch(value) or ": " in value or "  " in value:
        return None
    if value.endswith((" ", ":")) or value.startswith(("? ", "- ")):
        return None
    tag = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    if tag == "tag:yaml.org,2002:str":
        return value
    return f"'{value}'"  # a date, number or boolean that is a string: PyYAML single-quotes it


def fast_dump(meta: Mapping[str, Any]) -> str | None:
    """``meta`` as PyYAML would dump it, or None (see the module invariant)."""
    lines = []
    for key, value in meta.items():
        if not (isinstance(key, str) and isinstance(value, str)) or not value:
            return None
        k, v = _scalar(key), _scalar(value)
        if k is None or v is None:
            return None
        lines.append(f"{k}: {v}\n")
    return "".join(lines) if lines else None


_QUOTED = re.compile(r"'([^'\n]*)'")


def _read_scalar(text: str) -> str | None:
    if (quoted := _QUOTED.fullmatch(text)) is not None:
        inner = quoted.group(1)
        return inner if _scalar(inner) is not None else None  # '' escapes and the like: PyYAML
    return text if _scalar(text) == text else None


def fast_load(block: str) -> dict[str, str] | None:
    """The header ``block`` (the lines between the fences) as PyYAML's safe loader reads it, or
    None when it is not made only of ``key: value`` lines :func:`fast_dump` would write (then
    the caller runs the loader): the read side of the same promise."""
    out: dict[str, str] = {}
    for line in block.split("\n"):
        if not line:
            continue
        key, sep, value = line.partition(": ")
        if not sep or _scalar(key) != key:
            return None
        read = _read_scalar(value)
        if read is None:
            return None
        out[key] = read
    return out or None
