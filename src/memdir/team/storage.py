"""Team memory storage for the sync server: SQLite (one file) or PostgreSQL (several replicas).

Invariants:

- A repository's state is ``(version, checksum, entries)``; ``checksum`` is
  :func:`memdir.team.wire.repo_checksum` over the entry checksums, recomputed inside the write
  transaction from what the database holds, so every replica agrees on it.
- A write is one transaction under the repository's exclusive lock (see ``storage_schema``):
  the ``If-Match`` check, the entry-limit check, the upsert and the version bump see the same
  snapshot, so concurrent PUTs are serialised and ``version`` equals the number of accepted PUTs.
- Rejected writes (stale ``If-Match``, too many entries) roll back and change nothing.

The server holds no state of its own besides this database, which is what makes replicas stateless.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.atomic import ensure_dir
from memdir.errors import MissingExtraError
from memdir.team import storage_schema as schema
from memdir.team.wire import DEFAULT_MAX_ENTRIES, checksum, repo_checksum

try:
    from sqlalchemy import select, update
    from sqlalchemy.dialects import postgresql, sqlite
    from sqlalchemy.engine import make_url
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingExtraError("sqlalchemy", "team") from exc

EMPTY_CHECKSUM = repo_checksum({})


@dataclass(frozen=True)
class RepoState:
    """One repository as stored; ``entries`` is ``None`` when only hashes were asked for."""

    repo: str
    version: int
    checksum: str
    last_modified: str | None
    entry_checksums: dict[str, str]
    entries: dict[str, str] | None = None


@dataclass(frozen=True)
class PutOutcome:
    """What a write did: ``state`` on success; ``stale`` or ``too_many`` when rolled back."""

    state: RepoState | None = None
    stale: bool = False
    current_checksum: str | None = None
    too_many: tuple[int, int] | None = None  # (max_entries, entries the write would leave)
    changed: list[str] = field(default_factory=list)


class TeamStorage:
    """Async access to the team tables through one SQLAlchemy engine."""

    def __init__(self, engine: AsyncEngine, *, max_entries: int = DEFAULT_MAX_ENTRIES):
        self.engine = engine
        self.max_entries = max_entries
        self.dialect = engine.dialect.name

    @classmethod
    async def open(
        cls, url: str, *, max_entries: int = DEFAULT_MAX_ENTRIES, create: bool = True
    ) -> TeamStorage:
        """Connect to ``url`` (a path, ``sqlite:///…`` or ``postgresql://…``); create tables."""
        url = schema.normalise_url(url)
        options = schema.engine_options(url)
        parsed = make_url(url)
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            ensure_dir(Path(parsed.database).parent)
        engine = create_async_engine(url, **options)
        if parsed.get_backend_name() == "sqlite":
            schema.install_sqlite_hooks(engine.sync_engine)
        storage = cls(engine, max_entries=max_entries)
        if create:
            await storage.create_tables()
        return storage

    async def create_tables(self) -> None:
        async with self.engine.connect() as conn:
            conn = await writer_connection(conn)
            async with conn.begin():
                await conn.run_sync(schema.metadata.create_all)

    async def close(self) -> None:
        await self.engine.dispose()

    async def get(self, repo: str, *, with_content: bool = True) -> RepoState | None:
        async with self.engine.connect() as conn, conn.begin():
            row = (
                await conn.execute(select(schema.repos).where(schema.repos.c.name == repo))
            ).first()
            if row is None:
                return None
            columns = [schema.entries.c.key, schema.entries.c.checksum]
            if with_content:
                columns.append(schema.entries.c.content)
            result = await conn.execute(select(*columns).where(schema.entries.c.repo == repo))
            rows = result.all()
        return RepoState(
            repo=repo,
            version=row.version,
            checksum=row.checksum,
            last_modified=row.last_modified,
            entry_checksums={r.key: r.checksum for r in rows},
            entries={r.key: r.content for r in rows} if with_content else None,
        )

    async def put(
        self, repo: str, new_entries: Mapping[str, str], *, if_match: str | None = None
    ) -> PutOutcome:
        """Upsert ``new_entries`` into ``repo`` atomically; keys not sent are kept."""
        async with self.engine.connect() as conn:
            conn = await writer_connection(conn)
            async with conn.begin() as tx:
                current = await self._lock_repo(conn, repo)
                if if_match is not None and if_match not in ("*", current.checksum):
                    await tx.rollback()
                    return PutOutcome(stale=True, current_checksum=current.checksum)
                merged = dict(current.entry_checksums)
                changed: dict[str, str] = {}
                for key, text in new_entries.items():
                    digest = checksum(text)
                    if merged.get(key) != digest:
                        changed[key] = text
                    merged[key] = digest
                if len(merged) > self.max_entries:
                    await tx.rollback()
                    return PutOutcome(too_many=(self.max_entries, len(merged)))
                await self._upsert(conn, repo, changed)
                state = RepoState(
                    repo=repo,
                    version=current.version + 1,
                    checksum=repo_checksum(merged),
                    last_modified=_now(),
                    entry_checksums=merged,
                )
                await conn.execute(
                    update(schema.repos)
                    .where(schema.repos.c.name == repo)
                    .values(
                        version=state.version,
                        checksum=state.checksum,
                        last_modified=state.last_modified,
                    )
                )
        return PutOutcome(state=state, changed=sorted(changed))

    async def _lock_repo(self, conn: AsyncConnection, repo: str) -> RepoState:
        """Create the repository row if missing, then hold its lock for this transaction."""
        insert = postgresql.insert if self.dialect == "postgresql" else sqlite.insert
        await conn.execute(
            insert(schema.repos)
            .values(name=repo, version=0, checksum=EMPTY_CHECKSUM, last_modified=None)
            .on_conflict_do_nothing(index_elements=["name"])
        )
        row = (
            await conn.execute(
                select(schema.repos).where(schema.repos.c.name == repo).with_for_update()
            )
        ).one()
        result = await conn.execute(
            select(schema.entries.c.key, schema.entries.c.checksum).where(
                schema.entries.c.repo == repo
            )
        )
        return RepoState(
            repo=repo,
            version=row.version,
            checksum=row.checksum,
            last_modified=row.last_modified,
            entry_checksums={r.key: r.checksum for r in result.all()},
        )

    async def _upsert(self, conn: AsyncConnection, repo: str, changed: Mapping[str, str]) -> None:
        if not changed:
            return
        insert: Any = postgresql.insert if self.dialect == "postgresql" else sqlite.insert
        stmt = insert(schema.entries)
        stmt = stmt.on_conflict_do_update(
            index_elements=["repo", "key"],
            set_={"content": stmt.excluded.content, "checksum": stmt.excluded.checksum},
        )
        rows = [
            {"repo": repo, "key": key, "content": text, "checksum": checksum(text)}
            for key, text in changed.items()
        ]
        await conn.execute(stmt, rows)


async def writer_connection(conn: AsyncConnection) -> AsyncConnection:
    """Mark a connection as a writer: on SQLite its transactions start with BEGIN IMMEDIATE."""
    return await conn.execution_options(**{schema.IMMEDIATE: True})


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
