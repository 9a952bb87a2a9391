"""The watcher with real inotify events, a real server and short debounce intervals."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memdir.errors import (
    SyncAuthError,
    SyncConflictError,
    SyncError,
    SyncRejectedError,
)
from memdir.team.client import TeamSyncClient
from memdir.team.watcher import TeamWatcher, is_permanent
from tests.team.conftest import Remote
from tests.team.services import ServerProcess
from tests.team.test_client import make_client, tree, write_files


@pytest.fixture(scope="module")
def backend_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Watcher behaviour does not depend on the backend: SQLite only, to keep the suite fast."""
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('srv') / 'team.db'}"
    server = ServerProcess(url, max_entries=100).start()
    try:
        yield server
    finally:
        server.stop()


async def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


class Running:
    """A watcher running as an asyncio task, the way an agent would host it."""

    def __init__(self, client: TeamSyncClient, **options: Any):
        self.events: list[tuple[str, Any]] = []
        self.watcher = TeamWatcher(client, report=self._record, **options)
        self.stop = asyncio.Event()
        self.task = asyncio.create_task(self.watcher.run(self.stop))

    def _record(self, kind: str, payload: Any) -> None:
        self.events.append((kind, payload))

    async def started(self) -> None:
        await eventually(lambda: any(kind in ("pull", "error") for kind, _ in self.events))
        await asyncio.sleep(0.2)  # let awatch install its inotify watches

    async def finish(self) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, 20)

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]


def server_keys(remote: Remote) -> set[str]:
    state = remote.state()
    return set(state.entry_checksums) if state else set()


async def test_files_written_while_no_watcher_ran_are_pushed_at_start(
    remote: Remote, tmp_path: Path
) -> None:
    async with make_client(remote, tmp_path) as client:
        write_files(client.team_dir, {"offline.md": "written while the watcher was down"})
        running = Running(client, debounce=0.1, pull_interval=None)
        await running.started()
        await eventually(lambda: "offline.md" in server_keys(remote))
        await running.finish()


async def test_initial_pull_then_push_on_change(remote: Remote, tmp_path: Path) -> None:
    async with make_client(remote, tmp_path, "seed") as seeder:
        write_files(seeder.team_dir, {"seed.md": "from the server"})
        await seeder.push()
    async with make_client(remote, tmp_path, "b") as client:
        running = Running(client, debounce=0.1, pull_interval=None)
        await running.started()
        assert tree(client.team_dir) == {"seed.md": "from the server"}
        write_files(client.team_dir, {"new.md": "written locally"})
        await eventually(lambda: "new.md" in server_keys(remote))
        await running.finish()


async def test_a_burst_of_writes_is_one_push(remote: Remote, tmp_path: Path) -> None:
    async with make_client(remote, tmp_path) as client:
        running = Running(client, debounce=1.0, pull_interval=None)
        await running.started()
        for i in range(5):
            write_files(client.team_dir, {f"m{i}.md": f"{i}"})
            await asyncio.sleep(0.02)
        await eventually(lambda: len(server_keys(remote)) == 5)
        await asyncio.sleep(0.6)
        await running.finish()  # the final flush push finds nothing to send
    uploads = [p.uploaded for kind, p in running.events if kind == "push" and p.uploaded]
    assert uploads == [[f"m{i}.md" for i in range(5)]]
    state = remote.state()
    assert state is not None and state.version == 1


async def test_change_during_an_in_flight_push_rearms(remote: Remote, tmp_path: Path) -> None:
    started = asyncio.Event()

    async def slow_put(request: httpx.Request) -> None:
        if request.method == "PUT":
            started.set()
            await asyncio.sleep(0.8)

    http = httpx.AsyncClient(event_hooks={"request": [slow_put]})
    async with make_client(remote, tmp_path, http=http) as client:
        running = Running(client, debounce=0.1, pull_interval=None)
        await running.started()
        write_files(client.team_dir, {"first.md": "1"})
        await asyncio.wait_for(started.wait(), 10)
        write_files(client.team_dir, {"second.md": "2"})  # lands while the PUT is in flight
        await eventually(lambda: server_keys(remote) == {"first.md", "second.md"})
        await running.finish()
    await http.aclose()
    assert running.watcher.pushes >= 2


async def test_permanent_failure_suppresses_pushes_until_a_delete(
    remote: Remote, tmp_path: Path
) -> None:
    async with make_client(remote, tmp_path, token="mdt_revoked") as client:
        running = Running(client, debounce=0.1, pull_interval=None)
        await running.started()
        write_files(client.team_dir, {"a.md": "1"})
        await eventually(lambda: running.watcher.suppressed is not None)
        errors = running.kinds().count("error")
        write_files(client.team_dir, {"b.md": "2"})
        await eventually(lambda: "suppressed" in running.kinds())
        assert running.kinds().count("error") == errors  # no request was made
        (client.team_dir / "a.md").unlink()
        await eventually(lambda: running.kinds().count("error") == errors + 1)
        await running.finish()
    assert all(isinstance(p, SyncAuthError) for k, p in running.events if k == "error")


@pytest.mark.parametrize("hook", [True, False])
async def test_shutdown_flushes_pending_changes(remote: Remote, tmp_path: Path, hook: bool) -> None:
    async with make_client(remote, tmp_path) as client:
        running = Running(client, debounce=30.0, pull_interval=None)
        await running.started()
        write_files(client.team_dir, {"late.md": "written just before exit"})
        if hook:
            running.watcher.notify()  # as a memory write hook would
        await running.finish()  # without the hook: stops before inotify even reports it
    assert server_keys(remote) == {"late.md"}


async def test_two_watchers_converge_through_periodic_pulls(remote: Remote, tmp_path: Path) -> None:
    async with make_client(remote, tmp_path, "a") as a, make_client(remote, tmp_path, "b") as b:
        wa = Running(a, debounce=0.1, pull_interval=0.3)
        wb = Running(b, debounce=0.1, pull_interval=0.3)
        await wa.started()
        await wb.started()
        write_files(a.team_dir, {"from-a.md": "A"})
        write_files(b.team_dir, {"from-b.md": "B"})
        expected = {"from-a.md": "A", "from-b.md": "B"}
        await eventually(lambda: tree(a.team_dir) == expected == tree(b.team_dir), timeout=15)
        await wa.finish()
        await wb.finish()


@pytest.mark.parametrize(
    ("exc", "permanent"),
    [
        (SyncAuthError("no"), True),
        (SyncRejectedError("gone", status=404), True),
        (SyncRejectedError("too many", status=413), True),
        (SyncRejectedError("conflict", status=409), False),
        (SyncRejectedError("slow down", status=429), False),
        (SyncConflictError("moving"), False),
        (SyncError("network"), False),
    ],
)
def test_is_permanent(exc: SyncError, permanent: bool) -> None:
    assert is_permanent(exc) is permanent
