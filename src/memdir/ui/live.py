"""Live updates: a fingerprint of everything the pages show, polled by the page script.

The page asks ``/api/version`` every second and reloads when the answer changes (or, when the
user is typing in a form, says so instead of reloading), so an edit by another agent, an
editor or a pull shows within 2 s. Polling a stat walk keeps this dependency-free and works on
every filesystem (inotify does not see network mounts); at 10,000 files a walk is a few ms.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memdir.ui.context import UiContext


def fingerprint(ctx: UiContext) -> str:
    """Changes whenever a file under the memory dir, the hook log or a dream snapshot does."""
    digest = hashlib.blake2b(digest_size=12)
    _walk(ctx.memory_dir, digest)
    for extra in (ctx.cache_dir / "hooks", ctx.cache_dir / "dream" / "snapshots"):
        _walk(extra, digest)
    return digest.hexdigest()


def _walk(root: Path, digest: Any) -> None:
    stack = [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):  # locks (touched by every write), .git, temps
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            line = f"{entry.path}\0{st.st_mtime_ns}\0{st.st_size}\n"
            digest.update(line.encode("utf-8", "surrogateescape"))


def routes(ctx: UiContext) -> list[Route]:
    async def version(request: Request) -> Response:
        return JSONResponse({"version": await run_in_threadpool(fingerprint, ctx)})

    return [Route("/api/version", version, name="version")]
