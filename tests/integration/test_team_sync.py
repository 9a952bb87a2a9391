"""Team sync end to end: concurrent clients, a server killed mid-push, the CLI as users run it.

Everything is real: uvicorn child processes, SQLite files and a PostgreSQL cluster, HTTP on
127.0.0.1, inotify, and the ``memdir`` command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from memdir.cli.main import main
from memdir.errors import SyncConflictError, SyncError
from memdir.team import wire
from tests.team.conftest import (  # noqa: F401 - fixtures used by name
    Remote,
    backend_server,
    make_token,
    pg_cluster,
    remote,
    run_sync,
)
from tests.team.services import PgCluster, ServerProcess, free_port
from tests.team.test_client import make_client, tree, write_files


class PutLedger:
    """Records every PUT the server accepted: its version and the entries it carried."""

    def __init__(self) -> None:
        self.accepted: list[tuple[int, dict[str, str]]] = []

    async def on_response(self, response: httpx.Response) -> None:
        if response.request.method == "PUT" and response.status_code == 200:
            await response.aread()
            entries = json.loads(response.request.content)["entries"]
            self.accepted.append((response.json()["version"], entries))

    def expected_final(self) -> dict[str, str]:
        final: dict[str, str] = {}
        for _, entries in sorted(self.accepted, key=lambda item: item[0]):
            final.update(entries)
        return final


async def contend(remotes: list[Remote], tmp_path: Path, rounds: int = 3) -> None:
    """One client per entry of ``remotes`` pushing overlapping changes at once; none may be lost."""
    ledger = PutLedger()
    https = [httpx.AsyncClient(event_hooks={"response": [ledger.on_response]}) for _ in remotes]
    clients = [
        make_client(r, tmp_path, f"c{i}", http=h)
        for i, (r, h) in enumerate(zip(remotes, https, strict=True))
    ]
    conflicts_exhausted = 0
    for round_ in range(rounds):
        for i, client in enumerate(clients):
            write_files(
                client.team_dir,
                {f"c{i}-r{round_}.md": f"{i}/{round_}", "shared.md": f"{i} wrote in {round_}"},
            )
        results = await asyncio.gather(*(c.push() for c in clients), return_exceptions=True)
        conflicts_exhausted += sum(isinstance(r, SyncConflictError) for r in results)
        assert not [
            r
            for r in results
            if isinstance(r, BaseException) and not isinstance(r, SyncConflictError)
        ]
    for client in clients:
        await client.aclose()
    for h in https:
        await h.aclose()
    state = remotes[0].state()
    assert state is not None and state.entries is not None
    versions = sorted(v for v, _ in ledger.accepted)
    assert state.version == len(ledger.accepted) and versions == list(range(1, len(versions) + 1))
    assert state.entries == ledger.expected_final()
    assert conflicts_exhausted < len(remotes) * rounds  # most pushes get through


async def test_concurrent_clients_lose_no_update(remote: Remote, tmp_path: Path) -> None:  # noqa: F811
    await contend([remote] * 4, tmp_path)


async def test_two_replicas_on_postgresql_lose_no_update(
    pg_cluster: PgCluster,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Two stateless server processes on one database, clients split between them."""
    url = pg_cluster.create_database()
    replicas = [ServerProcess(url, max_entries=1000).start() for _ in range(2)]
    try:
        token = run_sync(make_token(url, "acme/replicated"))
        one, two = (Remote(server, "acme/replicated", token) for server in replicas)
        await contend([one, two, one, two], tmp_path, rounds=4)
    finally:
        for server in replicas:
            server.stop()


