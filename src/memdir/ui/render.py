"""Templates, Markdown and flash messages for the pages.

Invariant: memory files are untrusted. Templates autoescape every value; Markdown is rendered
with raw HTML turned off and markdown-it's link check (no ``javascript:``/``data:`` links), and
the Content-Security-Policy (:mod:`memdir.ui.security`) would still block any script or remote
image that slipped through.
"""

from __future__ import annotations

import datetime as dt
import secrets
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

from memdir.age import memory_age
from memdir.ui.context import UiContext

HERE = Path(__file__).resolve().parent
# Images are off too: a memory must not make the browser fetch a remote "pixel" when shown.
_MD = MarkdownIt("commonmark", {"html": False}).disable("image")
MAX_FLASHES = 64


def markdown(text: str) -> Markup:
    """Markdown to HTML with raw HTML escaped (never passed through)."""
    return Markup(_MD.render(text))


def age(mtime: float) -> str:
    return memory_age(mtime, time.time())


def clock(ts: Any) -> str:
    if not isinstance(ts, int | float):
        return ""
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def url_path(rel: str) -> str:
    """A memory's relative path as a URL path segment (every byte that needs it quoted)."""
    return quote(rel, safe="/")


def make_env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(markdown=markdown, age=age, clock=clock, url_path=url_path)
    return env


class Pages:
    """Renders a template with what every page needs (nav, CSRF token, flash, read-only)."""

    def __init__(self, ctx: UiContext) -> None:
        self.ctx = ctx
        self.env = make_env()
        self._flashes: OrderedDict[str, list[tuple[str, str]]] = OrderedDict()

    def render(
        self, request: Request, name: str, *, code: int = 200, **values: Any
    ) -> HTMLResponse:
        flash_id = request.query_params.get("flash", "")
        values.setdefault("flashes", self._flashes.pop(flash_id, []))
        html = self.env.get_template(name).render(
            request=request,
            csrf=self.ctx.csrf,
            read_only=self.ctx.read_only,
            memory_dir=str(self.ctx.memory_dir),
            nav=request.url.path,
            **values,
        )
        return HTMLResponse(html, status_code=code)

    def redirect(self, where: str, *messages: tuple[str, str]) -> RedirectResponse:
        """303 to ``where`` carrying ``(kind, text)`` messages for the next page."""
        if messages:
            key = secrets.token_urlsafe(8)
            self._flashes[key] = list(messages)
            while len(self._flashes) > MAX_FLASHES:
                self._flashes.popitem(last=False)
            where += ("&" if "?" in where else "?") + f"flash={key}"
        return RedirectResponse(where, status_code=303)
