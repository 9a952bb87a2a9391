"""``memdir import <source> [PATH] [--dry-run]``, ``memdir import --undo [ID]``,
``memdir import --runs``.

Thin over :mod:`memdir.importers`: the dry run prints every item's verdict (written, merged,
skipped and why) and writes nothing; an import prints the counts, the files written and the
command that undoes it. Credentials are reported by rule label only.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from memdir.cli.context import CliContext
from memdir.errors import ConfigError

MAX_TEXT_LINES = 40  # per verdict kind in text mode; JSON mode lists every item


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from memdir.importers.names import SOURCE_NAMES

    p = sub.add_parser(
        "import",
        help="import memories from another tool (claude-code, codex, gemini, claude-mem, ...)",
        description="Import memories from another tool, or undo an import.",
    )
    p.add_argument("source", nargs="?", choices=SOURCE_NAMES, help="what to import from")
    p.add_argument(
        "path", nargs="?", type=Path, help="file or directory (default: its usual place)"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print what would be written; write nothing"
    )
    p.add_argument("--undo", nargs="?", const="", metavar="ID", help="undo the last import (or ID)")
    p.add_argument("--force", action="store_true", help="with --undo: even over later edits")
    p.add_argument("--runs", action="store_true", help="list recent imports and their ids")
    p.set_defaults(handler=cmd_import)


def _snapshots(ctx: CliContext, store: Any) -> Any:
    from memdir.consolidate.snapshot import Snapshots

    return Snapshots(store, ctx.paths.cache_dir / "import" / "snapshots")


def cmd_import(ctx: CliContext) -> int:
    args = ctx.args
    chosen = [bool(args.source), args.undo is not None, args.runs]
    if sum(chosen) != 1:
        raise ConfigError("give a source to import, or --undo [ID], or --runs")
    store = ctx.store()
    snapshots = _snapshots(ctx, store)
    if args.runs:
        return _runs(ctx, snapshots)
    if args.undo is not None:
        return _undo(ctx, snapshots)
    from memdir.importers.names import REQUIRES_PATH

    if args.path is None and args.source in REQUIRES_PATH:
        raise ConfigError(f"memdir import {args.source} needs the file's path")
    if args.source == "bundle":
        return _bundle(ctx, store, snapshots)
    from memdir.importers.service import run_import

    home = Path(ctx.env["HOME"]) if ctx.env.get("HOME") else Path.home()
    path = args.path if args.path is None or args.path.is_absolute() else ctx.cwd / args.path
    outcome = run_import(
        store, args.source, path, snapshots, home=home, env=ctx.env, dry_run=args.dry_run
    )
    plan = outcome.plan
    counts = plan.counts()
    payload: dict[str, Any] = {
        "source": plan.source,
        "path": plan.path,
        "dry_run": args.dry_run,
        "counts": counts,
        "items": [
            {
                "source_id": v.source_id,
                "name": v.name,
                "action": v.action,
                "reason": v.reason,
                "target": v.target,
                "kind": v.kind or None,
            }
            for v in plan.verdicts
        ],
        "snapshot": outcome.applied.snapshot if outcome.applied else None,
    }
    text = _text(plan, counts, args.dry_run, payload["snapshot"])
    if outcome.applied is not None:
        from memdir.index_sections import describe

        payload["index"] = describe(store.root)
        text = _prepare_recall(ctx, payload, f"{text}\nindex: {payload['index']}")
    ctx.out.data(payload, text)
    return 0


def _prepare_recall(ctx: CliContext, payload: dict[str, Any], text: str) -> str:
    """Imported memories are recalled from the next prompt on: have the index built now."""
    from memdir.adapters.recall_prepare import prepare

    line = prepare(ctx.env, ctx.settings.memdir_home, ctx.memory_dir, ctx.paths.cache_dir)
    if line:
        payload["recall"] = line
        return f"{text}\n{line}"
    return text


def _text(plan: Any, counts: dict[str, int], dry_run: bool, snapshot: str | None) -> str:
    verb = "would write" if dry_run else "wrote"
    lines = [
        f"{plan.source} ({plan.path}): {counts['items']} item(s); {verb} {counts.get('write', 0)}, "
        f"merged {counts.get('merge', 0)}, skipped {counts.get('skip', 0)}"
    ]
    kinds = Counter(v.kind for v in plan.verdicts if v.action == "skip")
    if kinds:
        lines.append("skipped: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    marks = {"write": "+", "merge": "~", "skip": "-"}
    for action in ("write", "merge", "skip"):
        chosen = [v for v in plan.verdicts if v.action == action]
        for v in chosen[:MAX_TEXT_LINES]:
            where = f" -> {v.target}" if v.target else ""
            lines.append(f"  {marks[action]} {v.name[:70]}{where}: {v.reason}")
        if len(chosen) > MAX_TEXT_LINES:
            lines.append(
                f"  ... and {len(chosen) - MAX_TEXT_LINES} more ({action}; --json lists all)"
            )
    if snapshot:
        lines.append(f"to undo: memdir import --undo {snapshot}")
    elif dry_run:
        lines.append("dry run: nothing was written")
    return "\n".join(lines)


def _undo(ctx: CliContext, snapshots: Any) -> int:
    from memdir.importers.apply import undo_import

    result = undo_import(snapshots, ctx.args.undo or None, force=ctx.args.force)
    payload = {
        "snapshot": result.snapshot,
        "restored": result.restored,
        "removed": result.removed,
        "redo_snapshot": result.safety_snapshot,
    }
    text = [
        f"undid import {result.snapshot}: removed {len(result.removed)} file(s), "
        f"restored {len(result.restored)}"
    ]
    text += [f"  - {rel}" for rel in result.removed[:MAX_TEXT_LINES]]
    text.append(f"to redo: memdir import --undo {result.safety_snapshot}")
    ctx.out.data(payload, "\n".join(text))
    return 0


def _runs(ctx: CliContext, snapshots: Any) -> int:
    from memdir.importers.apply import import_runs

    runs = import_runs(snapshots)
    text = [
        f"{r['id']}: {r['source']} {r['path']} ({r['counts'].get('write', 0)} written)"
        + (" (undone)" if r["undone"] else "")
        for r in runs
    ] or ["no imports yet"]
    ctx.out.data({"runs": runs}, "\n".join(text))
    return 0


def _bundle(ctx: CliContext, store: Any, snapshots: Any) -> int:
    from memdir.importers.bundle import describe
    from memdir.importers.service import run_bundle

    path: Path = ctx.args.path
    archive = path if path.is_absolute() else ctx.cwd / path
    payload = run_bundle(store, archive, snapshots, dry_run=ctx.args.dry_run)
    head = f"dry run of {archive}" if ctx.args.dry_run else f"restored {archive}"
    text = f"{head}\n{describe(payload['result'])}"
    if payload["snapshot"]:
        text += f"\nto undo: memdir import --undo {payload['snapshot']}"
        text = _prepare_recall(ctx, payload, text)
    ctx.out.data(payload, text)
    return 0
