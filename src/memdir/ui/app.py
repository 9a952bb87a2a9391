"""Assembly: the Starlette app of ``memdir ui`` from a :class:`~memdir.ui.context.UiContext`.

Behaviour lives in the page modules; this only stacks them behind the guard
(:mod:`memdir.ui.security`) and turns errors into pages.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from memdir.errors import CsrfError
from memdir.ui import live
from memdir.ui.context import UiContext
from memdir.ui.pages import dream, health, index_md, memories, recall, sessions
from memdir.ui.render import HERE, Pages
from memdir.ui.security import Guard, allowed_hosts

PAGES = (memories, index_md, recall, sessions, dream, health)


def create_app(ctx: UiContext, *, host: str = "127.0.0.1", port: int = 8765) -> Starlette:
    """The app; ``host``/``port`` are what the server listens on (the Host header must match)."""
    pages = Pages(ctx)

    async def home(request: Request) -> Response:
        return RedirectResponse("/memories", status_code=303)

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 405:
            return PlainTextResponse("memdir ui: method not allowed\n", status_code=405)
        return pages.render(request, "missing.html", code=status, rel=request.url.path)

    async def csrf_refused(request: Request, exc: Exception) -> Response:
        return PlainTextResponse(f"memdir ui: {exc}\n", status_code=403)

    routes: list[BaseRoute] = [Route("/", home)]
    for page in PAGES:
        routes += page.routes(pages, ctx.read_only)
    routes += live.routes(ctx)
    routes.append(Mount("/static", StaticFiles(directory=HERE / "static"), name="static"))
    guard = Middleware(Guard, token=ctx.token, hosts=allowed_hosts(host, port), port=port)
    return Starlette(
        routes=routes,
        middleware=[guard],
        exception_handlers={HTTPException: not_found, CsrfError: csrf_refused},
    )
