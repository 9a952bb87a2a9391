"""Fixtures for team sync: a real PostgreSQL cluster, real databases, a real uvicorn server."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from collections.abc import AsyncIterator, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from memdir.team import auth
from memdir.team.storage import RepoState, TeamStorage
from tests.team.services import PgCluster, ServerProcess

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
