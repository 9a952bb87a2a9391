"""Every request passes the guard: host, token, same origin + CSRF for writes, no CORS, CSP,
escaping of untrusted memory content, and --read-only without any write route."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.hostile import CANARY, HOSTILE_NAMES, plant, snapshot
from tests.ui.conftest import ORIGIN, TOKEN, Ui
from tests.ui.xss import plant_xss

PAGES = ["/memories", "/index", "/recall?q=x", "/sessions", "/dream", "/health", "/new"]
WRITES = [
    ("/new", {"name": "n", "description": "d", "type": "user", "body": "b"}),
    ("/save/a.md", {"name": "n", "description": "changed", "type": "user", "body": "b"}),
    ("/rename/a.md", {"new_path": "b.md"}),
    ("/retire/a.md", {"reason": "old"}),
    ("/delete/a.md", {"confirm": "a.md"}),
    ("/index/rebuild", {}),
    ("/dream/apply", {}),
    ("/dream/undo", {}),
    ("/health/fix", {}),
]


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


@pytest.fixture
def seeded(ui: Ui) -> Ui:
    ui.store.create("A", "first memory", "user", "body\n", rel="a.md")
    return ui


def files(ui: Ui) -> dict[str, bytes]:
    return snapshot(ui.mem)


@pytest.mark.parametrize("url", [*PAGES, "/static/ui.js", "/api/version", "/memory/a.md"])
def test_every_page_needs_the_token(seeded: Ui, url: str) -> None:
    client = seeded.client(login=False)
    response = client.get(url)
    assert response.status_code == 403
    assert "first memory" not in response.text


def test_a_wrong_token_is_refused_and_sets_no_cookie(seeded: Ui) -> None:
    client = seeded.client(login=False)
    response = client.get("/memories?token=guess", follow_redirects=False)
    assert response.status_code == 403
    assert "set-cookie" not in response.headers


def test_the_token_becomes_a_strict_cookie_and_leaves_the_url(seeded: Ui) -> None:
    client = seeded.client(login=False)
    response = client.get(f"/memories?q=x&token={TOKEN}", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/memories?q=x"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert client.get("/memories").status_code == 200


def test_another_host_name_is_refused(seeded: Ui) -> None:
    """DNS rebinding: a page at evil.example resolving to 127.0.0.1 gets nothing."""
    client = seeded.client()
    response = client.get("/memories", headers={"Host": "evil.example:8765"})
    assert response.status_code == 421


@pytest.mark.parametrize(("url", "data"), WRITES, ids=[w[0] for w in WRITES])
@pytest.mark.parametrize("how", ["no-origin", "other-origin", "no-csrf", "wrong-csrf", "no-cookie"])
def test_cross_site_writes_are_refused_and_change_nothing(
    seeded: Ui, url: str, data: dict[str, str], how: str
) -> None:
    client = seeded.client(login=how != "no-cookie")
    before = files(seeded)
    headers = {} if how == "no-origin" else {"Origin": ORIGIN}
    if how == "other-origin":
        headers = {"Origin": "http://evil.example"}
    form = dict(data)
    if how != "no-csrf":
        form["csrf"] = "0" * 64 if how == "wrong-csrf" else seeded.ctx.csrf
    response = client.post(url, data=form, headers=headers, follow_redirects=False)
    assert response.status_code == 403
    assert files(seeded) == before


def test_no_cors_anywhere(seeded: Ui) -> None:
    client = seeded.client()
    preflight = client.options(
        "/save/a.md",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 405
    for url in PAGES:
        response = client.get(url, headers={"Origin": "http://evil.example"})
        assert not [h for h in response.headers if h.lower().startswith("access-control")]


def test_pages_carry_a_strict_content_security_policy(seeded: Ui) -> None:
    headers = seeded.client().get("/memories").headers
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"


@pytest.mark.parametrize(
    "url", ["/memories", "/memory/xss.md", "/index", "/health", "/recall?q=click+pixel"]
)
def test_hostile_memory_content_is_escaped(ui: Ui, url: str) -> None:
    plant_xss(ui.mem)
    html = ui.client().get(url).text
    tags = Tags()
    tags.feed(html)
    assert [t for t, _ in tags.found if t in ("script", "img", "svg", "iframe")] == ["script"]
    attrs = [(k, v or "") for _, a in tags.found for k, v in a]
    assert not [k for k, _ in attrs if k.startswith("on")]  # no event handler attribute
    assert [v for k, v in attrs if k == "src"] == ["/static/ui.js"]  # nothing remote loads
    assert not [v for k, v in attrs if k == "href" and v.startswith("javascript:")]
    assert "49" not in re.findall(r">\s*(\d+)\s*<", html)  # no template ran the {{ 7 * 7 }}


@pytest.mark.parametrize("hostile", HOSTILE_NAMES, ids=str)
def test_hostile_names_never_read_or_write_outside(ui: Ui, tmp_path: Path, hostile: object) -> None:
    name = hostile.name  # type: ignore[attr-defined]
    outside = tmp_path / "outside"
    before = plant(ui.mem, outside)
    client = ui.client()
    shown = client.get("/memory/" + quote(name.encode("utf-8", "surrogatepass"), safe="/"))
    assert CANARY not in shown.text
    ui.store.create("A", "first", "user", "b\n", rel="a.md")
    if "\udcff" in name:  # a browser cannot post a lone surrogate (it sends U+FFFD)
        return
    response = client.post(
        "/rename/a.md",
        data={"csrf": ui.ctx.csrf, "new_path": name},
        headers={"Origin": ORIGIN},
    )
    assert response.status_code == 200
    assert (ui.mem / "a.md").is_file()  # refused: still where it was
    assert snapshot(outside) == before


def test_read_only_serves_no_write_route(tmp_path: Path) -> None:
    ui = Ui(tmp_path, read_only=True)
    ui.store.create("A", "first memory", "user", "body\n", rel="a.md")
    client = ui.client()
    before = files(ui)
    for url, data in WRITES:
        response = client.post(url, data={"csrf": ui.ctx.csrf, **data}, headers={"Origin": ORIGIN})
        assert response.status_code in (404, 405), url
    assert files(ui) == before
    page = client.get("/memory/a.md").text
    assert '<form method="post"' not in page and "first memory" in page
    assert client.get("/new").status_code == 404


async def test_the_token_redirect_never_leaves_the_site(seeded: Ui) -> None:
    """``GET //evil.example/x?token=...`` (a raw path no client normalises) stays on this site."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "path": "//evil.example/x",
        "raw_path": b"//evil.example/x",
        "query_string": f"token={TOKEN}".encode(),
        "headers": [(b"host", b"127.0.0.1:8765")],
    }
    await seeded.app(scope, receive, send)
    start = sent[0]
    assert start["status"] == 303
    assert dict(start["headers"])[b"location"] == b"/evil.example/x"
