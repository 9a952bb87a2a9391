"""Native work (tokenizers, ONNX inference) that a process exit must not cut through.

A daemon thread is dropped at interpreter exit wherever it is. When that is inside
onnxruntime or the tokenizer — the search-index build on the runtime's warm-up thread, still
running when ``memdir chat`` exits — the C++ runtime aborts the process (SIGABRT, "terminate
called without an active exception"), the exit code is 134 and the index is never saved.

Invariant: a batch loop of native calls that can run on a background thread runs inside
:func:`region` and calls :func:`check` before each batch. At exit (an ``atexit`` hook, which
runs before the interpreter is torn down) no region may start and every :func:`check` raises
:class:`~memdir.errors.ShutdownError`, so each thread leaves its region after at most one batch;
the exit waits (bounded) for that. A thread outside every region holds only Python frames,
which the interpreter's exit stops safely.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Iterator

from memdir.errors import ShutdownError

EXIT_WAIT_SECONDS = 30.0  # one batch takes milliseconds; this only bounds a wedged call

_state = threading.Condition()
_active = 0
_stopping = False


def check() -> None:
    """Raise :class:`ShutdownError` when the process is exiting (call before each batch)."""
    if _stopping:
        raise ShutdownError("the process is exiting; native work stopped between batches")


@contextlib.contextmanager
def region() -> Iterator[None]:
    """A stretch of native batches that the exit waits for (it ends at the next check)."""
    global _active
    with _state:
        check()
        _active += 1
    try:
        yield
    finally:
        with _state:
            _active -= 1
            _state.notify_all()


def stop(timeout: float = EXIT_WAIT_SECONDS) -> bool:
    """Refuse new native batches and wait for the regions in flight; False on timeout."""
    global _stopping
    with _state:
        _stopping = True
        return _state.wait_for(lambda: _active == 0, timeout=timeout)


atexit.register(stop)
