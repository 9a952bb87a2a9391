"""Read-only git plumbing for the evidence check, every call bounded by a deadline.

Invariants:
- Only ``git`` read commands (``rev-parse``, ``rev-list``, ``cat-file``, ``grep``, ``log``,
  ``diff``, ``ls-tree``) run, in the repository's own directory, with no pager, no prompts and
  no config that could run a program (``core.fsmonitor``, external diff and textconv are off).
- Nothing is read outside the repository: paths are looked up as ``<commit>:<path>`` in git's
  object store, which cannot name a file outside the tree or follow a symlink out of it.
- A git that fails, a corrupt ``.git``, a shallow clone missing an object or a call past the
  deadline yields "unknown" (None / empty), never an exception into recall.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_OUTPUT = 4 * 1024 * 1024  # bytes read from one git call; a bigger answer is cut
MAX_BLOB = 2 * 1024 * 1024  # a file bigger than this is compared by its object id only
_SAFE = ["-c", "core.fsmonitor=false", "-c", "core.quotepath=off", "-c", "diff.external="]
_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
    "GIT_LITERAL_PATHSPECS": "1",  # a memory's path is a name, never pathspec magic
}
MAX_MEMO = 4096  # git grep answers kept per process (a commit's tree never changes)
_GREPS: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], dict[str, list[str]]] = {}


class Deadline:
    """A monotonic point in time every git call of one check stays within."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.expired = False

    def left(self) -> float:
        return self.at - time.monotonic()


@dataclass
class Git:
    """One repository's object store, read with bounded ``git`` calls."""

    root: Path
    deadline: Deadline

    def run(self, *args: str, stdin: bytes | None = None) -> bytes | None:
        """stdout of ``git args`` (cut at :data:`MAX_OUTPUT`), or None on failure or timeout."""
        left = self.deadline.left()
        if left <= 0:
            self.deadline.expired = True
            return None
        env = {**os.environ, **_ENV}
        env.pop("GIT_DIR", None)
        env.pop("GIT_WORK_TREE", None)
        try:
            proc = subprocess.Popen(
                ["git", *_SAFE, "-C", str(self.root), *args],
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        except OSError:
            return None
        try:
            out, _ = proc.communicate(stdin, timeout=left)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=0.5)
            self.deadline.expired = True
            return None
        if proc.returncode not in (0, 1):  # 1: grep found nothing, a normal answer
            return None
        return out[:MAX_OUTPUT] if proc.returncode == 0 else b""

    def text(self, *args: str) -> str | None:
        out = self.run(*args)
        return None if out is None else out.decode("utf-8", "replace")

    def head(self) -> str | None:
        out = self.text("rev-parse", "--verify", "-q", "HEAD^{commit}")
        return out.strip() or None if out else None

    def resolve(self, rev: str) -> str | None:
        if rev.startswith("-") or "\x00" in rev or "\n" in rev:
            return None
        out = self.text("rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}")
        return out.strip() or None if out else None

    def commit_before(self, when: float, tip: str) -> str | None:
        """The last commit on ``tip`` made at or before ``when`` (seconds since the epoch)."""
        out = self.text("rev-list", "-1", f"--before={int(when)}", tip)
        return out.strip() or None if out else None

    def objects(self, specs: list[str]) -> dict[str, tuple[str, str, int] | None]:
        """For each ``rev:path``: (object id, type, size) or None when there is no such object."""
        specs = [s for s in specs if "\n" not in s]
        if not specs:
            return {}
        out = self.run("cat-file", "--batch-check", stdin="\n".join(specs).encode() + b"\n")
        found: dict[str, tuple[str, str, int] | None] = dict.fromkeys(specs)
        if out is None:
            return found
        for spec, line in zip(specs, out.decode("utf-8", "replace").splitlines(), strict=False):
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                found[spec] = (parts[0], parts[1], int(parts[2]))
        return found

    def contents(
        self, specs: list[str], known: dict[str, tuple[str, str, int] | None] | None = None
    ) -> dict[str, tuple[str, str, bytes | None] | None]:
        """For each ``rev:path``: (object id, type, its bytes — None for a directory or a file
        over :data:`MAX_BLOB`, which is never read) or None when there is no such object.
        ``known``: :meth:`objects` already asked for these specs."""
        objs = known if known is not None else self.objects(specs)
        wanted = sorted({o[0] for o in objs.values() if o and o[1] == "blob" and o[2] <= MAX_BLOB})
        data: dict[str, bytes] = {}
        out = (
            self.run("cat-file", "--batch", stdin="\n".join(wanted).encode() + b"\n")
            if wanted
            else b""
        )
        at = 0
        while out and at < len(out):
            end = out.find(b"\n", at)
            header = out[at:end].decode("utf-8", "replace").split() if end >= 0 else []
            if len(header) != 3 or not header[2].isdigit():
                break
            size = int(header[2])
            data[header[0]] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1  # the content, then a newline
        return {
            spec: None if obj is None else (obj[0], obj[1], data.get(obj[0]))
            for spec, obj in objs.items()
        }

    def grep_files(
        self, word: str, revs: list[str], paths: Sequence[str] = (), limit: int = 200
    ) -> dict[str, list[str]] | None:
        """For each commit in ``revs``: its tracked files (among ``paths``, when given) holding
        ``word`` as a whole word (fixed string); one ``git grep`` for all of them. Commits
        never change, so answers are kept for the life of the process (the daemon's)."""
        revs = list(dict.fromkeys(revs))
        key = (str(self.root), word, tuple(revs), tuple(paths))
        if key in _GREPS:
            return _GREPS[key]
        out = self.run(
            "grep", "-I", "-l", "-z", "-F", "-w", "--full-name", "-e", word, *revs,
            "--", *(paths or ["."]),
        )  # fmt: skip
        if out is None:
            return None
        found: dict[str, list[str]] = {rev: [] for rev in revs}
        for name in out.decode("utf-8", "replace").split("\0"):
            rev, _, path = name.partition(":")
            if path and rev in found and len(found[rev]) < limit:
                found[rev].append(path)
        if len(_GREPS) >= MAX_MEMO:
            _GREPS.pop(next(iter(_GREPS)))
        _GREPS[key] = found
        return found

    def paths(self, rev: str) -> list[str] | None:
        out = self.run("ls-tree", "-r", "-z", "--name-only", "--full-tree", rev)
        if out is None:
            return None
        return [n for n in out.decode("utf-8", "replace").split("\0") if n]

    def renames(self, base: str, tip: str) -> dict[str, str]:
        """Old path -> new path for files renamed between two commits."""
        out = self.text("diff", "--no-ext-diff", "--no-textconv", "-M", "--name-status", "-z",
                        base, tip)  # fmt: skip
        if not out:
            return {}
        fields = out.split("\0")
        moved: dict[str, str] = {}
        i = 0
        while i < len(fields) - 1:
            status = fields[i]
            if status.startswith(("R", "C")) and i + 2 < len(fields):
                if status.startswith("R"):
                    moved[fields[i + 1]] = fields[i + 2]
                i += 3
            else:
                i += 2
        return moved

    def history(self, base: str, tip: str, paths: list[str]) -> tuple[int, str]:
        """(commits between base and tip touching ``paths``, the latest one's subject)."""
        out = self.text("log", "--format=%s", f"{base}..{tip}", "--", *paths[:20])
        if not out:
            return 0, ""
        subjects = out.splitlines()
        return len(subjects), subjects[0][:120] if subjects else ""


