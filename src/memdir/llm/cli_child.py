"""Driving one headless agent CLI child: prompt on stdin, JSON lines on stdout, nothing left over.

Shared by the host CLI providers that read a line stream (``gemini -p``). The invariants: a
stream that reports a failure (a refused key) stops the wait at once; a caller's ``stop`` event
ends the wait too (memdir's own tool-call bound); :func:`end` kills the child's whole process
group (the CLI and the MCP relay it started), so a timeout never leaves a process behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

STDERR_TAIL = 400


class LineStream(Protocol):
    """What :func:`drive` folds the child's stdout into."""

    stderr: str

    @property
    def done(self) -> bool: ...

    @property
    def failed(self) -> bool: ...

    def feed(self, line: bytes) -> None: ...


async def drive(
    proc: asyncio.subprocess.Process,
    prompt: str,
    stream: LineStream,
    stop: asyncio.Event | None,
    *,
    noise: Sequence[str] = (),
) -> None:
    """Send ``prompt``, feed every stdout line to ``stream`` until the child ends, the stream
    fails or ``stop`` is set; keep stderr's tail (without ``noise`` lines) when it ended early."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    with contextlib.suppress(ConnectionError):
        proc.stdin.write(prompt.encode("utf-8"))
        await proc.stdin.drain()
        proc.stdin.close()
    err_task = asyncio.ensure_future(proc.stderr.read())
    out = proc.stdout

    async def read() -> None:
        while line := await out.readline():
            stream.feed(line)
            if stream.failed:
                return  # e.g. a refused key: no retry will fix it, stop waiting now
        await proc.wait()

    stopper: Callable[[], Awaitable[Any]] = stop.wait if stop is not None else asyncio.Event().wait
    reader = asyncio.ensure_future(read())
    waiter = asyncio.ensure_future(stopper())
    try:
        await asyncio.wait({reader, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if reader.done():
            reader.result()
        if reader.done() and not stream.failed:
            with contextlib.suppress(Exception):
                err = await asyncio.wait_for(err_task, 1.0)
                stream.stderr = tail(err, noise)
    finally:
        for task in (reader, waiter, err_task):
            task.cancel()


def tail(raw: bytes, noise: Sequence[str] = ()) -> str:
    """The last :data:`STDERR_TAIL` characters of stderr on one line, ``noise`` lines dropped."""
    lines = raw.decode("utf-8", "replace").splitlines()
    kept = [ln for ln in lines if ln.strip() and not ln.startswith(tuple(noise))]
    return " ".join(" ".join(kept).split())[-STDERR_TAIL:]


async def end(proc: asyncio.subprocess.Process) -> None:
    """Kill the child's process group if it is still running, and reap it."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), 5.0)


__all__ = ["STDERR_TAIL", "LineStream", "drive", "end", "tail"]
