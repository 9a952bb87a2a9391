"""The runtime's team-sync and dream steps: each a background job on the runtime's task board.

* :class:`TeamStep`: the first pull is awaited (bounded), so the session's prompt shows the team's
  memory; then :class:`~memdir.team.watcher.TeamWatcher` runs for the whole session (push on
  change, periodic pull) and is stopped and flushed at the end, so a write made just before exit
  still goes out.
* :class:`DreamStep`: the consolidation gate is checked (one ``stat`` when closed) and, when open,
  the dream runs in the background under the consolidation lock; a dream cut short rolls the lock
  back (``memdir.consolidate.maybe_dream``), so the next session tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memdir.runtime.tasks import TaskBoard

if TYPE_CHECKING:
    from memdir.consolidate import Dreamer, DreamGate, DreamOutcome
    from memdir.team.client import TeamSyncClient

WATCHER = "team-watcher"


class TeamStep:
    def __init__(
        self, client: TeamSyncClient, board: TaskBoard, *, debounce: float, pull_timeout: float
    ) -> None:
        from memdir.team.watcher import TeamWatcher

        self.client = client
        self.board = board
        self.pull_timeout = pull_timeout
        self.watcher = TeamWatcher(client, debounce=debounce, report=self._report)
        self._stop = asyncio.Event()

    def _report(self, kind: str, payload: Any) -> None:
        if kind == "error":
            self.board.set("team", state="failed", last_error=str(payload))
        elif kind == "suppressed":
            self.board.set("team", state="failed", last_error=f"pushes suppressed: {payload}")
        else:
            written = getattr(payload, "written", None) or getattr(payload, "uploaded", None)
            detail = f"{kind}: {len(written)} file(s)" if written else f"{kind}: nothing new"
            self.board.set("team", state="ok", last_error=None, detail=detail)

    async def start(self) -> None:
        try:
            await asyncio.wait_for(self.watcher.pull_now(), self.pull_timeout)
        except TimeoutError:
            self.board.set("team", state="timed_out", last_error="first pull timed out")
        # The watcher runs under its own name; "team" shows the sync results.
        self.board.spawn(WATCHER, lambda: self.watcher.run(self._stop), timeout=float("inf"))

    def notify(self) -> None:
        self.watcher.notify()

    async def stop(self, timeout: float) -> bool:
        """Stop watching and flush (a final push); False if that did not finish in time."""
        self._stop.set()
        late = await self.board.drain([WATCHER], timeout)
        with contextlib.suppress(Exception):
            await self.client.aclose()
        return not late


class DreamStep:
    def __init__(
        self,
        dreamer: Dreamer,
        gate: Callable[[], DreamGate],
        board: TaskBoard,
        notices: Callable[[str], None],
        *,
        session_id: str,
        timeout: float,
    ) -> None:
        self.dreamer = dreamer
        self._gate_factory = gate
        self._gate: DreamGate | None = None
        self.board = board
        self.notice = notices
        self.session_id = session_id
        self.timeout = timeout

    @property
    def gate(self) -> DreamGate:
        if self._gate is None:
            self._gate = self._gate_factory()
        return self._gate

    def maybe(self, *, force: bool = False) -> bool:
        """Start a gated (or forced) dream in the background; False if one is running."""
        from memdir.consolidate import maybe_dream

        gate, dreamer = self.gate, self.dreamer

        def job() -> Any:
            return maybe_dream(gate, dreamer, current_session=self.session_id, force=force)

        return self.board.spawn("dream", job, timeout=self.timeout, on_done=self._done)

    def _done(self, outcome: DreamOutcome) -> str:
        if outcome.notice:
            self.notice(outcome.notice)
        if outcome.reason == "failed" and outcome.report is not None:
            self.notice(f"dream failed: {outcome.report.error}")
            self.board.set("dream", last_error=outcome.report.error)
        if outcome.ran:
            return outcome.notice or "ran; nothing to improve"
        gate = outcome.gate
        return f"not run: {gate.reason if gate is not None else outcome.reason}"

    async def now(self) -> str:
        """A manual dream (gates skipped, the lock respected), awaited; the line to show."""
        if not await self.board.wait("dream", self.timeout):
            return "a dream is already running"
        self.maybe(force=True)
        await self.board.wait("dream", self.timeout)
        status = self.board.status("dream")
        return status.last_error or status.detail

    @property
    def ran_this_session(self) -> bool:
        return self.board.status("dream").runs > 0

    async def finish(self, timeout: float) -> bool:
        """Check the gate once more if nothing ran yet, and let a running dream finish."""
        if not self.ran_this_session:
            self.maybe()  # the gate is one stat when closed
        return not await self.board.drain(["dream"], timeout)
