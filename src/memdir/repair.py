"""What ``memdir doctor`` can repair, and the repairs it makes when the user asks (``--fix``).

Invariants:
- Nothing here runs unless asked: ``doctor`` reports, ``doctor --fix`` repairs, and only the
  files named (or, with no names, every file doctor listed as repairable).
- A header repair rewrites only the frontmatter lines lenient parsing had to quote (the rest
  of the file is kept byte for byte), through the store: atomically, under the store lock, and
  only if the file is still the one that was examined (expected hash).
- A header that cannot be read even quoted is never rewritten: the user has to say what it
  should be.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memdir import frontmatter
from memdir.atomic import content_hash
from memdir.errors import MemdirError
from memdir.index import ENTRYPOINT_NAME
from memdir.recovery import WriteIntent, remove_stale_temp_files, stale_temp_files
from memdir.store import MemoryStore


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str
    path: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Fixed:
    path: str
    action: str
    ok: bool


def crash_leftovers(store: MemoryStore) -> list[Problem]:
    """Stale temp files, an interrupted write, and an index that links out of the dir."""
    found = [
        Problem("stale-temp", str(p), "left by a killed writer; removed on the next locked write")
        for p in stale_temp_files(store.root)
    ]
    if WriteIntent(store.root).pending() is not None:
        found.append(
            Problem(
                "interrupted-write",
                str(store.root / ".memdir.dirty"),
                "a writer was killed mid-write; the next write re-derives its index lines",
            )
        )
    for index_rel in (ENTRYPOINT_NAME, "team/" + ENTRYPOINT_NAME):
        path = store.root / index_rel
        if path.is_symlink():
            real = Path(os.path.realpath(path))
            if not real.is_relative_to(Path(os.path.realpath(store.root))):
                found.append(Problem("symlink-escape", str(path), "index is a link out of the dir"))
    return found


def fix_frontmatter(store: MemoryStore, rel: str) -> Fixed:
    """Write back the quoted form of one file's header (only the lines that needed it)."""
    try:
        rel = store.rel(rel)
        text = store.read_text(rel)
    except MemdirError as exc:
        return Fixed(rel, f"not repaired: {exc}", False)
    fixed = frontmatter.repaired_text(text)
    if fixed is None:
        parsed = frontmatter.parse(text, lenient=True)
        if parsed.repair is None:
            return Fixed(rel, "nothing to repair", True)
        return Fixed(rel, f"not repaired: {parsed.repair.describe()}; edit it by hand", False)
    try:
        store.write_text(rel, fixed, expected_hash=content_hash(text))
    except MemdirError as exc:
        return Fixed(rel, f"not repaired: {exc}", False)
    return Fixed(rel, "quoted the header values that did not parse", True)


def fix(store: MemoryStore, rels: list[str], *, everything: bool) -> list[Fixed]:
    """Repair the named files; with ``everything``, also every repairable header and leftover."""
    results: list[Fixed] = []
    targets = list(rels)
    if everything:
        with store.lock():  # taking it repairs an interrupted write first
            for path in remove_stale_temp_files(store.root):
                results.append(Fixed(str(path), "removed stale temp file", True))
        scan = store.scan(limit=None)
        targets += [store.rel(n.path) for n in scan.notes if n.kind == "frontmatter-quoted"]
    for rel in dict.fromkeys(targets):
        results.append(fix_frontmatter(store, rel))
    return results
