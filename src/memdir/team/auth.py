"""Bearer tokens of the sync server: created once, stored only as SHA-256, scoped to repositories.

Invariant: the database never holds a usable token. ``create_token`` returns the plaintext
exactly once; afterwards only its hash exists, so a leaked database grants no access. A token
authorises a request only if it is not revoked and lists the requested repository.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from memdir.errors import ConfigError, MissingExtraError
from memdir.team import storage_schema as schema
from memdir.team.storage import TeamStorage, writer_connection
from memdir.team.wire import valid_repo

try:
    from sqlalchemy import delete, insert, select, update
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingExtraError("sqlalchemy", "team") from exc

TOKEN_PREFIX = "mdt_"


class Access(StrEnum):
    OK = "ok"
    UNAUTHENTICATED = "unauthenticated"  # no token, unknown token, or revoked
    FORBIDDEN = "forbidden"  # a valid token that does not cover this repository


@dataclass(frozen=True)
class TokenInfo:
    id: str
    label: str
    created: str
    revoked: bool
    repos: tuple[str, ...]


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


async def create_token(
    storage: TeamStorage, repos: Sequence[str], *, label: str = ""
) -> tuple[str, TokenInfo]:
    """Create a token for ``repos``; return ``(plaintext, info)``. The plaintext is not stored."""
    if not repos:
        raise ConfigError("a token needs at least one --repo owner/repo")
    for repo in repos:
        if not valid_repo(repo):
            raise ConfigError(f"invalid repository {repo!r}: expected owner/repo")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    info = TokenInfo(
        id=secrets.token_hex(4),
        label=label,
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        revoked=False,
        repos=tuple(sorted(set(repos))),
    )
    async with storage.engine.connect() as conn:
        conn = await writer_connection(conn)
        async with conn.begin():
            await conn.execute(
                insert(schema.tokens).values(
                    id=info.id,
                    token_hash=hash_token(token),
                    label=label,
                    created=info.created,
                    revoked=False,
                )
            )
            await conn.execute(
                insert(schema.token_repos), [{"token_id": info.id, "repo": r} for r in info.repos]
            )
    return token, info


async def list_tokens(storage: TeamStorage) -> list[TokenInfo]:
    async with storage.engine.connect() as conn, conn.begin():
        rows = (await conn.execute(select(schema.tokens).order_by(schema.tokens.c.created))).all()
        scopes = (await conn.execute(select(schema.token_repos))).all()
    repos: dict[str, list[str]] = {}
    for scope in scopes:
        repos.setdefault(scope.token_id, []).append(scope.repo)
    return [
        TokenInfo(
            id=row.id,
            label=row.label,
            created=row.created,
            revoked=bool(row.revoked),
            repos=tuple(sorted(repos.get(row.id, []))),
        )
        for row in rows
    ]


async def revoke_token(storage: TeamStorage, token_id: str) -> bool:
    """Revoke by id; ``False`` if no such token. Its scopes are dropped too."""
    async with storage.engine.connect() as conn:
        conn = await writer_connection(conn)
        async with conn.begin():
            result = await conn.execute(
                update(schema.tokens).where(schema.tokens.c.id == token_id).values(revoked=True)
            )
            await conn.execute(
                delete(schema.token_repos).where(schema.token_repos.c.token_id == token_id)
            )
    return bool(result.rowcount)


async def authorize(storage: TeamStorage, token: str | None, repo: str) -> Access:
    if not token:
        return Access.UNAUTHENTICATED
    async with storage.engine.connect() as conn, conn.begin():
        row = (
            await conn.execute(
                select(schema.tokens.c.id).where(
                    schema.tokens.c.token_hash == hash_token(token),
                    schema.tokens.c.revoked.is_(False),
                )
            )
        ).first()
        if row is None:
            return Access.UNAUTHENTICATED
        scope = (
            await conn.execute(
                select(schema.token_repos.c.repo).where(
                    schema.token_repos.c.token_id == row.id, schema.token_repos.c.repo == repo
                )
            )
        ).first()
    return Access.OK if scope is not None else Access.FORBIDDEN
