"""A memory dir, its resolved settings and a TestClient holding this start's token cookie."""

from __future__ import annotations

import argparse
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from memdir.cli.context import CliContext
from memdir.cli.output import Output
from memdir.store import MemoryStore
from memdir.ui.app import create_app
from memdir.ui.context import UiContext

TOKEN = "test-token-0123456789abcdef"
ORIGIN = "http://127.0.0.1:8765"


class Ui:
    """One project: memory dir, ``memdir ui``'s context, and a client for it."""

    def __init__(self, tmp_path: Path, *, read_only: bool = False) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.mem = tmp_path / "mem"
        for d in (self.home, self.project, self.mem):
            d.mkdir(exist_ok=True)
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        env = {"HOME": str(self.home), "MEMDIR_HOME": str(self.home / ".memdir")}
        cli = CliContext(
            env=env, cwd=self.project, out=Output(), args=argparse.Namespace(dir=self.mem)
        )
        self.cli = cli
        self.ctx = UiContext(
            settings=cli.settings,
            paths=cli.paths,
            make_store=cli.store,
            token=TOKEN,
            read_only=read_only,
        )
        self.app = create_app(self.ctx, host="127.0.0.1", port=8765)

    @property
    def store(self) -> MemoryStore:
        return self.cli.store()

    def client(self, *, login: bool = True) -> TestClient:
        client = TestClient(self.app, base_url=ORIGIN, follow_redirects=True)
        if login:
            assert client.get(f"/?token={TOKEN}").status_code == 200
        return client

    def post(self, client: TestClient, url: str, data: dict[str, str]) -> str:
        """Submit a form as the page does (same origin, CSRF token); returns the page HTML."""
        response = client.post(
            url, data={"csrf": self.ctx.csrf, **data}, headers={"Origin": ORIGIN}
        )
        assert response.status_code == 200, response.text
        return response.text


@pytest.fixture
def ui(tmp_path: Path) -> Iterator[Ui]:
    yield Ui(tmp_path)


def hidden(html: str, name: str) -> str:
    """The value of the first hidden input called ``name`` in a page."""
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found is not None, f"no {name} field"
    return found.group(1)


def replay_hooks(ui: Ui, session: str, *events: tuple[str, dict[str, object]]) -> None:
    """Run hook events in-process exactly as ``memdir hook <event>`` does (no daemon), over a
    finished index (``memdir reindex``): a cold hook recall answers from what it could read
    within its deadline, which a loaded CI machine can spend before reading a single memory."""
    import json

    from memdir.adapters.hooks.runner import HookFlags, make_context, run_event
    from memdir.adapters.hosts.claude_code.dialect import DIALECT, EVENTS
    from memdir.recall.factory import local_selector

    selector = local_selector(ui.mem, ui.ctx.cache_dir, background=False)
    selector.refresh()
    selector.complete()

    env = {
        "HOME": str(ui.home),
        "MEMDIR_HOME": str(ui.home / ".memdir"),
        "MEMDIR_HOOK_DAEMON": "0",
        "MEMDIR_HOOK_EXTRACT": "off",
    }
    flags = HookFlags(memory_dir=ui.mem)
    for event, extra in events:
        payload = {
            "session_id": session,
            "transcript_path": str(ui.project / f"{session}.jsonl"),
            "cwd": str(ui.project),
            "hook_event_name": EVENTS[event],
            **extra,
        }
        run_event(
            event,
            json.dumps(payload).encode(),
            DIALECT,
            lambda cwd: make_context(env, cwd or ui.project, flags, DIALECT),
            lambda: ui.ctx.cache_dir,
        )
