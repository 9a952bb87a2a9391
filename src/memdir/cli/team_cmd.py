"""``memdir team …``: run the sync server, manage its tokens, and pull/push/sync/watch a team dir.

Server side: ``serve`` and ``token create|list|revoke`` act on the server database (``--db``,
``MEMDIR_TEAM_DB``, default ``<memdir home>/team-server.db``). Client side: the server URL, token
and repository come from ``MEMDIR_TEAM_SYNC_URL``, ``MEMDIR_TEAM_TOKEN``, ``MEMDIR_TEAM_REPO``
(``--url``/``--repo`` override; a token is never taken from argv, where ``ps`` would show it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
from typing import Any

from memdir.cli.context import CliContext
from memdir.cli.output import table
from memdir.errors import ConfigError, SyncError
from memdir.team import wire
from memdir.team.keys import display_key


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    team = sub.add_parser("team", help="share the team memory dir through a sync server")
    tsub = team.add_subparsers(dest="team_command", metavar="<command>", required=True)

    p = tsub.add_parser("serve", help="run the sync server (SQLite file or PostgreSQL URL)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    _db_arg(p)
    p.add_argument("--max-entries", type=int, default=None, help="entries per repository")
    p.set_defaults(handler=cmd_serve)

    p = tsub.add_parser("token", help="create, list or revoke server tokens")
    ksub = p.add_subparsers(dest="token_command", metavar="<create|list|revoke>", required=True)
    k = ksub.add_parser("create", help="create a token (printed once) for repositories")
    k.add_argument("--repo", action="append", required=True, help="owner/repo (repeatable)")
    k.add_argument("--label", default="")
    _db_arg(k)
    k.set_defaults(handler=cmd_token_create)
    k = ksub.add_parser("list", help="list tokens (ids, scopes; never the tokens)")
    _db_arg(k)
    k.set_defaults(handler=cmd_token_list)
    k = ksub.add_parser("revoke", help="revoke a token by id")
    k.add_argument("id")
    _db_arg(k)
    k.set_defaults(handler=cmd_token_revoke)

    for name, handler, text in (
        ("pull", cmd_pull, "fetch the team memory (server wins per file)"),
        ("push", cmd_push, "upload changed team files (local wins per file)"),
        ("sync", cmd_sync, "pull, then push"),
        ("status", cmd_status, "show configuration, sync state and pending uploads"),
        ("watch", cmd_watch, "pull, then push on every change until interrupted"),
    ):
        p = tsub.add_parser(name, help=text)
        p.add_argument("--url", help="sync server URL (default MEMDIR_TEAM_SYNC_URL)")
        p.add_argument("--repo", help="owner/repo (default MEMDIR_TEAM_REPO)")
        if name == "watch":
            p.add_argument("--debounce", type=float, default=2.0, help="seconds (default 2)")
            p.add_argument("--pull-interval", type=float, default=60.0, help="seconds (0: off)")
        p.set_defaults(handler=handler)


def _db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help="database URL or SQLite path (default MEMDIR_TEAM_DB)")


def _db_url(ctx: CliContext) -> str:
    url = getattr(ctx.args, "db", None) or ctx.env.get("MEMDIR_TEAM_DB")
    if url:
        return str(url)
    from memdir.atomic import ensure_dir

    return str(ensure_dir(ctx.settings.memdir_home) / "team-server.db")


def cmd_serve(ctx: CliContext) -> int:
    from memdir.team.server import ServerConfig, serve

    max_entries = ctx.args.max_entries or int(
        ctx.env.get("MEMDIR_TEAM_MAX_ENTRIES", wire.DEFAULT_MAX_ENTRIES)
    )
    config = ServerConfig(db_url=_db_url(ctx), max_entries=max_entries)
    ctx.out.stderr.write(
        f"memdir team server on http://{ctx.args.host}:{ctx.args.port} (Ctrl-C to stop)\n"
    )
    ctx.out.stderr.flush()
    serve(config, host=ctx.args.host, port=ctx.args.port)
    return 0


def cmd_token_create(ctx: CliContext) -> int:
    from memdir.team import auth

    async def create() -> tuple[str, Any]:
        storage = await _open_storage(ctx)
        try:
            return await auth.create_token(storage, ctx.args.repo, label=ctx.args.label)
        finally:
            await storage.close()

    token, info = asyncio.run(create())
    ctx.out.data(
        {"id": info.id, "token": token, "repos": list(info.repos)},
        f"token {info.id} for {', '.join(info.repos)} (shown once; store it now):\n{token}",
    )
    return 0


def cmd_token_list(ctx: CliContext) -> int:
    from memdir.team import auth

    async def listing() -> list[Any]:
        storage = await _open_storage(ctx)
        try:
            return await auth.list_tokens(storage)
        finally:
            await storage.close()

    rows = [
        {"id": t.id, "label": t.label, "created": t.created, "revoked": t.revoked,
         "repos": ",".join(t.repos)}
        for t in asyncio.run(listing())
    ]  # fmt: skip
    ctx.out.data(rows, table(rows, ["id", "label", "created", "revoked", "repos"]))
    return 0


def cmd_token_revoke(ctx: CliContext) -> int:
    from memdir.team import auth

    async def revoke() -> bool:
        storage = await _open_storage(ctx)
        try:
            return await auth.revoke_token(storage, ctx.args.id)
        finally:
            await storage.close()

    if not asyncio.run(revoke()):
        raise ConfigError(f"no token with id {ctx.args.id!r}")
    ctx.out.data({"revoked": ctx.args.id}, f"revoked token {ctx.args.id}")
    return 0


async def _open_storage(ctx: CliContext) -> Any:
    from memdir.team.storage import TeamStorage

    return await TeamStorage.open(_db_url(ctx))


def _client(ctx: CliContext) -> Any:
    from memdir.team.client import TeamSyncClient
    from memdir.team.client_state import state_path

    settings = ctx.settings
    url = ctx.args.url or settings.team_sync_url
    repo = ctx.args.repo or settings.team_repo
    token = settings.team_token
    missing = [n for n, v in (("MEMDIR_TEAM_SYNC_URL", url), ("MEMDIR_TEAM_REPO", repo),
                              ("MEMDIR_TEAM_TOKEN", token)) if not v]  # fmt: skip
    if missing:
        raise ConfigError(f"team sync needs {', '.join(missing)} (see docs/team.md)")
    assert url and repo and token
    team_dir = ctx.paths.team_dir
    return TeamSyncClient(
        url=url,
        token=token,
        repo=repo,
        team_dir=team_dir,
        state_path=state_path(ctx.paths.cache_dir, url, repo, team_dir),
    )


def _pull_payload(result: Any) -> dict[str, Any]:
    return {
        "status": result.status,
        "written": result.written,
        "unchanged": result.unchanged,
        "skipped": [{"path": display_key(s.key), "reason": s.reason} for s in result.skipped],
    }


def _push_payload(result: Any) -> dict[str, Any]:
    return {
        "uploaded": result.uploaded,
        "batches": result.batches,
        "conflicts": result.conflicts,
        "truncated": result.truncated,
        "skipped": [{"path": display_key(s.key), "reason": s.reason} for s in result.skipped],
    }


def _pull_text(p: dict[str, Any]) -> str:
    if p["status"] == "not_modified":
        return "pull: up to date"
    if p["status"] == "empty":
        return "pull: the server has no team memory for this repository yet"
    return f"pull: wrote {len(p['written'])} file(s), {p['unchanged']} unchanged"


def _push_text(p: dict[str, Any]) -> str:
    if not p["uploaded"]:
        return "push: nothing to upload"
    return f"push: uploaded {len(p['uploaded'])} file(s) in {p['batches']} request(s)"


def _warn_skipped(ctx: CliContext, payload: dict[str, Any]) -> None:
    for item in payload["skipped"]:
        ctx.out.warn(f"skipped {item['path']}: {item['reason']}")


def cmd_pull(ctx: CliContext) -> int:
    async def run() -> dict[str, Any]:
        async with _client(ctx) as client:
            return _pull_payload(await client.pull())

    payload = asyncio.run(run())
    _warn_skipped(ctx, payload)
    ctx.out.data(payload, _pull_text(payload))
    return 0


def cmd_push(ctx: CliContext) -> int:
    async def run() -> dict[str, Any]:
        async with _client(ctx) as client:
            return _push_payload(await client.push())

    payload = asyncio.run(run())
    _warn_skipped(ctx, payload)
    ctx.out.data(payload, _push_text(payload))
    return 0


def cmd_sync(ctx: CliContext) -> int:
    async def run() -> dict[str, Any]:
        async with _client(ctx) as client:
            pulled = _pull_payload(await client.pull())
            return {"pull": pulled, "push": _push_payload(await client.push())}

    payload = asyncio.run(run())
    _warn_skipped(ctx, payload["pull"])
    _warn_skipped(ctx, payload["push"])
    ctx.out.data(payload, f"{_pull_text(payload['pull'])}\n{_push_text(payload['push'])}")
    return 0


def cmd_status(ctx: CliContext) -> int:
    from memdir.team.client_state import pending_upload, read_local

    async def run() -> dict[str, Any]:
        async with _client(ctx) as client:
            local = read_local(client.team_dir)
            state = client.state
            pending = pending_upload(local, state)
            return {
                "url": ctx.args.url or ctx.settings.team_sync_url,
                "repo": client.repo,
                "team_dir": str(client.team_dir),
                "last_checksum": state.last_checksum,
                "server_entries": len(state.server_checksums),
                "server_max_entries": state.server_max_entries,
                "local_files": len(local.entries),
                "pending_upload": pending,
                "skipped": [
                    {"path": display_key(s.key), "reason": s.reason} for s in local.skipped
                ],
            }

    payload = asyncio.run(run())
    text = "\n".join(f"{k}: {len(v) if isinstance(v, list) else v}" for k, v in payload.items())
    ctx.out.data(payload, text)
    return 0


def cmd_watch(ctx: CliContext) -> int:
    from memdir.team.watcher import TeamWatcher

    warned: set[tuple[str, str]] = set()

    def report(kind: str, payload: Any) -> None:
        if kind == "push":
            skipped = _push_payload(payload)["skipped"]
            fresh = [s for s in skipped if (s["path"], s["reason"]) not in warned]
            warned.update((s["path"], s["reason"]) for s in fresh)
            _warn_skipped(ctx, {"skipped": fresh})
        quiet = (kind == "pull" and payload.status in ("not_modified", "empty")) or (
            kind == "push" and not payload.uploaded
        )
        if quiet and not ctx.out.json_mode:
            return  # periodic no-ops would drown the events that matter
        if isinstance(payload, SyncError):
            line: dict[str, Any] = {"event": kind, "error": str(payload)}
            text = f"{kind}: {payload}"
        elif kind == "pull":
            line = {"event": kind, **_pull_payload(payload)}
            text = _pull_text(line)
        elif kind == "push":
            line = {"event": kind, **_push_payload(payload)}
            text = _push_text(line)
        else:
            line, text = {"event": kind, "detail": str(payload)}, f"{kind}: {payload}"
        ctx.out.stdout.write((json.dumps(line) if ctx.out.json_mode else text) + "\n")
        ctx.out.stdout.flush()

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with _client(ctx) as client:
            watcher = TeamWatcher(
                client,
                debounce=ctx.args.debounce,
                pull_interval=ctx.args.pull_interval or None,
                report=report,
            )
            ctx.out.stderr.write(f"watching {client.team_dir} (Ctrl-C to stop)\n")
            ctx.out.stderr.flush()
            await watcher.run(stop)

    asyncio.run(run())
    return 0
