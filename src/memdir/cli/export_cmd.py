"""``memdir export`` (the memory dir as one portable bundle) and ``memdir export agents-md``.

A bundle is restored with ``memdir import bundle <file>`` (or :func:`memdir.bundle.restore_bundle`).
``SOURCE_DATE_EPOCH``, when set, is the export time written into the manifest, so the same memory
dir gives the same bundle bytes (reproducible-builds convention). See docs/export.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from memdir.cli.context import CliContext
from memdir.errors import ConfigError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="write the memory dir as one portable bundle (.tar.gz)")
    p.add_argument("--out", type=Path, help="bundle path (default: memdir-export-<date>.tar.gz)")
    p.add_argument(
        "--scope",
        choices=("all", "private", "team"),
        default="all",
        help="all (default), private memory only, or team/ only",
    )
    p.add_argument("--force", action="store_true", help="replace an existing file at --out")
    p.set_defaults(handler=cmd_export)
    what = p.add_subparsers(dest="export_what", metavar="[agents-md]")
    agents = what.add_parser(
        "agents-md", help="feedback and user memories as a marked section of AGENTS.md"
    )
    agents.add_argument(
        "--file",
        type=Path,
        help="AGENTS.md (default), CLAUDE.md, GEMINI.md or any path; relative to the checkout root",
    )
    agents.add_argument("--dry-run", action="store_true", help="show the section, write nothing")
    agents.add_argument(
        "--remove", action="store_true", help="take memdir's section out, byte for byte"
    )
    agents.add_argument(
        "--include-private",
        action="store_true",
        help="include private memories even though git would commit the file",
    )
    agents.add_argument("--budget", type=int, help="section size cap in bytes (default 8000)")
    agents.set_defaults(handler=cmd_agents_md)


def _export_time(env: Any) -> dt.datetime | None:
    raw = env.get("SOURCE_DATE_EPOCH")
    if not raw:
        return None
    try:
        return dt.datetime.fromtimestamp(int(raw), tz=dt.UTC)
    except (ValueError, OverflowError, OSError):
        raise ConfigError(f"SOURCE_DATE_EPOCH={raw!r} is not a Unix time in seconds") from None


def cmd_export(ctx: CliContext) -> int:
    from memdir.bundle import export_bundle

    now = _export_time(ctx.env)
    out = ctx.args.out
    if out is None:
        day = (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%d")
        out = Path(f"memdir-export-{day}.tar.gz")
    out = out if out.is_absolute() else ctx.cwd / out
    result = export_bundle(
        ctx.memory_dir, out, scope=ctx.args.scope, now=now, overwrite=ctx.args.force
    )
    summary = result.manifest.summary()
    payload = {
        "out": str(result.out),
        "memory_dir": str(ctx.memory_dir),
        **summary,
        "archive_bytes": result.archive_bytes,
        "archive_sha256": result.archive_sha256,
        "left_out": [{"path": p, "why": why} for p, why in result.left_out],
    }
    for path, why in result.left_out:
        ctx.out.warn(f"not exported: {path}: {why}")
    ctx.out.data(
        payload,
        f"Exported {summary['files']} files ({summary['bytes']} bytes, scope {summary['scope']}) "
        f"to {result.out}\nRestore with: memdir import bundle {result.out}",
    )
    return 0


def cmd_agents_md(ctx: CliContext) -> int:
    from memdir import marked_section
    from memdir.agents_md import DEFAULT_BUDGET, apply_plan, plan_section, resolve_target
    from memdir.paths import find_git_root

    args = ctx.args
    if args.budget is not None and args.budget < 500:
        raise ConfigError("--budget must be at least 500 bytes")
    checkout = find_git_root(ctx.cwd) or ctx.cwd
    file = args.file or Path("AGENTS.md")
    target = resolve_target(file if file.is_absolute() else checkout / file, checkout)
    plan = plan_section(
        ctx.memory_dir,
        target,
        include_private=args.include_private,
        budget=args.budget or DEFAULT_BUDGET,
        remove=args.remove,
    )
    if not args.dry_run:
        apply_plan(plan)
    if plan.private_left_out:
        ctx.out.warn(
            f"left out {len(plan.private_left_out)} private memories: git would commit "
            f"{target.name}; pass --include-private to include them anyway, or use a file git "
            "ignores (e.g. --file CLAUDE.local.md)"
        )
    for path, found in plan.secrets_left_out:
        ctx.out.warn(f"left out {path}: it holds a credential ({', '.join(found)})")
    if plan.over_budget:
        ctx.out.warn(f"{len(plan.over_budget)} memories did not fit the size budget")
    done = "would change" if args.dry_run else "changed"
    action = ("remove" if args.remove else "write") if plan.changed else "unchanged"
    payload = {
        "file": str(target),
        "action": action,
        "dry_run": bool(args.dry_run),
        "git_would_commit": plan.committed,
        "included": list(plan.included),
        "private_left_out": list(plan.private_left_out),
        "secrets_left_out": [{"path": p, "labels": list(f)} for p, f in plan.secrets_left_out],
        "over_budget": list(plan.over_budget),
        "section_bytes": plan.section_bytes,
    }
    lines = [
        f"{target}: {done if plan.changed else 'unchanged'}"
        + ("" if args.remove else f" ({len(plan.included)} memories, {plan.section_bytes} bytes)")
    ]
    if args.dry_run and plan.text is not None and not args.remove:
        span = marked_section.find(plan.text, str(target))
        if span is not None:
            lines += ["", plan.text[span.start : span.end].rstrip("\r\n")]
    ctx.out.data(payload, "\n".join(lines))
    return 0
