"""Keep a team directory in sync in the background: pull at start and periodically, push on change.

Invariants:

- At most one pull or push runs at a time (one lock), so the sync state is never written by two
  operations at once. A change seen while a push is in flight re-arms a push after it, so the
  last change is always pushed.
- Changes are debounced (2 s by default): a burst of writes costs one push.
- After a permanent failure (bad token, no such repository, a 4xx other than 409/429) pushes are
  suppressed — retrying cannot help and would hammer the server — until a file is deleted in the
  team dir (the user is changing things) or the watcher restarts. Pulls continue.
- Shutdown awaits the in-flight push, then flushes with a final push (a no-op when nothing
  changed), so a write made just before exit is never left behind.

Use it from the CLI (``memdir team watch``) or inside an agent::

    stop = asyncio.Event()
    task = asyncio.create_task(TeamWatcher(client).run(stop))
    ...               # memory writes may call watcher.notify() as a write hook
    stop.set(); await task
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from memdir.atomic import ensure_dir
from memdir.errors import MissingExtraError, SyncAuthError, SyncError, SyncRejectedError
from memdir.team.client import PullResult, PushResult, TeamSyncClient

Report = Callable[[str, "PullResult | PushResult | SyncError | str"], None]


def is_permanent(exc: SyncError) -> bool:
    """Failures a retry cannot fix: auth, missing repository, any 4xx but 409/429."""
    if isinstance(exc, SyncAuthError):
        return True
    return isinstance(exc, SyncRejectedError) and exc.status not in (409, 429)


class TeamWatcher:
    def __init__(
        self,
        client: TeamSyncClient,
        *,
        debounce: float = 2.0,
        pull_interval: float | None = 300.0,
        report: Report | None = None,
    ):
        self.client = client
        self.team_dir: Path = client.team_dir
        self.debounce = debounce
        self.pull_interval = pull_interval
        self.suppressed: str | None = None
        self.pushes = 0
        self._report: Report = report or (lambda kind, payload: None)
        self._lock = asyncio.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._push_task: asyncio.Task[None] | None = None
        self._rearm = False
        self._dirty = False

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Pull, push what changed meanwhile, then watch and push until ``stop`` is set; flush."""
        stop = stop or asyncio.Event()
        ensure_dir(self.team_dir)
        await self.pull_now()
        workers = [asyncio.create_task(self._watch(stop))]
        if self.pull_interval:
            workers.append(asyncio.create_task(self._periodic_pull(self.pull_interval)))
        # Files written while no watcher ran (or before inotify is armed) go out with one push
        # after the first debounce; with nothing changed it sends no request.
        self.notify()
        try:
            await stop.wait()
        finally:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            await self._flush()

    def notify(self) -> None:
        """A team file changed: (re)start the debounce timer. Safe to call as a write hook."""
        self._dirty = True
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self.debounce, self._fire)

    async def pull_now(self) -> None:
        async with self._lock:
            try:
                self._report("pull", await self.client.pull())
            except SyncError as exc:
                self._report("error", exc)

    async def push_now(self) -> None:
        if self.suppressed is not None:
            self._report("suppressed", self.suppressed)
            return
        async with self._lock:
            self._dirty = False
            try:
                result = await self.client.push()
            except SyncError as exc:
                if is_permanent(exc):
                    self.suppressed = str(exc)
                self._report("error", exc)
                return
            self.pushes += 1
            self._report("push", result)

    def _fire(self) -> None:
        self._timer = None
        if self._push_task is not None and not self._push_task.done():
            self._rearm = True
            return
        self._push_task = asyncio.create_task(self._push_loop())

    async def _push_loop(self) -> None:
        while True:
            self._rearm = False
            await self.push_now()
            if not self._rearm:
                return

    async def _watch(self, stop: asyncio.Event) -> None:
        try:
            from watchfiles import Change, awatch
        except ImportError as exc:
            raise MissingExtraError("watchfiles", "team") from exc
        async for changes in awatch(self.team_dir, stop_event=stop, debounce=50, step=20):
            relevant = [(c, p) for c, p in changes if not _hidden(Path(p), self.team_dir)]
            if not relevant:
                continue
            if any(change == Change.deleted for change, _ in relevant):
                self.suppressed = None
            self.notify()

    async def _periodic_pull(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            await self.pull_now()

    async def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._push_task is not None:
            with contextlib.suppress(Exception):
                await self._push_task
        # Always a final push, not only when a change was seen: the last write may be younger
        # than the watcher's event latency. With nothing changed it sends no request.
        self._rearm = False
        await self.push_now()


def _hidden(path: Path, root: Path) -> bool:
    """Temp files of atomic writes and other dot-files never trigger a push."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return True
    return any(part.startswith(".") for part in parts)
