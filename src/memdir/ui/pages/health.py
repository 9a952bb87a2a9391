"""Health: ``memdir doctor``'s findings, one-click ``doctor --fix`` where it has a fix, and the
team dir's sync state as this machine last saw it (no network call)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memdir import repair
from memdir.doctor import FIXABLE_KINDS, diagnose
from memdir.ui.context import UiContext
from memdir.ui.render import Pages
from memdir.ui.security import checked_form

# Drift `memdir index rebuild` repairs (the Rebuild button): dead links, missing and twin lines.
INDEX_KINDS = frozenset({"index-dead_links", "index-unindexed", "index-duplicates"})


def team_status(ctx: UiContext) -> dict[str, Any] | None:
    """The team dir's files and what is waiting for upload, from the saved sync state."""
    team_dir = ctx.paths.team_dir
    if not team_dir.is_dir():
        return None
    from memdir.team.client_state import SyncState, pending_upload, read_local, state_path

    local = read_local(team_dir)
    settings = ctx.settings
    configured = bool(settings.team_sync_url and settings.team_repo)
    state = SyncState()
    if configured:
        assert settings.team_sync_url and settings.team_repo
        where = state_path(ctx.cache_dir, settings.team_sync_url, settings.team_repo, team_dir)
        state = SyncState.load(where)
    return {
        "team_dir": str(team_dir),
        "configured": configured,
        "url": settings.team_sync_url,
        "repo": settings.team_repo,
        "local_files": len(local.entries),
        "server_entries": len(state.server_checksums),
        "last_checksum": state.last_checksum,
        "pending_upload": pending_upload(local, state) if configured else [],
        "skipped": [{"path": s.key, "reason": s.reason} for s in local.skipped],
    }


def routes(pages: Pages, read_only: bool) -> list[Route]:
    ctx = pages.ctx

    async def show(request: Request) -> Response:
        diagnosis = await run_in_threadpool(diagnose, ctx.store())
        team = await run_in_threadpool(team_status, ctx)
        counts = Counter(p["kind"] for p in diagnosis.problems).most_common()
        return pages.render(
            request,
            "health.html",
            d=diagnosis,
            counts=counts,
            fixable=FIXABLE_KINDS,
            index_kinds=INDEX_KINDS,
            team=team,
        )

    async def fix(request: Request) -> Response:
        form = await checked_form(request, ctx.csrf)
        path = str(form.get("path", ""))
        store = ctx.store()
        rels = [store.rel(path)] if path else []
        done = await run_in_threadpool(lambda: repair.fix(store, rels, everything=not rels))
        messages = [("ok" if f.ok else "error", f"{f.path}: {f.action}") for f in done]
        return pages.redirect("/health", *(messages or [("ok", "nothing to repair")]))

    out = [Route("/health", show, name="health")]
    if not read_only:
        out.append(Route("/health/fix", fix, methods=["POST"]))
    return out
