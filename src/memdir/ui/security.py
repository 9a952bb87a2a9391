"""The checks every request to ``memdir ui`` passes, before any page code runs.

Invariants:
- **Host**: only the names the server was started for (``127.0.0.1:<port>``, ``localhost:<port>``
  or the explicit ``--host``). A DNS-rebinding page cannot reach the app through its own name.
- **Token**: a random token per start. The URL printed (and opened) carries it once; the app
  trades it for an HttpOnly, SameSite=Strict cookie and redirects to the same URL without it.
  Every request without the cookie (or the token) gets 403 — static files included.
- **Same origin** for every state-changing request: ``Origin`` must be this server's origin
  (a browser always sends it on POST; a request with none is refused), and the form must carry
  the CSRF token (:func:`check_csrf`, called by every write route through ``checked_form``).
- **No CORS**: no ``Access-Control-*`` header is ever sent; ``OPTIONS`` is refused.
- Every answer carries a strict Content-Security-Policy (scripts and styles only from this
  server, no inline script, no frames), ``nosniff``, a same-origin referrer policy and ``no-store``.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memdir.errors import CsrfError

SAFE_METHODS = frozenset({"GET", "HEAD"})
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # "same-origin", not "no-referrer": under no-referrer a browser sends `Origin: null` on
    # form posts, and the origin check needs the real one. Other sites still get no referrer.
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
REFUSED_TOKEN = "memdir ui: this page needs the link `memdir ui` printed (its token)."


def cookie_name(port: int) -> str:
    return f"memdir_ui_{port}"


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    names = {host, "127.0.0.1", "localhost"} if host in ("127.0.0.1", "localhost") else {host}
    wrapped = {f"[{n}]" if ":" in n else n for n in names}
    return frozenset(f"{n}:{port}" for n in wrapped)


class Guard:
    """ASGI middleware: host, token and origin checks, plus the security headers."""

    def __init__(self, app: ASGIApp, *, token: str, hosts: Iterable[str], port: int) -> None:
        self.app = app
        self.token = token
        self.hosts = frozenset(hosts)
        self.cookie = cookie_name(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        method = scope["method"]
        host = headers.get("host", "")
        if host not in self.hosts:
            await _plain(send, 421, "memdir ui: unknown host name")
            return
        query = scope.get("query_string", b"").decode("latin-1")
        params = parse_qsl(query, keep_blank_values=True)
        given = dict(params).get("token")
        if given is not None and method in SAFE_METHODS:
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                await _plain(send, 403, REFUSED_TOKEN)
                return
            rest = urlencode([(k, v) for k, v in params if k != "token"])
            # "/" + the path without leading slashes: "//host/x" would redirect off-site
            where = "/" + scope["path"].lstrip("/") + (f"?{rest}" if rest else "")
            await _redirect(send, where, self._set_cookie())
            return
        if not hmac.compare_digest(self._cookie(headers).encode(), self.token.encode()):
            await _plain(send, 403, REFUSED_TOKEN)
            return
        if method not in SAFE_METHODS:
            if method != "POST":
                await _plain(send, 405, "memdir ui: method not allowed")
                return
            origin = headers.get("origin")
            if origin != f"{scope.get('scheme', 'http')}://{host}":
                await _plain(send, 403, "memdir ui: refused a request from another origin")
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _cookie(self, headers: dict[str, str]) -> str:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is simply no cookie
            return ""
        morsel = jar.get(self.cookie)
        return morsel.value if morsel is not None else ""

    def _set_cookie(self) -> bytes:
        return f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict".encode()


async def checked_form(request: Request, csrf: str) -> FormData:
    """The posted form, once its CSRF token is this start's (else :class:`CsrfError`)."""
    form = await request.form()
    check_csrf(str(form.get("csrf", "")), csrf)
    return form


def check_csrf(given: str, expected: str) -> None:
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise CsrfError("this form is from an earlier start of `memdir ui`; reload the page")


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, location: str, cookie: bytes) -> None:
    headers = [(b"location", location.encode()), (b"set-cookie", cookie), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})
