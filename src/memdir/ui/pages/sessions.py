"""Sessions: a timeline per session from the hook log (``memdir hook log``) — prompts, what
recall injected, what extraction saved, compactions — and the session notes at the end.

The hook log keeps paths and the start of each prompt, not scores; the page links each prompt
to "Why it surfaced", which re-runs recall's explain on it against the memories as they are now.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memdir.adapters.hooks import hooklog
from memdir.errors import MemdirError
from memdir.ui.context import UiContext
from memdir.ui.render import Pages


def sessions(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary per session id, most recent first."""
    by_id: dict[str, dict[str, Any]] = {}
    for row in rows:
        sid = str(row.get("session") or "")
        if not sid:
            continue
        s = by_id.setdefault(sid, {"id": sid, "first": row.get("ts"), "events": 0, "injected": 0})
        s["last"] = row.get("ts")
        s["events"] += 1
        s["injected"] += len(row.get("injected") or [])
        if row.get("prompt") and "prompt" not in s:
            s["prompt"] = row["prompt"]
    return sorted(by_id.values(), key=lambda s: s.get("last") or 0, reverse=True)


def inside(ctx: UiContext, paths: Any) -> list[tuple[str, bool]]:
    """Logged paths as (shown, is a memory here): relative when inside the memory dir."""
    out = []
    for raw in paths if isinstance(paths, list) else []:
        path = Path(str(raw))
        if path.is_absolute() and path.is_relative_to(ctx.memory_dir):
            out.append((path.relative_to(ctx.memory_dir).as_posix(), True))
        else:
            out.append((str(raw), not path.is_absolute()))
    return out


def notes_for(ctx: UiContext, session_id: str) -> tuple[str, str] | None:
    """(path, text) of the session's notes file, when there is one."""
    try:
        path = ctx.paths.session_memory_path(session_id)
        return str(path), path.read_text(encoding="utf-8", errors="replace")
    except (MemdirError, OSError):
        return None


def routes(pages: Pages, read_only: bool) -> list[Route]:
    ctx = pages.ctx

    async def index(request: Request) -> Response:
        rows = await run_in_threadpool(hooklog.read, ctx.cache_dir, limit=0)
        return pages.render(
            request,
            "sessions.html",
            sessions=sessions(rows),
            log=str(hooklog.log_path(ctx.cache_dir)),
        )

    async def timeline(request: Request) -> Response:
        sid = request.path_params["session"]
        rows = await run_in_threadpool(hooklog.read, ctx.cache_dir, session=sid, limit=0)
        names = {h.filename: h for h in await run_in_threadpool(ctx.headers)}
        for row in rows:
            for key in ("injected", "written", "removed"):
                row[f"{key}_shown"] = inside(ctx, row.get(key))
        notes = await run_in_threadpool(notes_for, ctx, sid)
        status = 200 if rows else 404
        return pages.render(
            request, "session.html", code=status, sid=sid, rows=rows, notes=notes, names=names
        )

    return [
        Route("/sessions", index, name="sessions"),
        Route("/sessions/{session}", timeline, name="session"),
    ]
