"""Why it surfaced: recall's own explain (``memdir recall --explain``) for a query — every
candidate's lexical, semantic and fused scores and the rule that let it through or held it back.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memdir.errors import MemdirError
from memdir.recall.explain import explain
from memdir.ui.render import Pages

MAX_QUERY_CHARS = 4000


def routes(pages: Pages, read_only: bool) -> list[Route]:
    ctx = pages.ctx

    async def search(request: Request) -> Response:
        query = request.query_params.get("q", "")[:MAX_QUERY_CHARS]
        explained, error = [], None
        if query.strip():
            try:
                selector = await run_in_threadpool(ctx.selector)
                headers = await run_in_threadpool(ctx.headers)
                explained = await run_in_threadpool(explain, selector, headers, query)
            except MemdirError as exc:  # e.g. the recall extra is missing
                error = str(exc)
        return pages.render(request, "recall.html", q=query, explained=explained, error=error)

    return [Route("/recall", search, name="recall")]
