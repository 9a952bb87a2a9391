"""Fixtures for team sync: a real PostgreSQL cluster, real databases, a real uvicorn server."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest

from memdir.team import auth
from memdir.team.storage import TeamStorage
from tests.team.pgcluster import PgCluster, free_port

REPO = "acme/widgets"


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

    def start(self) -> ServerProcess:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memdir.team.server", "--port", str(self.port),
             "--db", self.db_url, "--max-entries", str(self.max_entries)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ),
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(self.proc.stderr.read().decode() if self.proc.stderr else "")
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
        if self.proc is not None and self.proc.stderr is not None:
            self.proc.stderr.close()


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


@pytest.fixture
async def server(
    db_url: str, start_server: Callable[..., ServerProcess]
) -> AsyncIterator[tuple[ServerProcess, str]]:
    """A running server on ``db_url`` and a token for :data:`REPO`."""
    token = await make_token(db_url, REPO)
    proc = await asyncio.to_thread(start_server, db_url)
    yield proc, token
