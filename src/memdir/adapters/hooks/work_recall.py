"""Recall at session start on what the repository is being worked on, for hosts that cannot
add context at each prompt (Cursor: its ``beforeSubmitPrompt`` may only allow or block).

The query is what git says of the current work — the branch, the last commits' subjects and
the paths they and the uncommitted changes touch — read with two ``git`` processes run side by
side (bounded by :data:`GIT_TIMEOUT`) while the session start builds its other blocks, offline.
A dialect opts in with ``recall_at_start = True``.

Invariants: no git, no repository or a git that hangs gives no query and no recall, never an
error; the memories go through the session state like any recall (never twice in a session)
and fit the room the session-start text leaves.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.adapters.hooks.handlers import log_event, recall_for, with_evidence

if TYPE_CHECKING:
    from memdir.adapters.hooks.handlers import HookContext
    from memdir.adapters.hooks.hookio import HookInput

GIT_TIMEOUT = 2.0  # seconds for both git calls
COMMITS = 5
MAX_PATHS = 20
MAX_QUERY_CHARS = 600
WORK_INTRO = (
    "Memories that may be relevant to the current work in this repository (from memdir, "
    "recalled on the branch and recent commits; verify before relying):"
)
_PLAIN_BRANCHES = {"main", "master", "trunk", "develop", "HEAD"}


def _git_start(cwd: Path, *commands: list[str]) -> list[subprocess.Popen[bytes] | None]:
    """Each ``git`` command started, side by side (None for one that could not start)."""
    procs: list[subprocess.Popen[bytes] | None] = []
    for args in commands:
        try:
            procs.append(
                subprocess.Popen(
                    ["git", "-C", str(cwd), *args],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # its own group: a timeout ends its children too
                )
            )
        except OSError:
            procs.append(None)
    return procs


def _git_collect(procs: list[subprocess.Popen[bytes] | None], deadline: float) -> list[str]:
    """The stdout of each started command ('' for one that failed or ran past ``deadline``)."""
    out: list[str] = []
    for proc in procs:
        if proc is None:
            out.append("")
            continue
        try:
            data, _ = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=0.5)
            data = b""
        out.append(data.decode("utf-8", "replace") if proc.returncode == 0 else "")
    return out


def begin_work_query(cwd: Path) -> Callable[[], tuple[str, tuple[str, ...]]]:
    """Start reading the work in the repository at ``cwd``; the call returned waits for it and
    gives :func:`work_query`'s answer. The session start builds its other blocks meanwhile."""
    procs = _git_start(
        cwd,
        ["status", "--porcelain=v2", "--branch", "--untracked-files=no"],
        ["log", f"-{COMMITS}", "--format=%x00%s", "--name-only"],
    )
    deadline = time.monotonic() + GIT_TIMEOUT
    return lambda: _parse_work(*_git_collect(procs, deadline))


def work_query(cwd: Path) -> tuple[str, tuple[str, ...]]:
    """(query, paths) for the work in the repository at ``cwd``; ('', ()) for none."""
    return begin_work_query(cwd)()


def _parse_work(status: str, log: str) -> tuple[str, tuple[str, ...]]:
    branch = ""
    paths: list[str] = []
    for line in status.splitlines():
        if line.startswith("# branch.head "):
            branch = line.split(" ", 2)[2].strip()
        elif line[:2] in ("1 ", "2 "):  # the path is the last field and may hold spaces
            fields = line.split(" ", 8 if line[0] == "1" else 9)
            paths.append(fields[-1].split("\t")[0])
    subjects: list[str] = []
    for chunk in log.split("\x00")[1:]:
        lines = [x.strip() for x in chunk.splitlines() if x.strip()]
        if lines:
            subjects.append(lines[0])
            paths += lines[1:]
    words = [] if branch in _PLAIN_BRANCHES else [re.sub(r"[/_-]+", " ", branch)]
    unique = list(dict.fromkeys(p for p in paths if p))[:MAX_PATHS]
    stems = [Path(p).stem for p in unique]
    query = " ".join([*words, *subjects, *dict.fromkeys(stems)]).strip()
    return query[:MAX_QUERY_CHARS], tuple(unique)


def work_memories(
    inp: HookInput, hc: HookContext, room: int, work: tuple[str, tuple[str, ...]]
) -> str:
    """The block (intro and memories) recalled on ``work`` (:func:`work_query`) within
    ``room`` characters, '' for none."""
    from memdir.prompt_context import RecallContext

    started = time.perf_counter()
    query, paths = work
    if not hc.settings.auto_memory_enabled or room < 400:
        return ""
    if not query:
        log_event(hc, inp, started, via="none", skipped="no git history to recall on")
        return ""
    sessions = hc.sessions
    before = sessions.load(inp.session_id)
    recaller = hc.recaller or recall_for
    context = RecallContext(files=paths)
    found, how = recaller(hc, query, before.surfaced, context, inp.session_id)
    found, evidence = with_evidence(hc, found)
    budget = room - len(WORK_INTRO) - 2
    with sessions.update(inp.session_id) as state:
        injected = state.accept(found, max_chars=budget)
    text = "\n\n".join([WORK_INTRO, *(m.text for m in injected)]) if injected else ""
    log_event(
        hc,
        inp,
        started,
        via=how,
        prompt=query[:300],
        injected=[m.path for m in injected],
        chars=len(text),
        evidence=evidence or None,
        text=text,
    )
    return text


__all__ = ["WORK_INTRO", "begin_work_query", "work_memories", "work_query"]
