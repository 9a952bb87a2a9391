"""Check one memory's anchors against its repository: from the commit it was written (or last
confirmed) at, to the commit checked out now.

The baseline is the ``verified`` commit in the memory's frontmatter when a person or agent
confirmed it (``memdir stale --confirm``), else the last commit made before the memory was
written: its file time, and never later than the end of its ``updated`` date (which travels with
export and team sync when file times do not).

What "changed" means: for an identifier with a definition (``def``, ``class``, ``function``,
``fn``, ``const``, an assignment…), the definition's block compared line by line with whitespace
and comments ignored, so a reformat or an edit elsewhere in a big file is not a change of it; for
a path the memory names without naming anything inside it, more than a tenth of its non-blank
lines. The working tree's uncommitted edits are not evidence: the tree at ``HEAD`` is.
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import PurePosixPath

from memdir.evidence.anchors import Anchor, derive, package_anchors
from memdir.evidence.repo import Git
from memdir.evidence.verdict import Evidence, Verdict

CHANGED_SHARE = 0.1  # a path-only anchor whose lines changed more than this is "changed"
MAX_BLOCK_LINES = 300
MAX_DEF_FILES = 8
_MANIFESTS = ("package.json", "pyproject.toml", "requirements.txt", "requirements-dev.txt",
              "Cargo.toml", "go.mod", "Gemfile", "setup.cfg", "environment.yml")  # fmt: skip
_DEP_LINE = re.compile(r"^\s*([A-Za-z][\w.-]*)\s*(?:[=<>~!\[;@ ]|$)")
_TOML_DEP = re.compile(r"""["']([A-Za-z][\w.-]*)\s*(?:[=<>~!\[;@ ]|["'])""")


def baseline(
    git: Git,
    head: str,
    mtime: float,
    updated: str | None,
    verified: str | None,
    timeline: Timeline | None = None,
) -> str | None:
    if verified:
        resolved = git.resolve(verified)
        if resolved:
            return resolved
    when = mtime
    if updated:
        try:
            day = dt.date.fromisoformat(str(updated)[:10])
            end = dt.datetime.combine(day, dt.time.max, tzinfo=dt.UTC).timestamp()
            when = min(when, end)
        except ValueError:
            pass
    if timeline is not None:
        return timeline.before(when)
    return git.commit_before(when, head)


class Timeline:
    """The commits of ``head``'s history by date, read once: a whole dir's baselines (``memdir
    stale``, ``doctor``) without one ``git rev-list`` per memory."""

    def __init__(self, git: Git, head: str, limit: int = 200_000) -> None:
        out = git.text("rev-list", "--timestamp", f"--max-count={limit}", head) or ""
        pairs = [line.split() for line in out.splitlines()]
        ordered = sorted((int(p[0]), p[1]) for p in pairs if len(p) == 2 and p[0].isdigit())
        self.times = [t for t, _ in ordered]
        self.commits = [c for _, c in ordered]

    def before(self, when: float) -> str | None:
        i = bisect.bisect_right(self.times, int(when))
        return self.commits[i - 1] if i else None


def declared_packages(git: Git, rev: str) -> set[str]:
    """Dependency names the repository's root manifests declare at ``rev`` (lower case)."""
    specs = [f"{rev}:{name}" for name in _MANIFESTS]
    names: set[str] = set()
    for spec, found in git.contents(specs).items():
        data = found[2] if found is not None else None
        if not data:
            continue
        text = data.decode("utf-8", "replace")
        if spec.endswith("package.json"):
            names |= _npm_names(text)
        elif spec.endswith((".toml", ".cfg", ".yml")):
            names |= {m.group(1).lower() for m in _TOML_DEP.finditer(text)}
            names |= {m.group(1).lower() for m in _DEP_LINE.finditer(text) if "=" in m.group(0)}
        else:
            for line in text.splitlines():
                if match := _DEP_LINE.match(line.split("#")[0]):
                    names.add(match.group(1).lower())
    return names


def _npm_names(text: str) -> set[str]:
    try:
        data = json.loads(text)
    except ValueError:
        return set()
    names: set[str] = set()
    if not isinstance(data, dict):
        return names
    for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        deps = data.get(key)
        if isinstance(deps, dict):
            names |= {str(k).lower() for k in deps}
    manager = data.get("packageManager")
    if isinstance(manager, str):
        names.add(manager.split("@")[0].lower())
    return names


def _normalised(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        stripped = "".join(line.split())
        if stripped and not stripped.startswith(("#", "//", "/*", "*")):
            out.append(stripped)
    return out


def _definition(text: str, name: str) -> list[str] | None:
    """The normalised block of ``name``'s definition in ``text``, None when it defines none.

    A function's block is all of it; a class's (struct, trait, …) is its interface — the header
    and its members' signature lines — so an edit inside one method is not a change of the class
    a memory names (that method, named itself, is compared whole).
    """
    last = re.escape(re.split(r"\.|::", name)[-1])
    pattern = re.compile(
        rf"^([ \t]*)(?:(?:export|pub|public|private|static|async|default|abstract)\s+)*"
        rf"(?:(def|class|function|func|fn|interface|type|struct|enum|trait|module|impl|const|let|"
        rf"var|val)\s+(?:\([^)]*\)\s*)?{last}\b|{last}\s*(?::[^=]*)?=[^=])",
        re.MULTILINE,
    )
    match = pattern.search(text)
    if match is None:
        return None
    lines = text[match.start() :].splitlines()
    indent = len(match.group(1).expandtabs())
    block = [lines[0]]
    for line in lines[1:MAX_BLOCK_LINES]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            if line.strip().startswith(("}", "end", ")")):
                block.append(line)
            break
        block.append(line)
    if match.group(2) in _CONTAINERS:
        block = [block[0], *(line for line in block[1:] if _MEMBER.match(line))]
    return _normalised("\n".join(block))


_CONTAINERS = frozenset({"class", "struct", "interface", "trait", "enum", "module", "impl"})
_MEMBER = re.compile(
    r"^\s+(?:(?:export|pub|public|private|protected|static|async|abstract|override)\s+)*"
    r"(?:def|function|func|fn)\s+\w+"
)


def _share_changed(old: str, new: str) -> float:
    a, b = Counter(_normalised(old)), Counter(_normalised(new))
    total = max(sum(a.values()), sum(b.values()), 1)
    return 1 - sum((a & b).values()) / total


class Checker:
    """Verdicts for the memories of one repository, from one ``HEAD`` (see the module doc)."""

    def __init__(self, git: Git, head: str) -> None:
        self.git = git
        self.head = head
        self._declared: dict[str, set[str]] = {}
        self._paths: dict[str, list[str] | None] = {}
        self._renames: dict[str, dict[str, str]] = {}

    def declared(self, rev: str) -> set[str]:
        if rev not in self._declared:
            self._declared[rev] = declared_packages(self.git, rev)
        return self._declared[rev]

    def files_with(self, word: str, rev: str) -> list[str] | None:
        found = self.git.grep_files(word, [rev])
        return None if found is None else found[rev]

    def tree(self, rev: str) -> list[str] | None:
        if rev not in self._paths:
            self._paths[rev] = self.git.paths(rev)
        return self._paths[rev]

    def check(self, text: str, base: str | None) -> Evidence:
        found = derive(text)
        evidence = Evidence(base=base, skipped=list(found.skipped))
        if base is None:
            evidence.skipped.append("no commit before the memory was written: nothing to compare")
            return evidence
        anchors = found.anchors + package_anchors(text, found.words, self.declared(base))
        named = [a.text.rstrip("/") for a in anchors if a.kind == "path" and "/" in a.text]
        symbol_homes: set[str] = set()
        verdicts: list[Verdict | None] = []
        for anchor in anchors:
            if self.git.deadline.left() <= 0:
                verdicts.append(Verdict(anchor.text, anchor.kind, "unchecked", "time budget"))
                continue
            if anchor.kind in ("symbol", "command"):
                verdicts.append(self._word(anchor, base, symbol_homes, named))
            elif anchor.kind == "package":
                verdicts.append(self._package(anchor, base))
            else:
                verdicts.append(None)  # paths last: a symbol inside a path carries it
        for anchor, verdict in zip(anchors, verdicts, strict=True):
            if anchor.kind == "path":
                if self.git.deadline.left() <= 0:
                    verdict = Verdict(anchor.text, "path", "unchecked", "time budget")
                else:
                    verdict = self._path(anchor, base, symbol_homes)
            if verdict is None:
                evidence.skipped.append(f"{anchor.text[:60]}: not in the repository when written")
            else:
                evidence.verdicts.append(verdict)
        return evidence

    # -- one anchor each -------------------------------------------------------------------------
    def _package(self, anchor: Anchor, base: str) -> Verdict:
        state = "current" if anchor.text in self.declared(self.head) else "gone"
        detail = "" if state == "current" else "no longer a declared dependency"
        return Verdict(anchor.text, "package", state, detail, anchor.depends)

    def _word(
        self, anchor: Anchor, base: str, homes: set[str], named: Sequence[str] = ()
    ) -> Verdict | None:
        """Cheapest first: the files the memory names, at both ends (a small grep); else where
        the word is now (one grep of the tree) and whether those files had it then; the whole
        tree as it was only to tell "gone" or "moved" from "never here"."""
        word, kind, depends = anchor.text, anchor.kind, anchor.depends
        if "." in word and not word.startswith("-"):  # `blob.bin`: a file first
            as_path = self._path(Anchor(word, "path", depends), base, set())
            if as_path is not None:
                return as_path
        failed = Verdict(word, kind, "unchecked", "git grep failed", depends)
        if named:
            local = self.git.grep_files(word, [base, self.head], paths=named[:50])
            if local is None:
                return failed
            kept = [f for f in local[base] if f in local[self.head]]
            if kept:
                homes.update(local[base])
                return self._same_place(anchor, base, kept)
        now = self.files_with(word, self.head)
        if now is None:
            return failed
        if now:
            there = self.git.grep_files(word, [base], paths=now[:50])
            if there is None:
                return failed
            if there[base]:
                homes.update(there[base])
                return self._same_place(anchor, base, there[base])
        was = self.files_with(word, base)
        if was is None:
            return failed
        if not was:
            return None  # never in this repository: a git flag, a shell builtin, another project
        homes.update(was)
        if not now:
            return Verdict(word, kind, "gone", f"in no tracked file now (was in {was[0]})", depends)
        return Verdict(word, kind, "moved", f"now in {now[0]} (was in {was[0]})", depends)

    def _same_place(self, anchor: Anchor, base: str, files: list[str]) -> Verdict:
        """Still where it was: current, unless its definition there changed."""
        if anchor.kind == "symbol":
            changed = self._definition_changed(anchor.text, base, files)
            if changed:
                return Verdict(anchor.text, "symbol", "changed", changed, anchor.depends)
        return Verdict(anchor.text, anchor.kind, "current", "", anchor.depends)

    def _definition_changed(self, name: str, base: str, files: list[str]) -> str:
        for path in files[:MAX_DEF_FILES]:
            both = self.git.contents([f"{base}:{path}", f"{self.head}:{path}"])
            old, new = both.get(f"{base}:{path}"), both.get(f"{self.head}:{path}")
            if old is None or new is None or old[0] == new[0]:
                continue
            before, after = old[2], new[2]
            if before is None or after is None:
                continue
            was = _definition(before.decode("utf-8", "replace"), name)
            if was is None:
                continue
            now = _definition(after.decode("utf-8", "replace"), name)
            if now != was:
                count, subject = self.git.history(base, self.head, [path])
                return f"its definition in {path} changed: {count} commit(s), latest {subject!r}"
            return ""
        return ""

    def _path(self, anchor: Anchor, base: str, homes: set[str]) -> Verdict | None:
        path = anchor.text.rstrip("/")
        if "/" not in path:  # a bare file name: the one file of that name, if only one
            tree = self.tree(base) or []
            named = [p for p in tree if PurePosixPath(p).name == path]
            if len(named) != 1:
                return None
            path = named[0]
        objs = self.git.objects([f"{base}:{path}", f"{self.head}:{path}"])
        old, new = objs.get(f"{base}:{path}"), objs.get(f"{self.head}:{path}")
        if old is None:
            return None  # not in the repository when written
        if new is None:
            return self._missing(anchor, path, base, old[1])
        if old[0] == new[0] or new[1] == "tree" or path in homes:
            return Verdict(anchor.text, "path", "current", "", anchor.depends)
        both = self.git.contents([f"{base}:{path}", f"{self.head}:{path}"], known=objs)
        was, now = both.get(f"{base}:{path}"), both.get(f"{self.head}:{path}")
        before, after = (was[2] if was else None), (now[2] if now else None)
        if before is not None and after is not None:
            share = _share_changed(
                before.decode("utf-8", "replace"), after.decode("utf-8", "replace")
            )
            if share <= CHANGED_SHARE:
                return Verdict(anchor.text, "path", "current", "", anchor.depends)
        count, subject = self.git.history(base, self.head, [path])
        detail = f"{count} commit(s) since, latest {subject!r}"
        return Verdict(anchor.text, "path", "changed", detail, anchor.depends)

    def _missing(self, anchor: Anchor, path: str, base: str, kind: str) -> Verdict:
        if base not in self._renames:
            self._renames[base] = self.git.renames(base, self.head)
        moved = self._renames[base]
        target = moved.get(path)
        if target is None and kind == "tree":
            inside = {
                new.rsplit("/", 1)[0] for old, new in moved.items() if old.startswith(path + "/")
            }
            target = inside.pop() if len(inside) == 1 else None
        if target is None:
            name = PurePosixPath(path).name
            same = [p for p in self.tree(self.head) or [] if PurePosixPath(p).name == name]
            target = same[0] if len(same) == 1 else None
        if target is not None:
            return Verdict(anchor.text, "path", "moved", f"now {target}", anchor.depends)
        return Verdict(anchor.text, "path", "gone", "no such path now", anchor.depends)


__all__ = ["Checker", "baseline", "declared_packages"]
