"""Shared helpers for memdir's benchmarks: timing percentiles, tables, memory fixtures, docs.

Each benchmark prints its table and rewrites only its own marked section of
``docs/benchmarks.md`` (between ``<!-- bench:<name>:start -->`` and ``<!-- bench:<name>:end -->``),
so several benchmarks (and people) can share the file.
"""

from __future__ import annotations

import platform
import re
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from memdir.atomic import atomic_write
from memdir.frontmatter import dump

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks.md"


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100), nearest-rank on sorted values; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def estimate_tokens(text: str) -> int:
    """Token estimate used throughout: characters / 4 (as the reference system does)."""
    return (len(text) + 3) // 4


def memory_text(name: str, description: str, body: str, type_: str = "project") -> str:
    return dump({"name": name, "description": description, "type": type_}, body)


def write_if_changed(path: Path, text: str) -> bool:
    """Atomically write ``text`` unless the file already holds it; True when written."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    atomic_write(path, text)
    return True


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """A GitHub-flavoured Markdown table (also readable in a terminal)."""
    cells = [[str(c) for c in header], *[[_fmt(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def machine() -> str:
    import os

    return f"Python {sys.version.split()[0]}, {platform.machine()}, {os.cpu_count()} cores (shared)"


def update_docs_section(name: str, content: str, *, title: str) -> None:
    """Replace (or append) the ``name`` section of docs/benchmarks.md."""
    start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
    block = f"{start}\n{content.rstrip()}\n{end}"
    try:
        text = DOCS.read_text(encoding="utf-8")
    except OSError:
        text = "# memdir benchmarks\n\nNumbers measured on the project's own machines.\n"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + f"\n\n## {title}\n\n{block}\n"
    atomic_write(DOCS, text, mode=0o644)
