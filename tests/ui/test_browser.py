"""``memdir ui`` in a real headless Chromium (Debian's, driven by Playwright): what a new user
does, end to end, against a real ``memdir ui`` process."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from memdir.index import read_entrypoint
from tests.consolidate.conftest import tree
from tests.consolidate.test_plan import messy
from tests.ui.browser import CHROMIUM, CHROMIUM_ARGS, have_chromium, running_ui
from tests.ui.conftest import Ui, replay_hooks
from tests.ui.xss import plant_xss

# scripts/install-test-deps.sh installs Chromium: a missing one fails the suite, never skips it
if not have_chromium():
    raise RuntimeError(f"no Chromium at {CHROMIUM}: run scripts/install-test-deps.sh")

import playwright.sync_api as sync_api


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    tab = context.new_page()
    tab.dialogs = []  # type: ignore[attr-defined]
    tab.on("dialog", lambda d: (tab.dialogs.append(d.message), d.dismiss()))
    yield tab
    context.close()


def seed(ui: Ui) -> None:
    ui.store.create("Deploy day", "deploys go out on Tuesdays", "project", "Deploys: Tuesdays.\n")
    ui.store.create("Package manager", "user prefers pnpm over npm", "feedback", "pnpm.\n")
    ui.store.create("Editor", "user edits in neovim", "user", "nvim.\n")


def wait_for(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_list_filter_open_and_edit_the_description(ui: Ui, page: Any) -> None:
    seed(ui)
    with running_ui(ui) as url:
        page.goto(url)
        assert "token=" not in page.url  # traded for a cookie
        rows = page.locator("table.list tbody tr")
        assert rows.count() == 3
        page.keyboard.press("/")  # the keyboard way to the filter
        page.keyboard.type("pnpm")
        page.keyboard.press("Enter")
        page.wait_for_url("**/memories?q=pnpm*")
        assert rows.count() == 1
        page.get_by_role("link", name="Package manager").click()
        page.get_by_label("Description").fill("user prefers pnpm, never yarn")
        page.get_by_role("button", name="Save").click()
        page.wait_for_selector("text=saved package_manager.md")
        assert (
            "description: user prefers pnpm, never yarn"
            in (ui.mem / "package_manager.md").read_text()
        )
        assert "user prefers pnpm, never yarn" in read_entrypoint(ui.mem)


def test_retire_and_see_it_leave_recall(ui: Ui, page: Any) -> None:
    seed(ui)
    with running_ui(ui) as url:
        page.goto(url)
        page.get_by_role("link", name="Why it surfaced").click()
        page.get_by_label("Prompt").fill("which day do deploys go out")
        page.get_by_role("button", name="Explain").click()
        row = page.locator("tr", has=page.get_by_role("link", name="deploy_day.md"))
        assert "injected" in row.inner_text()
        page.get_by_role("link", name="deploy_day.md").click()
        page.get_by_label("Reason").fill("we deploy continuously now")
        page.get_by_role("button", name="Retire").click()
        page.wait_for_selector("text=retired deploy_day.md")
        page.goto(url.split("/?")[0] + "/recall?q=which+day+do+deploys+go+out")
        assert page.get_by_role("link", name="deploy_day.md").count() == 0


def test_a_sessions_injected_memories(ui: Ui, page: Any) -> None:
    seed(ui)
    replay_hooks(
        ui,
        "sess-browser-1",
        ("session-start", {"source": "startup"}),
        ("user-prompt-submit", {"prompt": "which day do deploys go out?"}),
    )
    with running_ui(ui) as url:
        page.goto(url)
        page.get_by_role("link", name="Sessions").click()
        page.get_by_role("link", name="sess-browser").click()
        # a click navigates: wait for the next page instead of asking about it at once
        page.get_by_text("Injected 1 memory").wait_for(state="visible")
        page.locator(".injected").get_by_role("link", name="Deploy day").click()
        heading = page.get_by_role("heading", name="Deploy day", exact=True)
        heading.wait_for(state="visible")
        assert heading.is_visible()


def test_dream_dry_run_apply_undo_restores_the_bytes(ui: Ui, page: Any) -> None:
    messy(ui.mem)
    before = tree(ui.mem)
    with running_ui(ui) as url:
        page.goto(url)
        page.get_by_role("link", name="Dream").click()
        page.get_by_role("link", name="Preview the plan (dry run)").click()
        # a click navigates and the plan takes a moment: wait for it, not count at once
        page.locator(".d-del").first.wait_for(state="visible")
        assert page.locator(".d-del").count() > 0
        assert tree(ui.mem) == before
        page.get_by_role("button", name="Apply this dream").click()
        page.wait_for_selector(".flash.ok")
        assert tree(ui.mem) != before
        page.get_by_role("button", name="Undo").first.click()
        page.wait_for_selector("text=undid dream")
        assert tree(ui.mem) == before


def test_hostile_memory_does_not_execute(ui: Ui, page: Any) -> None:
    rel = plant_xss(ui.mem)
    with running_ui(ui) as url:
        base = url.split("/?")[0]
        page.goto(url)
        for where in ("/memories", f"/memory/{rel}", "/index", "/health"):
            page.goto(base + where)
            page.wait_for_load_state("load")
            assert page.evaluate("window.__pwned") is None, where
        assert page.dialogs == []  # type: ignore[attr-defined]
        page.goto(base + f"/memory/{rel}")
        shown = page.locator(".body").inner_text()
        assert "<script>window.__pwned = 1; alert(1)</script>" in shown  # shown as text


def test_no_token_or_another_origin_is_refused(ui: Ui, browser: Any) -> None:
    seed(ui)
    before = (ui.mem / "editor.md").read_bytes()
    with running_ui(ui) as url:
        base = url.split("/?")[0]
        stranger = browser.new_context().new_page()
        response = stranger.goto(base + "/memories")
        assert response.status == 403 and "Deploy day" not in stranger.content()
        # The user's browser holds the cookie; a page of another local server (same site,
        # other origin: SameSite does not help) posts a form at the UI and fetches it.
        tab = browser.new_context().new_page()
        tab.goto(url)
        form = (
            f'<form id=f method=post action="{base}/retire/editor.md">'
            "<input name=reason value=pwned><input name=csrf value=guess></form>"
            f"<script>fetch('{base}/retire/editor.md', {{method: 'POST', mode: 'no-cors', "
            "credentials: 'include', body: new URLSearchParams({reason: 'pwned'})});"
            "document.getElementById('f').submit()</script>"
        )
        with other_origin(form) as evil:
            with tab.expect_response(lambda r: "/retire/" in r.url) as posted:
                tab.goto(evil)
            assert posted.value.status == 403
        # Same origin but without the form token (a script that got in some other way).
        tab.goto(base + "/memories")
        status = tab.evaluate(
            """async (target) => (await fetch(target, {method: "POST",
                 body: new URLSearchParams({reason: "x"})})).status""",
            base + "/retire/editor.md",
        )
        assert status == 403
    assert (ui.mem / "editor.md").read_bytes() == before


@contextmanager
def other_origin(html: str) -> Iterator[str]:
    """A second local web server (another origin) serving ``html`` at /."""
    body = html.encode()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_live_update_within_two_seconds(ui: Ui, page: Any) -> None:
    seed(ui)
    with running_ui(ui) as url:
        page.goto(url)
        page.wait_for_selector("html[data-live=on]")
        time.sleep(1.2)  # the first poll has recorded the version
        ui.store.create("Written elsewhere", "another agent saved this", "user", "x\n")
        started = time.monotonic()
        page.wait_for_selector("text=Written elsewhere", timeout=5000)
        assert time.monotonic() - started < 5  # documented bound: 2 s (1 s poll)


def test_narrow_window_and_empty_state(tmp_path: Path, browser: Any) -> None:
    ui = Ui(tmp_path)
    context = browser.new_context(viewport={"width": 380, "height": 800})
    tab = context.new_page()
    with running_ui(ui) as url:
        tab.goto(url)
        assert tab.get_by_role("heading", name="No memories yet").is_visible()
        width = tab.evaluate("document.documentElement.scrollWidth")
        assert width <= 380  # nothing forces sideways scrolling
    context.close()
