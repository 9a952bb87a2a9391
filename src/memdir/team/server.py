"""The team sync server: an ASGI app (FastAPI) over :class:`~memdir.team.storage.TeamStorage`.

Invariants:

- Same routes and bodies as the reference (``/api/claude_code/team_memory?repo=owner/repo``), so a
  reference client can use it; ``/api/team_memory`` is an alias.
- Every request is authorised by a bearer token scoped to the repository before anything is read.
- Nothing is written unless the whole PUT is valid: every key passes ``keys.sanitize_key``, every
  entry fits ``MAX_ENTRY_BYTES``, the body fits ``MAX_BODY_BYTES`` (a single oversized entry may
  travel alone), and the storage transaction accepts it. ETag is the repository checksum.
- A hostile body is a 400 with a message, never a 500: JSON nested past the parser's depth,
  keys or values with a lone surrogate (legal JSON escapes, not UTF-8), values with a NUL
  character (PostgreSQL cannot store one), keys over ``MAX_KEY_BYTES``.
- The process keeps no state besides the database, so replicas on PostgreSQL are interchangeable.

Run with ``memdir team serve`` or ``python -m memdir.team.server``.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from memdir.errors import MissingExtraError, PathTraversalError
from memdir.team import auth, wire
from memdir.team.keys import display_key, sanitize_key
from memdir.team.storage import RepoState, TeamStorage

try:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, Response
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise MissingExtraError("fastapi", "team") from exc

_READ_CAP = 7 * wire.MAX_ENTRY_BYTES  # JSON escaping can make one entry ~6x its size


@dataclass(frozen=True)
class ServerConfig:
    db_url: str
    max_entries: int = wire.DEFAULT_MAX_ENTRIES
    organization_id: str = "memdir"


def create_app(config: ServerConfig) -> FastAPI:
    """Build the app; the database is opened on startup and closed on shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        storage = await TeamStorage.open(config.db_url, max_entries=config.max_entries)
        app.state.storage = storage
        try:
            yield
        finally:
            await storage.close()

    app = FastAPI(title="memdir team sync", version="1", lifespan=lifespan)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    for path in (wire.API_PATH, wire.ALIAS_PATH):
        app.add_api_route(
            path,
            _get_handler(config),
            methods=["GET"],
            responses={200: {"description": "repository document"}, 304: {}, 404: {}},
            summary="Read a repository's team memory (view=hashes: checksums only)",
        )
        app.add_api_route(
            path,
            _put_handler(config),
            methods=["PUT"],
            openapi_extra={"requestBody": _PUT_SCHEMA},
            responses={412: {}, 413: {}},
            summary="Upsert entries; keys not sent are kept",
        )
    return app


_PUT_SCHEMA = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["entries"],
                "properties": {
                    "entries": {"type": "object", "additionalProperties": {"type": "string"}}
                },
            }
        }
    },
}


def _get_handler(config: ServerConfig) -> Any:
    async def get_team_memory(request: Request, repo: str, view: str | None = None) -> Response:
        storage: TeamStorage = request.app.state.storage
        denied = await _check_access(storage, request, repo)
        if denied is not None:
            return denied
        # Checksums first: the common "nothing changed" poll never loads entry contents.
        state = await storage.get(repo, with_content=False)
        if state is None:
            return _error(404, "team_memory_not_found", f"no team memory for {repo}")
        if state.checksum in wire.unquote_etag(request.headers.get("if-none-match")):
            return Response(status_code=304, headers={"ETag": wire.quote_etag(state.checksum)})
        if view != "hashes":
            state = await storage.get(repo) or state  # repositories are never deleted
        etag = wire.quote_etag(state.checksum)
        return JSONResponse(_document(config, state), headers={"ETag": etag})

    return get_team_memory


def _put_handler(config: ServerConfig) -> Any:
    async def put_team_memory(request: Request, repo: str) -> Response:
        storage: TeamStorage = request.app.state.storage
        denied = await _check_access(storage, request, repo)
        if denied is not None:
            return denied
        body = await _read_body(request)
        if isinstance(body, Response):
            return body
        invalid = _validate_entries(body)
        if invalid is not None:
            return invalid
        if_match = wire.unquote_etag(request.headers.get("if-match"))
        outcome = await storage.put(repo, body, if_match=if_match[0] if if_match else None)
        if outcome.stale:
            return _error(
                412,
                "team_memory_conflict",
                "the repository changed since your last read",
                checksum=outcome.current_checksum,
            )
        if outcome.too_many is not None:
            return JSONResponse(wire.too_many_entries_body(*outcome.too_many), status_code=413)
        assert outcome.state is not None
        document = _document(config, outcome.state, content=False)
        return JSONResponse(document, headers={"ETag": wire.quote_etag(outcome.state.checksum)})

    return put_team_memory


