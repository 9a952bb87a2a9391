"""Evidence for the memories about to be injected: the one entry recall, the hooks, MCP, the
CLI, doctor and the UI call (``screen``), with its cache.

The cache (``<cache dir>/evidence.json``) is derived: verdicts for one ``HEAD``, keyed by each
memory file's path, size and mtime; a new commit or an edited memory checks again, and deleting
the file loses nothing. What the check compares *from* is not in the cache: it is the memory's
own ``verified`` header or its write time (:mod:`memdir.evidence.check`).

Invariants:
- Never raises into a caller: a memory dir outside any git repository, a broken ``.git``, a
  hostile memory or a check past its time budget gives verdicts ``unchecked`` (or none) and a
  reason in ``skipped``.
- A memory held back by one surface is held back by all: one rule (``Evidence.held_back``).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memdir.atomic import atomic_write, ensure_dir
from memdir.errors import ConfigError
from memdir.evidence.check import Checker, Timeline, baseline
from memdir.evidence.repo import Deadline, Git, read_head
from memdir.evidence.verdict import Evidence
from memdir.frontmatter import parse

CACHE_NAME = "evidence.json"
CACHE_VERSION = 1
BUDGET_SECONDS = 0.25  # per screening of up to five memories; past it: "unchecked"
MAX_MEMORY_BYTES = 256 * 1024  # a bigger memory is checked on its first 256 KiB
MAX_CACHED = 5000
_LOADED: dict[str, tuple[int, Any]] = {}  # cache file -> (mtime, parsed), per process
TIMELINE_FROM = 8  # more memories than this: read the history's dates once


@dataclass(frozen=True, slots=True)
class Screened:
    path: str
    evidence: Evidence


def _key(path: Path) -> str | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return f"{st.st_mtime_ns}:{st.st_size}"


def _read(path: Path) -> tuple[str, dict[str, Any], float] | None:
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_MEMORY_BYTES)
        mtime = path.stat().st_mtime
    except OSError:
        return None
    text = data.decode("utf-8", "replace")
    meta: dict[str, Any] = {}
    with contextlib.suppress(Exception):  # a broken header: the text is still evidence
        meta = parse(text, lenient=True).meta
    return text, meta, mtime


class EvidenceCache:
    def __init__(self, cache_dir: Path) -> None:
        self.path = cache_dir / CACHE_NAME
        self.head = ""
        self.entries: dict[str, Any] = {}
        self.dirty = False

    def load(self, root: str, head: str) -> None:
        try:
            stamp = self.path.stat().st_mtime_ns
            memo = _LOADED.get(str(self.path))
            if memo is not None and memo[0] == stamp:
                raw = memo[1]  # a long-lived process (the daemon): parsed once per write
            else:
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                _LOADED[str(self.path)] = (stamp, raw)
        except (OSError, ValueError):
            raw = {}
        if isinstance(raw, dict) and raw.get("v") == CACHE_VERSION and raw.get("head") == head \
                and raw.get("root") == root and isinstance(raw.get("entries"), dict):  # fmt: skip
            self.entries = raw["entries"]
        self.root, self.head = root, head

    def get(self, path: str, key: str) -> Evidence | None:
        entry = self.entries.get(path)
        if isinstance(entry, dict) and entry.get("key") == key:
            with contextlib.suppress(KeyError, TypeError, ValueError):
                return Evidence.from_json(entry["evidence"])
        return None

    def put(self, path: str, key: str, evidence: Evidence) -> None:
        if any(v.state == "unchecked" for v in evidence.verdicts):
            return  # a check cut short is done again next time
        self.entries[path] = {"key": key, "evidence": evidence.to_json()}
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        entries = dict(list(self.entries.items())[-MAX_CACHED:])
        body = {"v": CACHE_VERSION, "root": self.root, "head": self.head, "entries": entries}
        with contextlib.suppress(OSError):
            ensure_dir(self.path.parent)
            atomic_write(self.path, json.dumps(body, ensure_ascii=False))


def repository(start: Path, deadline: Deadline) -> tuple[Git, str] | None:
    """(git over the work tree holding ``start``, its HEAD commit), or None outside git."""
    if not start.is_dir():
        return None
    if os.environ.get("GIT_DIR") is None:  # git's own files, when git would read the same
        quick = read_head(start)
        if quick is not None:
            return Git(quick[0], deadline), quick[1]
    out = Git(start, deadline).text("rev-parse", "--show-toplevel", "--verify", "-q", "HEAD")
    lines = (out or "").split()
    if len(lines) != 2:
        return None
    return Git(Path(lines[0]), deadline), lines[1]


def screen(
    paths: Sequence[str | Path],
    project_root: Path,
    cache_dir: Path | None,
    *,
    budget: float = BUDGET_SECONDS,
    rev: str | None = None,
) -> list[Screened]:
    """Evidence for each memory file in ``paths`` against the repository at ``project_root``
    (its ``HEAD``, or ``rev``: what a change would make of them, for ``memdir stale --diff``)."""
    deadline = Deadline(budget)
    found = repository(project_root, deadline)
    if found is None:
        if deadline.expired:
            why = "the time budget ran out before git answered: unchecked"
            return [Screened(str(p), Evidence(skipped=[why])) for p in paths]
        if rev is not None or not project_root.is_dir():
            why = "not in a git repository: nothing to check against"
            return [Screened(str(p), Evidence(skipped=[why])) for p in paths]
        return _plain(paths, project_root, cache_dir)
    git, head = found
    if rev is not None:
        target = git.resolve(rev)
        if target is None:
            why = f"{rev!r} is not a commit here"
            return [Screened(str(p), Evidence(skipped=[why])) for p in paths]
        head = target
    cache = EvidenceCache(cache_dir) if cache_dir is not None and rev is None else None
    if cache is not None:
        cache.load(str(git.root), head)
    checker = Checker(git, head)
    timeline = Timeline(git, head) if len(paths) > TIMELINE_FROM else None
    out = []
    for raw in paths:
        path = Path(raw)
        key = _key(path)
        cached = cache.get(str(path), key) if cache is not None and key else None
        if cached is not None:
            out.append(Screened(str(path), cached))
            continue
        read = _read(path)
        if read is None:
            out.append(Screened(str(path), Evidence(skipped=["the memory file cannot be read"])))
            continue
        text, meta, mtime = read
        verified = meta.get("verified")
        verified = str(verified) if isinstance(verified, (str, int)) else None
        updated = meta.get("updated") or meta.get("created")
        try:
            when = str(updated) if updated else None
            base = baseline(git, head, mtime, when, verified, timeline)
            evidence = checker.check(text, base)
        except Exception as exc:  # advisory: never crash recall
            evidence = Evidence(skipped=[f"check failed: {type(exc).__name__}"])
        if deadline.expired:
            evidence.skipped.append("the time budget ran out: some anchors are unchecked")
        out.append(Screened(str(path), evidence))
        if cache is not None and key:
            cache.put(str(path), key, evidence)
    if cache is not None:
        cache.save()
    return out


def _plain(paths: Sequence[str | Path], root: Path, cache_dir: Path | None) -> list[Screened]:
    """Outside git: the named files against the first check (:mod:`memdir.evidence.plain`)."""
    from memdir.evidence.plain import PlainChecker

    checker = PlainChecker(root, cache_dir)
    out = []
    for raw in paths:
        read = _read(Path(raw))
        if read is None:
            out.append(Screened(str(raw), Evidence(skipped=["the memory file cannot be read"])))
            continue
        out.append(Screened(str(raw), checker.check(str(raw), read[0])))
    checker.save()
    return out


def enabled(env: Mapping[str, str]) -> bool:
    """``MEMDIR_EVIDENCE=0`` turns the check off (read at entry points only)."""
    return env.get("MEMDIR_EVIDENCE", "").strip().lower() not in ("0", "false", "no", "off")


def budget(env: Mapping[str, str], default: float) -> float:
    """``MEMDIR_EVIDENCE_SECONDS``: how long a prompt's check may take before what is left is
    "unchecked" (a big repository on a slow disk needs more; read at entry points only)."""
    raw = env.get("MEMDIR_EVIDENCE_SECONDS", "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"MEMDIR_EVIDENCE_SECONDS={raw!r}: a number of seconds") from None
    if not 0 < value <= 30:
        raise ConfigError(f"MEMDIR_EVIDENCE_SECONDS={raw!r}: more than 0, at most 30 seconds")
    return value


__all__ = [
    "BUDGET_SECONDS", "EvidenceCache", "Screened", "budget", "enabled", "repository", "screen",
]  # fmt: skip
