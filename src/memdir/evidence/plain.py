"""Evidence outside git: the files a memory names, compared by content with what memdir saw the
first time it checked the memory.

Without history there is no "when it was written" to compare from, so the baseline is the first
check: each named file's normalised lines are hashed and kept in ``<cache>/evidence-plain.json``
(derived: deleting it starts the comparison afresh). Identifiers are not searched (no tracked
tree to search); only paths are anchors here.

Invariants: a path is resolved under the project root and skipped when it (or a symlink on the
way) leads outside it; a file over :data:`~memdir.evidence.repo.MAX_BLOB` is compared by size and
time only; a FIFO, socket or device is never opened.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from memdir.atomic import atomic_write, ensure_dir
from memdir.evidence.anchors import derive
from memdir.evidence.check import CHANGED_SHARE
from memdir.evidence.repo import MAX_BLOB
from memdir.evidence.verdict import Evidence, Verdict

CACHE_NAME = "evidence-plain.json"
MAX_LINES = 4000
MAX_MEMORIES = 5000


def _lines(data: bytes) -> list[str]:
    out = []
    for line in data.decode("utf-8", "replace").splitlines()[:MAX_LINES]:
        stripped = "".join(line.split())
        if stripped and not stripped.startswith(("#", "//", "/*", "*")):
            out.append(hashlib.blake2b(stripped.encode(), digest_size=6).hexdigest())
    return out


def _inside(root: Path, rel: str) -> Path | None:
    """``root / rel`` when it resolves inside ``root`` (symlinks followed), else None."""
    real_root = os.path.realpath(root)
    candidate = os.path.realpath(os.path.join(real_root, rel))
    if candidate != real_root and not candidate.startswith(real_root + os.sep):
        return None
    return Path(candidate)


def _state(path: Path) -> dict[str, Any] | None:
    """What the file is now: kind, and its lines' hashes for a regular file; None if absent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return {"kind": "dir"}
    if not stat.S_ISREG(st.st_mode):
        return {"kind": "special"}
    if st.st_size > MAX_BLOB:
        return {"kind": "file", "big": f"{st.st_size}:{st.st_mtime_ns}"}
    try:
        with open(path, "rb") as fh:
            return {"kind": "file", "lines": _lines(fh.read(MAX_BLOB))}
    except OSError:
        return None


def _compare(anchor: str, seen: dict[str, Any], now: dict[str, Any] | None) -> Verdict:
    if now is None:
        return Verdict(anchor, "path", "gone", "no such path now (it was there at the first check)")
    if seen.get("kind") != now.get("kind") or seen.get("big") != now.get("big"):
        return Verdict(anchor, "path", "changed", "not the same kind of file as at the first check")
    old, new = seen.get("lines"), now.get("lines")
    if isinstance(old, list) and isinstance(new, list) and old != new:
        common = sum(min(old.count(x), new.count(x)) for x in set(old))
        share = 1 - common / max(len(old), len(new), 1)
        if share > CHANGED_SHARE:
            return Verdict(
                anchor, "path", "changed", f"{share:.0%} of its lines since the first check"
            )
    return Verdict(anchor, "path", "current")


# a repo path in prose: segments and an extension (what dream has always marked outside git)
_REPO_PATH = re.compile(r"(?<![\w/.:@~-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])")


def missing_paths(body: str, root: Path) -> list[str]:
    """Repo paths ``body`` names, under a top-level dir the project has, that do not exist."""
    missing = []
    for ref in dict.fromkeys(_REPO_PATH.findall(body)):
        first = ref.split("/", 1)[0]
        if (root / first).is_dir() and not (root / ref).exists():
            missing.append(ref)
    return missing


class PlainChecker:
    """Path anchors of memories in a project that is not a git repository."""

    def __init__(self, root: Path, cache_dir: Path | None) -> None:
        self.root = root
        self.path = cache_dir / CACHE_NAME if cache_dir is not None else None
        self.seen: dict[str, dict[str, Any]] = {}
        self.dirty = False
        if self.path is not None:
            with contextlib.suppress(OSError, ValueError):
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                if isinstance(raw, dict) and isinstance(raw.get("seen"), dict):
                    self.seen = raw["seen"]

    def check(self, memory: str, text: str) -> Evidence:
        found = derive(text)
        evidence = Evidence(skipped=[*found.skipped, "not a git repository: paths only, "
                                     "compared with the first check"])  # fmt: skip
        record = self.seen.setdefault(memory, {})
        for anchor in found.anchors:
            if anchor.kind != "path":
                continue
            target = _inside(self.root, anchor.text.rstrip("/"))
            if target is None:
                evidence.skipped.append(f"{anchor.text[:60]}: leads outside the project")
                continue
            now = _state(target)
            seen = record.get(anchor.text)
            if seen is None:
                if now is None:
                    evidence.skipped.append(f"{anchor.text[:60]}: not in the project")
                    continue
                record[anchor.text] = now
                self.dirty = True
                seen = now
            verdict = _compare(anchor.text, seen, now)
            evidence.verdicts.append(Verdict(verdict.anchor, "path", verdict.state,
                                             verdict.detail, anchor.depends))  # fmt: skip
        return evidence

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        seen = dict(list(self.seen.items())[-MAX_MEMORIES:])
        with contextlib.suppress(OSError):
            ensure_dir(self.path.parent)
            atomic_write(self.path, json.dumps({"v": 1, "seen": seen}))


__all__ = ["PlainChecker", "missing_paths"]
