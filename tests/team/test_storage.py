"""Storage semantics on real SQLite and real PostgreSQL (every test runs on both)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select

from memdir.errors import ConfigError
from memdir.team import auth, storage_schema, wire
from memdir.team.storage import EMPTY_CHECKSUM, TeamStorage
from tests.team.conftest import REPO


async def test_missing_repo_reads_as_none(storage: TeamStorage) -> None:
    assert await storage.get(REPO) is None


async def test_put_then_get_round_trips_with_checksums(storage: TeamStorage) -> None:
    entries = {"a.md": "alpha", "dir/b.md": "béta ✓"}
    outcome = await storage.put(REPO, entries)
    assert outcome.state is not None and outcome.changed == sorted(entries)
    state = await storage.get(REPO)
    assert state is not None
    assert state.entries == entries
    assert state.version == 1
    assert state.entry_checksums == {k: wire.checksum(v) for k, v in entries.items()}
    assert state.checksum == wire.repo_checksum(state.entry_checksums) == outcome.state.checksum
    assert state.checksum != EMPTY_CHECKSUM


async def test_hashes_view_omits_content(storage: TeamStorage) -> None:
    await storage.put(REPO, {"a.md": "alpha"})
    state = await storage.get(REPO, with_content=False)
    assert state is not None and state.entries is None
    assert state.entry_checksums == {"a.md": wire.checksum("alpha")}


async def test_put_is_an_upsert_that_keeps_unsent_keys(storage: TeamStorage) -> None:
    await storage.put(REPO, {"a.md": "1", "b.md": "2"})
    outcome = await storage.put(REPO, {"b.md": "two", "c.md": "3"})
    assert outcome.changed == ["b.md", "c.md"]
    state = await storage.get(REPO)
    assert state is not None
    assert state.entries == {"a.md": "1", "b.md": "two", "c.md": "3"}
    assert state.version == 2


@pytest.mark.parametrize(
    ("if_match", "accepted"),
    [("stale", False), ("current", True), ("*", True), (None, True)],
)
async def test_if_match(storage: TeamStorage, if_match: str | None, accepted: bool) -> None:
    first = await storage.put(REPO, {"a.md": "1"})
    assert first.state is not None
    tag = {"stale": EMPTY_CHECKSUM, "current": first.state.checksum}.get(if_match or "", if_match)
    outcome = await storage.put(REPO, {"a.md": "2"}, if_match=tag)
    state = await storage.get(REPO)
    assert state is not None
    assert (outcome.state is not None) is accepted
    assert outcome.stale is (not accepted)
    assert state.entries == {"a.md": "2" if accepted else "1"}
    assert state.version == (2 if accepted else 1)
    if not accepted:
        assert outcome.current_checksum == first.state.checksum


async def test_too_many_entries_rolls_back(storage: TeamStorage) -> None:
    await storage.put(REPO, {f"k{i:02}.md": "x" for i in range(45)})
    outcome = await storage.put(REPO, {f"n{i:02}.md": "y" for i in range(10)})
    assert outcome.too_many == (50, 55)
    state = await storage.get(REPO)
    assert state is not None and len(state.entry_checksums) == 45 and state.version == 1


async def test_repositories_are_isolated(storage: TeamStorage) -> None:
    await storage.put(REPO, {"a.md": "mine"})
    await storage.put("other/repo", {"a.md": "theirs"})
    mine, theirs = await storage.get(REPO), await storage.get("other/repo")
    assert mine is not None and theirs is not None
    assert (mine.entries, theirs.entries) == ({"a.md": "mine"}, {"a.md": "theirs"})


async def test_concurrent_puts_from_two_replicas_lose_nothing(storage: TeamStorage) -> None:
    """Two engines on one database stand in for two stateless server replicas."""
    url = storage.engine.url.render_as_string(hide_password=False)
    replica = await TeamStorage.open(url, max_entries=1000)
    try:
        stores = [storage, replica]
        writes = [
            stores[i % 2].put(REPO, {f"w{i:02}.md": f"v{i}", "shared.md": f"s{i}"})
            for i in range(24)
        ]
        outcomes = await asyncio.gather(*writes)
    finally:
        await replica.close()
    state = await storage.get(REPO)
    assert state is not None
    assert all(o.state is not None for o in outcomes)
    assert state.version == len(writes)
    assert {f"w{i:02}.md" for i in range(24)} <= set(state.entries or {})
    assert state.entries is not None and state.entries["shared.md"] in {f"s{i}" for i in range(24)}
    versions = sorted(o.state.version for o in outcomes if o.state is not None)
    assert versions == list(range(1, 25))


async def test_conditional_writes_race_exactly_one_wins(storage: TeamStorage) -> None:
    base = await storage.put(REPO, {"a.md": "0"})
    assert base.state is not None
    outcomes = await asyncio.gather(
        *(storage.put(REPO, {"a.md": f"v{i}"}, if_match=base.state.checksum) for i in range(6))
    )
    winners = [o for o in outcomes if o.state is not None]
    assert len(winners) == 1 and sum(o.stale for o in outcomes) == 5
    state = await storage.get(REPO)
    assert state is not None and state.version == 2


async def test_tokens_are_hashed_scoped_and_revocable(storage: TeamStorage) -> None:
    token, info = await auth.create_token(storage, [REPO, "acme/other"], label="ci")
    assert info.repos == ("acme/other", REPO)
    assert await auth.authorize(storage, token, REPO) is auth.Access.OK
    assert await auth.authorize(storage, token, "evil/repo") is auth.Access.FORBIDDEN
    assert await auth.authorize(storage, token + "x", REPO) is auth.Access.UNAUTHENTICATED
    assert await auth.authorize(storage, None, REPO) is auth.Access.UNAUTHENTICATED
    async with storage.engine.connect() as conn:
        stored = (await conn.execute(select(storage_schema.tokens.c.token_hash))).scalars().all()
    assert stored == [auth.hash_token(token)] and token not in stored
    listed = await auth.list_tokens(storage)
    assert [(t.id, t.label, t.revoked) for t in listed] == [(info.id, "ci", False)]
    assert await auth.revoke_token(storage, info.id) is True
    assert await auth.revoke_token(storage, "nope") is False
    assert await auth.authorize(storage, token, REPO) is auth.Access.UNAUTHENTICATED
    assert (await auth.list_tokens(storage))[0].revoked is True


@pytest.mark.parametrize("repos", [[], ["no-slash"], ["a/b/c"], ["../x"], ["a/.."]])
async def test_token_needs_valid_repositories(storage: TeamStorage, repos: list[str]) -> None:
    with pytest.raises(ConfigError):
        await auth.create_token(storage, repos)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/tmp/x.db", "sqlite+aiosqlite:////tmp/x.db"),
        ("sqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("postgresql://u:p@h/db", "postgresql+psycopg://u:p@h/db"),
        ("postgresql+psycopg://u@h:5/db", "postgresql+psycopg://u@h:5/db"),
    ],
)
def test_database_urls_are_normalised(url: str, expected: str) -> None:
    assert storage_schema.normalise_url(url) == expected


def test_unknown_database_scheme_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        storage_schema.normalise_url("mysql://x/y")


async def test_sqlite_database_directory_is_created(tmp_path: Path) -> None:
    store = await TeamStorage.open(str(tmp_path / "new" / "dir" / "team.db"))
    try:
        await store.put(REPO, {"a.md": "x"})
    finally:
        await store.close()
    assert (tmp_path / "new" / "dir" / "team.db").is_file()
