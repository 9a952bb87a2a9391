"""``memdir stale``: the memories whose anchors the code has outgrown, and their repair.

    memdir stale                      # memories with changed, moved or gone anchors
    memdir stale --confirm NAME       # a person or agent checked it: compare from HEAD on
    memdir stale --retire NAME --reason "…"
    memdir stale --diff REV           # what checking out REV would make stale (pre-commit, CI)

Exit status: 0, or 1 when memories are listed (so a CI step or pre-commit hook can fail on it).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memdir.cli.context import CliContext
from memdir.cli.output import table
from memdir.errors import ConfigError, MemoryNotFoundError

SCAN_SECONDS = 120.0  # the whole dir, every anchor: a listing may take its time


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("stale", help="memories whose anchors changed, moved or are gone")
    p.add_argument("--confirm", metavar="NAME", help="re-anchor NAME at HEAD after checking it")
    p.add_argument("--retire", metavar="NAME", help="retire NAME (with --reason)")
    p.add_argument("--reason", help="why the memory is retired")
    p.add_argument("--diff", metavar="REV", help="check against commit REV instead of HEAD")
    p.add_argument("--all", action="store_true", help="list every memory with anchors")
    p.set_defaults(handler=cmd_stale)


def _rows(ctx: CliContext, rev: str | None) -> list[dict[str, Any]]:
    from memdir.evidence import screen

    store = ctx.store()
    headers = store.list()
    screened = screen(
        [str(h.path) for h in headers],
        ctx.paths.project_root,
        None if rev else ctx.paths.cache_dir,
        budget=SCAN_SECONDS,
        rev=rev,
    )
    rows = []
    for header, checked in zip(headers, screened, strict=True):
        ev = checked.evidence
        if not ev.verdicts and not ctx.args.all:
            continue
        if not ev.stale and not ctx.args.all:
            continue
        rows.append(
            {
                "path": header.filename,
                "state": "held back" if ev.held_back else (ev.state or "no anchors"),
                "anchors": ", ".join(
                    f"{v.anchor} {v.state}" for v in ev.verdicts if v.state != "current"
                )
                or "-",
                "evidence": ev.report(),
                "base": ev.base,
                "skipped": ev.skipped,
            }
        )
    return rows


def _confirm(ctx: CliContext, name: str) -> int:
    from memdir.evidence.repo import Deadline
    from memdir.evidence.service import repository
    from memdir.frontmatter import with_keys

    store = ctx.store()
    rel = store.rel(name)
    if not store.exists(rel):
        raise MemoryNotFoundError(f"no memory {rel!r} in {ctx.memory_dir}")
    found = repository(ctx.paths.project_root, Deadline(10.0))
    if found is None:
        raise ConfigError(f"{ctx.paths.project_root} is not a git repository with a commit")
    head = found[1]
    text = store.read_text(rel)
    store.write_text(rel, with_keys(text, {"verified": head}), expected_hash=store.file_hash(rel))
    message = f"{rel}: confirmed at {head[:12]}; its anchors are compared from this commit on"
    ctx.out.data({"confirmed": rel, "verified": head}, message)
    return 0


def cmd_stale(ctx: CliContext) -> int:
    a = ctx.args
    if a.confirm:
        return _confirm(ctx, a.confirm)
    if a.retire:
        if not a.reason:
            raise ConfigError("--retire needs --reason: why the memory no longer holds")
        from memdir.consolidate.forget import retire

        rel = retire(ctx.store(), a.retire, reason=a.reason)
        ctx.out.data({"retired": rel, "reason": a.reason}, f"retired {rel}: {a.reason}")
        return 0
    rows = _rows(ctx, a.diff)
    where = f"at {a.diff}" if a.diff else "at HEAD"
    if not rows:
        ctx.out.data([], f"no stale memories {where} ({Path(ctx.memory_dir)})")
        return 0
    text = table(rows, ["path", "state", "anchors"])
    hint = "check each against the code; then `memdir stale --confirm NAME` or `--retire NAME`"
    ctx.out.data(rows, f"{text}\n{len(rows)} memories to check {where}: {hint}")
    return 1 if any(r["state"] != "current" for r in rows) else 0
