"""``memdir backfill``: learn from this project's past sessions of each host.

The entry point of :mod:`memdir.backfill`: it builds the hosts' transcript sources from their
dialects, the extractor from the settings (the host model, ``MEMDIR_MODEL``/``--model``, or the
offline rules), shows the plan and the estimated cost, asks before spending (unless ``--yes``),
and turns SIGINT/SIGTERM into "stop after this transcript" (a second signal stops at once; the
cursor is written after every transcript either way).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.backfill import Backfill, BackfillCursor, Plan, Report, estimate, make_plan
from memdir.backfill.cost import MODEL_WINDOW_CHARS
from memdir.cli import backfill_parts as parts
from memdir.cli.backfill_view import Progress, plan_text, report_text
from memdir.cli.context import CliContext
from memdir.errors import ConfigError, LockHeldError

if TYPE_CHECKING:
    pass


def _date(raw: str) -> dt.date:
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {raw!r}") from None


def _count(raw: str) -> int:
    if not raw.isdigit():
        raise argparse.ArgumentTypeError(f"not a count: {raw!r}")
    return int(raw)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("backfill", help="learn memories from this project's past sessions")
    p.add_argument("--host", choices=(*parts.HOSTS, "all"), default="all", help="whose sessions")
    p.add_argument("--since", type=_date, help="only sessions modified on or after YYYY-MM-DD")
    p.add_argument("--limit", type=_count, help="at most N transcripts this run")
    p.add_argument("--offline", action="store_true", help="the offline rules only (no model)")
    p.add_argument("--model", help="provider spec (default: MEMDIR_MODEL, else the host model)")
    p.add_argument("--yes", "-y", action="store_true", help="start a model run without asking")
    p.add_argument("--dry-run", action="store_true", help="print the plan; change nothing")
    p.set_defaults(handler=cmd_backfill)


def _confirm(ctx: CliContext, question: str) -> bool:
    if ctx.args.yes:
        return True
    if ctx.out.json_mode or not sys.stdin.isatty():
        raise ConfigError(f"{question}: pass --yes to start it (or --offline for no model)")
    ctx.out.stderr.write(f"{question}. Start? [y/N] ")
    ctx.out.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


@contextmanager
def _stop_on_signals(ctx: CliContext) -> Iterator[list[bool]]:
    """A flag set by the first SIGINT/SIGTERM (stop after this transcript); a second one
    raises KeyboardInterrupt. Handlers are restored afterwards (tests call main in-process)."""
    stop = [False]

    def handler(signum: int, frame: object) -> None:
        if stop[0]:
            raise KeyboardInterrupt
        stop[0] = True
        ctx.out.stderr.write("\nmemdir: stopping after this transcript (again to stop now)\n")

    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: no handlers, the default behaviour stays
        pass
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _payload(ctx: CliContext, plan: Plan, spec: str | None, report: Report | None) -> Any:
    root = ctx.memory_dir

    def rel(path: Path) -> str:
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)

    body: dict[str, Any] = {
        "mode": "model" if spec else "offline",
        "model": spec,
        "found": plan.total,
        "done_before": plan.done,
        "planned": [
            {"host": i.host, "path": str(i.path), "size": i.size, "state": i.state}
            for i in plan.items
        ],
        "estimate": None,
    }
    if spec is not None:
        est = estimate(spec, (i.size for i in plan.items))
        body["estimate"] = {
            "input_tokens": est.input_tokens,
            "output_tokens": est.output_tokens,
            "usd": None if est.usd is None else round(est.usd, 4),
        }
    if report is not None:
        outcomes = report.outcomes
        body |= {
            "processed": len(outcomes),
            "learnt": report.count("learnt"),
            "nothing_new": report.count("nothing new"),
            "skipped": [
                {"path": str(o.item.path), "reason": o.reason}
                for o in outcomes
                if o.status == "skipped"
            ],
            "failed": [
                {"path": str(o.item.path), "reason": o.reason}
                for o in outcomes
                if o.status == "failed"
            ],
            "written": sorted({rel(p) for o in outcomes for p in o.written}),
            "removed": sorted({rel(p) for o in outcomes for p in o.removed}),
            "remaining": len(plan.items) - len(outcomes),
            "stopped": report.stopped,
        }
    return body


def cmd_backfill(ctx: CliContext) -> int:
    from memdir.atomic import locked

    sources = parts.sources(ctx)
    cursor_path = ctx.paths.cache_dir / "backfill" / "cursor.json"
    spec, offline_why = parts.model_spec(ctx, sources)
    plan = make_plan(
        sources, BackfillCursor(cursor_path), since=ctx.args.since, limit=ctx.args.limit
    )
    if ctx.args.dry_run:
        payload = _payload(ctx, plan, spec, None)
        ctx.out.data(payload, plan_text(plan, spec, offline_why, parts.left_today(ctx, spec)))
        return 0
    if spec is not None and plan.items:
        est = estimate(spec, (i.size for i in plan.items))
        left = parts.left_today(ctx, spec)
        budget = "" if left is None else f"; today's budget left: ${left:.2f}"
        if not _confirm(ctx, est.line(spec) + budget):
            ctx.out.data(_payload(ctx, plan, spec, None), "Nothing done.")
            return 0
    try:
        with locked(cursor_path.with_name("backfill.lock"), timeout=1.0):
            cursor = BackfillCursor(cursor_path)  # what a run that just ended wrote
            plan = make_plan(sources, cursor, since=ctx.args.since, limit=ctx.args.limit)
            report = _run(ctx, plan, cursor, sources, spec, offline_why)
    except LockHeldError:
        raise LockHeldError("another memdir backfill is running for this memory dir") from None
    ctx.out.data(_payload(ctx, plan, spec, report), report_text(ctx.memory_dir, plan, report))
    if report.stopped == "interrupted":
        return 130
    return 2 if report.count("failed") else 0


def _run(
    ctx: CliContext,
    plan: Plan,
    cursor: BackfillCursor,
    sources: list[Any],
    spec: str | None,
    offline_why: str,
) -> Report:
    if spec is None and offline_why != "--offline" and plan.items:
        ctx.out.warn(f"{offline_why}; learning with the offline rules")
    progress = Progress(ctx.out.stderr, ctx.memory_dir)
    check = None
    if spec is not None:
        from memdir.adapters.hooks.hostmodel import host_cli_module, host_ledger

        if host_cli_module(spec) is not None:
            check = host_ledger(ctx.settings).check
    with _stop_on_signals(ctx) as stop:
        backfill = Backfill(
            parts.extractor_for(ctx, spec),
            cursor,
            sources,
            include_meta=spec is not None,
            window_chars=MODEL_WINDOW_CHARS if spec is not None else None,
            should_stop=lambda: stop[0],
            check_budget=check,
            on_progress=progress.update,
            covered=parts.hook_cursor(ctx),
        )
        try:
            return asyncio.run(backfill.run(plan))
        finally:
            progress.close()


__all__ = ["cmd_backfill", "register"]
