"""Run a reader against a FIFO without letting a blocking bug hang the test run.

A reader that opens a FIFO with a plain ``open`` waits for a writer forever.
:func:`returns_promptly` runs the call in a daemon thread; if it has not returned within the
timeout, the FIFOs are opened for writing (which releases the blocked reader with an empty read)
and the test fails.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest


def returns_promptly(call: Callable[[], Any], fifos: Sequence[Path], timeout: float = 15.0) -> Any:
    """``call()``'s result, or its exception re-raised; fails the test if it blocked."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        for fifo in fifos:  # release the blocked open() so the thread can end
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(5)
        pytest.fail(f"the reader blocked on a FIFO for more than {timeout} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")
