"""Live updates: a fingerprint of everything the pages show, polled by the page script.

The page asks ``/api/version`` every second and reloads when the answer changes (or, when the
user is typing in a form, says so instead of reloading), so a change by another agent, an
editor or a pull shows within 2 s. Memory files are watched by recall's header tracker
(:mod:`memdir.recall.dirstate`: directory mtimes and inodes, so anything written by rename —
every memdir write, git, most editors — is seen on the next poll; an in-place rewrite in a dir
of more than 500 files is seen by its periodic full sweep, within 30 s). Polling keeps this
dependency-free and works on every filesystem (inotify does not see network mounts).
"""

from __future__ import annotations

import hashlib

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memdir.adapters.hooks import hooklog
from memdir.index import ENTRYPOINT_NAME
from memdir.ui.context import UiContext


def fingerprint(ctx: UiContext) -> str:
    """Changes whenever a memory, an index, the hook log or a dream snapshot does."""
    ctx.headers()  # the header tracker notices changed memory files (and bumps generation)
    parts = [str(ctx.generation)]
    for path in (
        ctx.memory_dir / ENTRYPOINT_NAME,
        ctx.memory_dir / "team" / ENTRYPOINT_NAME,
        hooklog.log_path(ctx.cache_dir),
        ctx.cache_dir / "dream" / "snapshots",
    ):
        try:
            st = path.stat()
            parts.append(f"{st.st_mtime_ns}:{st.st_size}")
        except OSError:
            parts.append("-")
    return hashlib.blake2b("|".join(parts).encode(), digest_size=12).hexdigest()


def routes(ctx: UiContext) -> list[Route]:
    async def version(request: Request) -> Response:
        return JSONResponse({"version": await run_in_threadpool(fingerprint, ctx)})

    return [Route("/api/version", version, name="version")]
