"""Background jobs the runtime owns: named, one in flight per name, time-limited, observable.

Invariants:

* :meth:`TaskBoard.spawn` never blocks and never raises into the caller's turn; a job that fails
  is logged and recorded (``state="failed"``, ``last_error``), one that exceeds its time limit is
  cancelled and recorded as ``timed_out``.
* At most one job per name runs at a time; spawning a name that is still running is refused
  (returns False) so a slow job cannot pile up copies of itself.
* :meth:`drain` waits at most its timeout in total, then cancels what is left and says which.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

log = logging.getLogger(__name__)

State = Literal["off", "idle", "running", "ok", "failed", "timed_out", "cancelled"]


@dataclass(frozen=True)
class TaskStatus:
    """One background component as ``MemoryRuntime.status()`` reports it."""

    name: str
    state: State = "idle"
    runs: int = 0
    last_error: str | None = None
    detail: str = ""
    last_seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "runs": self.runs,
            "last_error": self.last_error,
            "detail": self.detail,
            "last_seconds": None if self.last_seconds is None else round(self.last_seconds, 3),
        }


Done = Callable[[Any], str | None]


class TaskBoard:
    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._status: dict[str, TaskStatus] = {}

    def status(self, name: str) -> TaskStatus:
        return self._status.get(name, TaskStatus(name))

    def set(self, name: str, **changes: Any) -> None:
        self._status[name] = replace(self.status(name), **changes)

    def running(self, name: str) -> bool:
        task = self._tasks.get(name)
        return task is not None and not task.done()

    def spawn(
        self,
        name: str,
        job: Callable[[], Awaitable[Any]],
        *,
        timeout: float,
        on_done: Done | None = None,
    ) -> bool:
        """Start ``job`` in the background; False (nothing started) if ``name`` is running.

        ``on_done`` turns the job's result into the status detail (e.g. "Saved 2 memories").
        """
        if self.running(name):
            return False
        previous = self.status(name)
        self._status[name] = replace(previous, state="running", runs=previous.runs + 1)
        self._tasks[name] = asyncio.get_running_loop().create_task(
            self._run(name, job, timeout, on_done), name=f"memdir-{name}"
        )
        return True

    async def _run(
        self, name: str, job: Callable[[], Awaitable[Any]], timeout: float, on_done: Done | None
    ) -> None:
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):
                result = await job()
        except TimeoutError:
            self.set(name, state="timed_out", last_error=f"exceeded its {timeout:g}s limit")
        except asyncio.CancelledError:
            self.set(name, state="cancelled")
            raise
        except Exception as exc:  # a background failure is reported, never raised into a turn
            log.warning("background %s failed: %s", name, exc)
            self.set(name, state="failed", last_error=f"{type(exc).__name__}: {exc}")
        else:
            detail = self.status(name).detail
            if on_done is not None:
                try:
                    detail = on_done(result) or detail
                except Exception:  # a reporting callback must not turn success into failure
                    log.exception("reporting the result of %s failed", name)
            self.set(name, state="ok", last_error=None, detail=detail)
        finally:
            self.set(name, last_seconds=time.monotonic() - started)

    async def wait(self, name: str, timeout: float) -> bool:
        """Wait for ``name`` to finish; False if it is still running after ``timeout``."""
        task = self._tasks.get(name)
        if task is None or task.done():
            return True
        done, _ = await asyncio.wait({task}, timeout=max(0.0, timeout))
        return bool(done)

    async def cancel(self, name: str) -> bool:
        """Cancel ``name`` if running and wait for it to unwind; True if something was stopped."""
        task = self._tasks.get(name)
        if task is None or task.done():
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return True

    async def drain(self, names: Iterable[str], timeout: float) -> list[str]:
        """Wait (``timeout`` in total) for ``names``; cancel and return those still running."""
        deadline = time.monotonic() + timeout
        late: list[str] = []
        for name in names:
            if not await self.wait(name, deadline - time.monotonic()):
                late.append(name)
                await self.cancel(name)
                self.set(name, state="timed_out", last_error=f"still running after {timeout:g}s")
        return late


def retrieve_exception(task: asyncio.Task[Any]) -> None:
    """Mark a dropped task's failure as seen (it is reported through status, not a warning)."""
    if not task.cancelled():
        task.exception()
