"""Dream: the offline plan as a diff (``memdir dream --dry-run``), apply it (``memdir dream``),
the past runs and their snapshots (``memdir dream status``), undo (``memdir dream undo``).

The page plans and applies with the same offline dreamer (lexical duplicate check, as
``--no-embeddings``) so what it shows is what apply does; apply re-checks the plan under the
store lock, as the CLI's does.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memdir.consolidate import factory
from memdir.consolidate.offline import OfflineDreamer
from memdir.consolidate.run import maybe_dream
from memdir.errors import MemdirError
from memdir.ui.context import UiContext
from memdir.ui.render import Pages
from memdir.ui.security import checked_form


def dreamer(ctx: UiContext) -> OfflineDreamer:
    store = ctx.store()
    snaps = factory.snapshots(store, ctx.paths)
    return OfflineDreamer(store, snaps, project_root=ctx.paths.project_root)


def runs(ctx: UiContext) -> list[dict[str, Any]]:
    return factory.snapshots(ctx.store(), ctx.paths).summaries(limit=10)


def plan_view(ctx: UiContext) -> dict[str, Any]:
    plan, _, _ = dreamer(ctx).plan()
    diff = plan.diff()
    lines = [{"text": line, "kind": _kind(line)} for line in diff.splitlines()]
    return {"diff": lines, "summary": plan.summary(), "flagged": plan.flagged}


def _kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "ctx")


def routes(pages: Pages, read_only: bool) -> list[Route]:
    ctx = pages.ctx

    async def show(request: Request) -> Response:
        planned = None
        if request.query_params.get("plan"):
            planned = await run_in_threadpool(plan_view, ctx)
        return pages.render(
            request, "dream.html", plan=planned, runs=await run_in_threadpool(runs, ctx)
        )

    async def apply(request: Request) -> Response:
        await checked_form(request, ctx.csrf)
        gate = factory.dream_gate(ctx.settings, ctx.paths)
        outcome = await maybe_dream(gate, dreamer(ctx), force=True)
        if outcome.reason != "ran" or outcome.report is None:
            detail = outcome.reason if outcome.reason != "locked" else "another dream is running"
            return pages.redirect("/dream", ("error", f"dream did not run: {detail}"))
        report = outcome.report.as_dict()
        changed = len(report.get("changed", [])) + len(report.get("retired", []))
        text = report.get("notice") or f"dream applied: {changed} file(s) changed"
        return pages.redirect("/dream", ("ok", str(text)))

    async def undo(request: Request) -> Response:
        form = await checked_form(request, ctx.csrf)
        snap_id = str(form.get("id", "")) or None
        snaps = factory.snapshots(ctx.store(), ctx.paths)
        try:
            result = await run_in_threadpool(snaps.undo, snap_id)
        except MemdirError as exc:
            return pages.redirect("/dream", ("error", str(exc)))
        text = f"restored {len(result.restored)} file(s), removed {len(result.removed)}"
        return pages.redirect("/dream", ("ok", f"undid dream {result.snapshot}: {text}"))

    out = [Route("/dream", show, name="dream")]
    if not read_only:
        out += [
            Route("/dream/apply", apply, methods=["POST"]),
            Route("/dream/undo", undo, methods=["POST"]),
        ]
    return out