async def _check_access(storage: TeamStorage, request: Request, repo: str) -> Response | None:
    if not wire.valid_repo(repo):
        return _error(400, "team_memory_invalid_repo", "repo must look like owner/repo")
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    access = await auth.authorize(
        storage, token.strip() if scheme.lower() == "bearer" else None, repo
    )
    if access is auth.Access.UNAUTHENTICATED:
        return _error(401, "unauthorized", "missing or invalid bearer token", www_auth=True)
    if access is auth.Access.FORBIDDEN:
        return _error(403, "forbidden", f"this token does not cover {repo}")
    return None


async def _read_body(request: Request) -> dict[str, str] | Response:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > _READ_CAP:
        return _error(413, wire.BODY_TOO_LARGE, "request body too large")
    raw = bytearray()
    async for chunk in request.stream():
        raw.extend(chunk)
        if len(raw) > _READ_CAP:
            return _error(413, wire.BODY_TOO_LARGE, "request body too large")
    try:
        parsed = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return _error(400, "team_memory_bad_body", "body is not valid JSON")
    except RecursionError:  # the parser's own depth guard; the body is hostile, not us broken
        return _error(400, "team_memory_bad_body", "body is nested too deeply")
    entries = parsed.get("entries") if isinstance(parsed, dict) else None
    if not isinstance(entries, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in entries.items()
    ):
        return _error(400, "team_memory_bad_body", 'body must be {"entries": {path: text}}')
    return entries


def _validate_entries(entries: Mapping[str, str]) -> Response | None:
    for key, text in entries.items():
        try:
            if not key or sanitize_key(key) != key:
                raise PathTraversalError(f"invalid key {display_key(key)}")
        except PathTraversalError as exc:
            return _error(400, "team_memory_invalid_key", f"invalid entry key: {exc}")
        problem = wire.text_problem(text)
        if problem is not None:
            return _error(400, "team_memory_bad_entry", f"entry {key!r}: {problem}", key=key)
        size = wire.entry_bytes(text)
        if size > wire.MAX_ENTRY_BYTES:
            return _error(
                413,
                wire.ENTRY_TOO_LARGE,
                f"entry {key!r} is {size} bytes; the limit is {wire.MAX_ENTRY_BYTES}",
                key=key,
                max_entry_bytes=wire.MAX_ENTRY_BYTES,
            )
    if len(entries) > 1 and wire.body_bytes(entries) > wire.MAX_BODY_BYTES:
        return _error(
            413,
            wire.BODY_TOO_LARGE,
            f"request body over {wire.MAX_BODY_BYTES} bytes; split it into batches",
            max_body_bytes=wire.MAX_BODY_BYTES,
        )
    return None


def _document(config: ServerConfig, state: RepoState, *, content: bool = True) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "organizationId": config.organization_id,
        "repo": state.repo,
        "version": state.version,
        "lastModified": state.last_modified,
        "checksum": state.checksum,
    }
    if content:
        body: dict[str, Any] = {"entryChecksums": state.entry_checksums}
        if state.entries is not None:
            body["entries"] = state.entries
        doc["content"] = body
    return doc


def _error(
    status: int, code: str, message: str, *, www_auth: bool = False, **details: Any
) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if www_auth else None
    return JSONResponse(
        wire.error_body(code, message, **details), status_code=status, headers=headers
    )


def serve(config: ServerConfig, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Run the server in the foreground until interrupted."""
    try:
        import uvicorn
    except ImportError as exc:
        raise MissingExtraError("uvicorn", "team") from exc
    uvicorn.run(create_app(config), host=host, port=port, log_level="warning")


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> None:
    environ = os.environ if env is None else env
    parser = argparse.ArgumentParser(prog="python -m memdir.team.server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--db", default=environ.get("MEMDIR_TEAM_DB", "team-memory.db"))
    parser.add_argument(
        "--max-entries",
        type=int,
        default=int(environ.get("MEMDIR_TEAM_MAX_ENTRIES", wire.DEFAULT_MAX_ENTRIES)),
    )
    args = parser.parse_args(argv)
    serve(ServerConfig(args.db, args.max_entries), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