def test_unconditional_puts_from_many_threads_all_land(remote: Remote) -> None:  # noqa: F811
    def writer(i: int) -> None:
        with httpx.Client(headers={"Authorization": f"Bearer {remote.token}"}) as http:
            for j in range(5):
                response = http.put(
                    remote.url + wire.API_PATH,
                    params={"repo": remote.repo},
                    json={"entries": {f"t{i}-{j}.md": "x", "hot.md": f"{i}-{j}"}},
                )
                assert response.status_code == 200

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    state = remote.state()
    assert state is not None and state.version == 30
    assert {f"t{i}-{j}.md" for i in range(6) for j in range(5)} < set(state.entry_checksums)


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Any:
    server = ServerProcess(f"sqlite+aiosqlite:///{tmp_path / 'srv.db'}", max_entries=1000)
    server.start()
    yield server
    server.stop()


def big_files(n: int = 5) -> dict[str, str]:
    return {f"big{i}.md": chr(97 + i) * 110_000 for i in range(n)}  # one file per batch


@pytest.mark.parametrize("kill_on", ["request", "response"])
async def test_server_killed_mid_push_client_retries_against_restart(
    sqlite_server: ServerProcess, tmp_path: Path, kill_on: str
) -> None:
    repo = "acme/crash"
    token = run_sync(make_token(sqlite_server.db_url, repo))
    target = Remote(sqlite_server, repo, token)
    puts = 0

    async def maybe_kill(_: Any) -> None:
        nonlocal puts
        method = _.method if kill_on == "request" else _.request.method
        if method == "PUT":
            puts += 1
            if puts == 2:
                sqlite_server.kill()

    async def restart_then_wait(seconds: float) -> None:
        if sqlite_server.proc is not None and sqlite_server.proc.poll() is not None:
            await asyncio.to_thread(sqlite_server.start)

    http = httpx.AsyncClient(event_hooks={kill_on: [maybe_kill]})
    client = make_client(target, tmp_path, http=http, sleep=restart_then_wait)
    files = big_files()
    write_files(client.team_dir, files)
    before = {p: p.stat().st_mtime_ns for p in client.team_dir.iterdir()}
    result = await client.push()
    await http.aclose()
    state = target.state()
    assert state is not None and state.entries == files
    assert state.checksum == client.state.last_checksum
    assert client.state.server_checksums == state.entry_checksums
    assert set(result.uploaded) <= set(files)  # a batch whose reply was lost shows up via 412
    assert {p: p.stat().st_mtime_ns for p in client.team_dir.iterdir()} == before
    assert tree(client.team_dir) == files


async def test_push_against_a_dead_server_fails_cleanly_then_resumes(
    sqlite_server: ServerProcess, tmp_path: Path
) -> None:
    repo = "acme/dead"
    target = Remote(sqlite_server, repo, run_sync(make_token(sqlite_server.db_url, repo)))
    puts = 0

    async def kill_second(request: httpx.Request) -> None:
        nonlocal puts
        if request.method == "PUT":
            puts += 1
            if puts == 2:
                sqlite_server.kill()

    async def no_wait(seconds: float) -> None:
        return None

    http = httpx.AsyncClient(event_hooks={"request": [kill_second]})
    client = make_client(target, tmp_path, http=http, sleep=no_wait)
    files = big_files(4)
    write_files(client.team_dir, files)
    with pytest.raises(SyncError):
        await client.push()
    await http.aclose()
    assert sorted(client.state.server_checksums) == ["big0.md"]  # only what was accepted
    sqlite_server.start()
    state = target.state()
    assert state is not None and sorted(state.entry_checksums) == ["big0.md"]
    async with make_client(target, tmp_path) as again:
        resumed = await again.push()
    assert resumed.uploaded == ["big1.md", "big2.md", "big3.md"]
    assert target.state().entries == files  # type: ignore[union-attr]


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.06])
def test_sigkill_during_a_large_put_is_all_or_nothing(
    sqlite_server: ServerProcess, delay: float
) -> None:
    repo = "acme/atomic"
    token = run_sync(make_token(sqlite_server.db_url, repo))
    entries = {f"e{i:04}.md": f"entry {i} " * 15 for i in range(1000)}
    assert wire.body_bytes(entries) < wire.MAX_BODY_BYTES
    killer = threading.Timer(delay, sqlite_server.kill)
    killer.start()
    with contextlib.suppress(httpx.TransportError):
        httpx.put(
            sqlite_server.url + wire.API_PATH,
            params={"repo": repo},
            headers={"Authorization": f"Bearer {token}"},
            content=wire.encode_put(entries),
            timeout=10,
        )
    killer.join()
    sqlite_server.kill()
    sqlite_server.start()
    state = Remote(sqlite_server, repo, token).state()
    count = len(state.entry_checksums) if state else 0
    assert count in (0, 1000)
    assert (state.version if state else 0) == (1 if count else 0)


