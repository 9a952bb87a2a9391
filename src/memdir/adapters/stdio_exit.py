"""How a stdio server process ends: at once and with status 0 on SIGINT or SIGTERM.

A host stops its MCP server by closing its stdin (the SDK's reader sees EOF and the server
returns) or by a signal. On a signal the SDK cannot end: asyncio's SIGINT handler cancels the
main task, which then waits for the worker thread blocked in ``read()`` on stdin — until the
host gives up and kills the process ("SIGINT failed, sending SIGTERM"), and SIGTERM's default
kills it with status -15. So stdio serving replaces both with a handler that ends the process
on the spot (installed before the event loop starts, so asyncio keeps it).

Ending without unwinding is safe here: every memdir write is atomic (a write cut short leaves a
temp file that the next locked write sweeps, never a torn memory) and the store lock is a
descriptor lock the kernel releases; the SDK flushes each message as it sends it, so nothing
buffered is lost that the host still wanted.
"""

from __future__ import annotations

import os
import signal
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _exit_now(signum: int, frame: FrameType | None) -> None:
    os._exit(0)


def exit_on_stop_signals() -> None:
    """From now on SIGINT and SIGTERM end this process at once with status 0 (main thread)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _exit_now)


__all__ = ["STOP_SIGNALS", "exit_on_stop_signals"]
