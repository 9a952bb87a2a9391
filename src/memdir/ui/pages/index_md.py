"""MEMORY.md as the model reads it, with its drift from the files highlighted, and the rebuild
(``memdir index check`` / ``memdir index rebuild``)."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memdir.doctor import index_reports
from memdir.index import MAX_ENTRYPOINT_LINES, entry_link, read_entrypoint
from memdir.store import MemoryStore
from memdir.ui.render import Pages
from memdir.ui.security import checked_form


def annotated(store: MemoryStore) -> list[dict[str, Any]]:
    """Each index: its lines, each marked dead / duplicate / long, and the unindexed files."""
    out = []
    for report in index_reports(store):
        text = read_entrypoint(store.root, report["index"])
        lines = []
        for number, line in enumerate(text.splitlines(), start=1):
            link = entry_link(line)
            marks = []
            if link is not None and link in report["dead_links"]:
                marks.append("dead link: no such file")
            if link is not None and link in report["duplicates"]:
                marks.append("listed more than once")
            if number in report["long_lines"]:
                marks.append("longer than 200 characters")
            if number > MAX_ENTRYPOINT_LINES:
                marks.append(f"past line {MAX_ENTRYPOINT_LINES}: the model never sees it")
            lines.append({"number": number, "text": line, "link": link, "marks": marks})
        scope = report["index"].rsplit("MEMORY.md", 1)[0]
        out.append({**report, "lines": lines, "scope": scope})
    return out


def routes(pages: Pages, read_only: bool) -> list[Route]:
    ctx = pages.ctx

    async def show(request: Request) -> Response:
        indexes = await run_in_threadpool(annotated, ctx.store())
        return pages.render(request, "index_md.html", indexes=indexes)

    async def rebuild(request: Request) -> Response:
        await checked_form(request, ctx.csrf)
        written = await run_in_threadpool(ctx.store().rebuild_index)
        return pages.redirect("/index", ("ok", "rebuilt " + (", ".join(written) or "nothing")))

    out = [Route("/index", show, name="index_md")]
    if not read_only:
        out.append(Route("/index/rebuild", rebuild, methods=["POST"]))
    return out
