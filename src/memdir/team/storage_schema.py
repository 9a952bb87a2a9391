"""Tables of the sync server and the engine set-up that makes writes serialise per repository.

Invariant: every repository write runs in one transaction that first takes an exclusive lock —
``SELECT … FOR UPDATE`` on the repository row on PostgreSQL, ``BEGIN IMMEDIATE`` (the database
write lock) on SQLite — so two PUTs never interleave and the version counter counts accepted
writes exactly. Reads use plain transactions and never block writers (SQLite runs in WAL mode).
"""

from __future__ import annotations

from typing import Any

from memdir.errors import ConfigError, MissingExtraError

try:
    from sqlalchemy import (
        Boolean,
        Column,
        ForeignKey,
        Integer,
        MetaData,
        String,
        Table,
        Text,
        event,
    )
    from sqlalchemy.engine import make_url
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingExtraError("sqlalchemy", "team") from exc

metadata = MetaData()

repos = Table(
    "team_repos",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("version", Integer, nullable=False, default=0),
    Column("checksum", String(80), nullable=False),
    Column("last_modified", String(40), nullable=True),
)

entries = Table(
    "team_entries",
    metadata,
    Column("repo", String(200), ForeignKey("team_repos.name"), primary_key=True),
    Column("key", Text, primary_key=True),
    Column("content", Text, nullable=False),
    Column("checksum", String(80), nullable=False),
)

tokens = Table(
    "team_tokens",
    metadata,
    Column("id", String(16), primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("label", String(200), nullable=False, default=""),
    Column("created", String(40), nullable=False),
    Column("revoked", Boolean, nullable=False, default=False),
)

token_repos = Table(
    "team_token_repos",
    metadata,
    Column("token_id", String(16), ForeignKey("team_tokens.id"), primary_key=True),
    Column("repo", String(200), primary_key=True),
)

IMMEDIATE = "memdir_sqlite_immediate"


def normalise_url(url: str) -> str:
    """Accept a bare path or ``sqlite:///``/``postgresql://`` and name the async driver."""
    if "://" not in url:
        return f"sqlite+aiosqlite:///{url}"
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return str(parsed.set(drivername="sqlite+aiosqlite"))
    if backend == "postgresql":
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    raise ConfigError(f"unsupported team database URL scheme {parsed.drivername!r}")


def engine_options(url: str) -> dict[str, Any]:
    backend = make_url(url).get_backend_name()
    if backend == "postgresql":
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise MissingExtraError("psycopg", "postgres") from exc
        return {"pool_pre_ping": True, "pool_size": 5, "max_overflow": 5}
    return {}


def install_sqlite_hooks(sync_engine: Any) -> None:
    """WAL, a busy timeout, and BEGIN IMMEDIATE for connections marked as writers.

    pysqlite's own implicit BEGIN is switched off so that the ``begin`` event decides the mode.
    """

    @event.listens_for(sync_engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(sync_engine, "begin")
    def _begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get(IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