_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def read_head(start: Path) -> tuple[Path, str] | None:
    """(work tree root, HEAD commit) read from the files git keeps — no process, for the prompt
    path; None whenever anything is unusual (the caller then asks git itself)."""
    for folder in (start, *start.parents):
        dotgit = folder / ".git"
        try:
            if dotgit.is_dir():
                gitdir = dotgit
            elif dotgit.is_file():  # a worktree or submodule: "gitdir: <path>"
                line = dotgit.read_text(encoding="utf-8", errors="replace").strip()
                if not line.startswith("gitdir: "):
                    return None
                gitdir = (folder / line.removeprefix("gitdir: ").strip()).resolve()
            else:
                continue
            return _head_of(folder, gitdir)
        except OSError:
            return None
    return None


def _head_of(root: Path, gitdir: Path) -> tuple[Path, str] | None:
    head = (gitdir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    if _SHA.fullmatch(head):
        return root, head  # detached
    if not head.startswith("ref: refs/"):
        return None
    ref = head.removeprefix("ref: ")
    if ".." in ref or not re.fullmatch(r"refs/[\w./-]+", ref):
        return None
    common = gitdir
    if (gitdir / "commondir").is_file():
        common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
    for base in (gitdir, common):
        loose = base / ref
        if loose.is_file():
            sha = loose.read_text(encoding="utf-8", errors="replace").strip()
            return (root, sha) if _SHA.fullmatch(sha) else None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[1] == ref and _SHA.fullmatch(parts[0]):
                return root, parts[0]
    return None  # an unborn branch, reftable, …: git knows


__all__ = ["MAX_BLOB", "Deadline", "Git", "read_head"]
