"""How commands print: JSON when stdout is not a terminal, readable text when it is."""

from __future__ import annotations

import json
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO


@dataclass
class Output:
    """Where a command writes; ``json_mode`` is decided once at the entry point."""

    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    json_mode: bool = False

    def data(self, payload: Any, text: str | None = None) -> None:
        """Emit a result: ``payload`` as JSON in JSON mode, else ``text`` (or a rendering)."""
        if self.json_mode:
            self.stdout.write(to_json(payload))
            self.stdout.write("\n")
        else:
            self.stdout.write(printable(text if text is not None else _render(payload)))
            if not (text or "").endswith("\n"):
                self.stdout.write("\n")

    def error(self, message: str) -> None:
        self.stderr.write(f"memdir: error: {message}\n")

    def warn(self, message: str) -> None:
        self.stderr.write(f"memdir: warning: {message}\n")


def to_json(payload: Any) -> str:
    """JSON text that any UTF-8 stream can take: a lone surrogate in the data (valid in a Python
    str, not in UTF-8) is written as its ``\\udxxx`` escape instead of failing the whole output."""
    text = json.dumps(payload, indent=2, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload, indent=2, ensure_ascii=True, default=str)
    return text


def printable(text: str) -> str:
    """``text`` with any lone surrogate shown as a ``\\udxxx`` escape (never an encode error)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def cols(text: str) -> int:
    """Terminal columns of ``text``: wide (CJK) characters take two, combining marks none."""
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


def pad(text: str, width: int) -> str:
    return text + " " * max(width - cols(text), 0)


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A plain aligned text table."""
    if not rows:
        return "(none)"
    cells = [[str(r.get(c, "") if r.get(c) is not None else "") for c in columns] for r in rows]
    widths = [max(cols(c), *(cols(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(pad(c.upper(), w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    for row in cells:
        lines.append("  ".join(pad(v, w) for v, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def _render(payload: Any) -> str:
    if isinstance(payload, str):
        return payload
    if isinstance(payload, Mapping):
        return "\n".join(f"{k}: {v}" for k, v in payload.items())
    if isinstance(payload, list) and payload and isinstance(payload[0], Mapping):
        return table(payload, list(payload[0].keys()))
    return to_json(payload)