def run_cli(args: list[str], env: dict[str, str]) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["--json", *args], env=env, cwd=Path(env["HOME"]), stdout=out, stderr=err)
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else err.getvalue()


def test_two_memory_dirs_stay_in_sync_through_the_cli(tmp_path: Path) -> None:
    """The docs/team.md walkthrough: serve, create a token, push, pull, watch, status."""
    home = Path(os.environ["HOME"])
    db = tmp_path / "server.db"
    port = free_port()
    base = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "MEMDIR_HOME": str(home / "m")}
    code, created = run_cli(
        ["team", "token", "create", "--repo", "acme/app", "--db", str(db)], base
    )
    assert code == 0 and created["repos"] == ["acme/app"]
    code, listed = run_cli(["team", "token", "list", "--db", str(db)], base)
    assert [t["id"] for t in listed] == [created["id"]]
    serve = subprocess.Popen(
        [sys.executable, "-c", "from memdir.cli.main import run; run()",
         "team", "serve", "--port", str(port), "--db", str(db)],
        env={**os.environ, **base}, stderr=subprocess.PIPE,
    )  # fmt: skip
    watch: subprocess.Popen[str] | None = None
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url)
        env = {**base, "MEMDIR_TEAM_SYNC_URL": url, "MEMDIR_TEAM_TOKEN": created["token"],
               "MEMDIR_TEAM_REPO": "acme/app"}  # fmt: skip
        mem_a, mem_b = tmp_path / "a" / "memory", tmp_path / "b" / "memory"
        write_files(mem_a / "team", {"style.md": "Use tabs.\n"})
        code, pushed = run_cli(["--dir", str(mem_a), "team", "push"], env)
        assert code == 0 and pushed["uploaded"] == ["style.md"]
        code, pulled = run_cli(["--dir", str(mem_b), "team", "pull"], env)
        assert code == 0 and pulled["written"] == ["style.md"]
        assert tree(mem_b / "team") == {"style.md": "Use tabs.\n"}
        watch = subprocess.Popen(
            [sys.executable, "-c", "from memdir.cli.main import run; run()", "--json",
             "--dir", str(mem_b), "team", "watch", "--debounce", "0.2", "--pull-interval", "0.5"],
            env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        write_files(mem_a / "team", {"deploy.md": "Deploy on Tuesdays.\n"})
        code, synced = run_cli(["--dir", str(mem_a), "team", "sync"], env)
        assert code == 0 and synced["push"]["uploaded"] == ["deploy.md"]
        wait_for(lambda: (mem_b / "team" / "deploy.md").is_file())
        write_files(mem_b / "team", {"from-b.md": "Written in B.\n"})
        code, _ = run_cli(["--dir", str(mem_a), "team", "status"], env)
        wait_for(lambda: run_cli(["--dir", str(mem_a), "team", "pull"], env)[1]["written"] != [])
        assert tree(mem_a / "team") == tree(mem_b / "team")
        watch.send_signal(signal.SIGTERM)
        assert watch.wait(timeout=20) == 0
        code, status = run_cli(["--dir", str(mem_a), "team", "status"], env)
        assert code == 0 and status["pending_upload"] == [] and status["local_files"] == 3
    finally:
        for proc in (watch, serve):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)
            if proc is not None:
                proc.communicate()


def wait_healthy(url: str) -> None:
    wait_for(lambda: _healthy(url))


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def wait_for(check: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)
