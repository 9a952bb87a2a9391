"""Fixtures for team sync: a real PostgreSQL cluster, real databases, a real uvicorn server."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from memdir.team import auth
from memdir.team.storage import RepoState, TeamStorage
from tests.team.pgcluster import PgCluster, free_port

REPO = "acme/widgets"
T = TypeVar("T")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    cluster = PgCluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'team.db'}"
    cluster: PgCluster = request.getfixturevalue("pg_cluster")
    return cluster.create_database()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'team.db'}"


@pytest.fixture
async def storage(db_url: str) -> AsyncIterator[TeamStorage]:
    store = await TeamStorage.open(db_url, max_entries=50)
    try:
        yield store
    finally:
        await store.close()


async def make_token(db_url: str, *repos: str) -> str:
    store = await TeamStorage.open(db_url)
    try:
        token, _ = await auth.create_token(store, list(repos) or [REPO])
    finally:
        await store.close()
    return token


class ServerProcess:
    """``python -m memdir.team.server`` as a child process on a free loopback port."""

    def __init__(self, db_url: str, *, max_entries: int = 100, port: int | None = None):
        self.db_url = db_url
        self.max_entries = max_entries
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    def start(self) -> ServerProcess:
        """Start (or restart, on the same port) and wait until ``/healthz`` answers."""
        self._close_log()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()/restart
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memdir.team.server", "--port", str(self.port),
             "--db", self.db_url, "--max-entries", str(self.max_entries)],
            stdout=subprocess.DEVNULL, stderr=self._log, env=dict(os.environ),
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._log.seek(0)
                raise RuntimeError(self._log.read().decode(errors="replace"))
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("team server did not start")

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, as in a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


@pytest.fixture
def start_server() -> Iterator[Callable[..., ServerProcess]]:
    started: list[ServerProcess] = []

    def start(db_url: str, **kwargs: int) -> ServerProcess:
        server = ServerProcess(db_url, **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def backend_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """One real server per backend per test module (max 100 entries per repository)."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('srv') / 'team.db'}"
    else:
        url = request.getfixturevalue("pg_cluster").create_database()
    server = ServerProcess(url, max_entries=100).start()
    try:
        yield server
    finally:
        server.stop()


_repo_counter = itertools.count()


@dataclass(frozen=True)
class Remote:
    """A running server, a fresh repository on it and a token scoped to that repository."""

    server: ServerProcess
    repo: str
    token: str

    @property
    def url(self) -> str:
        return self.server.url

    def state(self) -> RepoState | None:
        """Read the repository straight from the server's database."""
        return run_sync(_read_state(self.server.db_url, self.repo))


async def _read_state(db_url: str, repo: str) -> RepoState | None:
    store = await TeamStorage.open(db_url)
    try:
        return await store.get(repo)
    finally:
        await store.close()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync or async test code (in a helper thread)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture
def remote(backend_server: ServerProcess) -> Remote:
    repo = f"acme/repo{next(_repo_counter)}"
    return Remote(backend_server, repo, run_sync(make_token(backend_server.db_url, repo)))
