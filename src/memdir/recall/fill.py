"""The model reads what the fast stage indexed, in the background, without holding up queries.

A refresh makes every memory searchable by its fast-stage vectors and BM25
(:mod:`memdir.recall.search_index`); :class:`BackgroundFill` then embeds the waiting passages
with the model in a daemon thread, one ONNX batch at a time. The model runs outside the index
lock — only taking the next batch and installing its vectors hold it — so a query waits at most
for an install, never for a model pass. Vectors are saved every ``save_every`` seconds and at the
end, so a process that exits mid-way loses at most that much work.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memdir.errors import ShutdownError

if TYPE_CHECKING:
    from memdir.recall.search_index import SearchIndex

log = logging.getLogger(__name__)

SAVE_EVERY = 10.0
BATCH = 4  # passages per model call: a query waits at most for one such call
READ_SLICE = 0.2  # seconds of reading files per turn of the lock


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """How much of the index the model has read."""

    memories: int
    by_model: int  # memories whose every passage has the model's vector
    pending_passages: int
    fast_stage: str | None
    fast_ready: bool
    background: bool  # a background fill is running
    unread: int = 0  # changed files not read yet (a query's deadline came first)

    @property
    def complete(self) -> bool:
        return self.pending_passages == 0 and self.unread == 0

    def note(self) -> str:
        if self.complete:
            return f"index: all {self.memories} memories read by the model"
        unread = f"; {self.unread} changed files not indexed yet" if self.unread else ""
        how = "in the background" if self.background else "run `memdir reindex` to finish"
        fast = "the fast stage" if self.fast_ready else "words alone (fast stage being prepared)"
        return (
            f"index: the model has read {self.by_model} of {self.memories} memories; the rest "
            f"rank by {fast} until it has ({self.pending_passages} passages to go, {how})"
            f"{unread}"
        )


class BackgroundFill:
    """One daemon thread per index that embeds its waiting passages with the model."""

    def __init__(
        self,
        index: SearchIndex,
        lock: Callable[[], threading.RLock],
        *,
        save_every: float = SAVE_EVERY,
    ) -> None:
        self.index = index
        self._lock = lock
        self.save_every = save_every
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._queries = 0  # queries in flight: the fill waits for them
        self._quiet = threading.Condition()

    def hold(self) -> None:
        """A query starts: no new batch until :meth:`release` (the one in flight finishes)."""
        with self._quiet:
            self._queries += 1

    def release(self) -> None:
        with self._quiet:
            self._queries = max(0, self._queries - 1)
            self._quiet.notify_all()

    def _wait_quiet(self) -> None:
        with self._quiet:
            self._quiet.wait_for(lambda: self._queries == 0 or self._stop.is_set())

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True, name="memdir-fill")
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        self._stop.set()
        with self._quiet:
            self._quiet.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the fill to finish; True when it has."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running()

    def _run(self) -> None:
        lock = self._lock()
        saved = time.monotonic()
        try:
            while not self._stop.is_set():
                self._wait_quiet()
                with lock:
                    if self.index.backlog:  # files a query's deadline left unread: read first
                        self.index.refresh(deadline=time.monotonic() + READ_SLICE)
                        continue
                    batch = self.index.model.work(limit=BATCH)
                if not batch:
                    break
                hashes = [h for h, _ in batch]
                vectors = self.index.embedder.embed([t for _, t in batch])  # outside the lock
                with lock:
                    self.index.model.install(hashes, vectors)
                if time.monotonic() - saved >= self.save_every:
                    with lock:
                        self._save()
                    saved = time.monotonic()
            with lock:
                self._save()
        except ShutdownError:  # the process is exiting: the next one reads the rest
            return
        except Exception:  # advisory work: recall keeps the fast stage's scores
            log.exception("background embedding failed")

    def _save(self) -> None:
        for problem in self.index.save_model_vectors():
            log.warning("recall index: %s", problem)


__all__ = ["SAVE_EVERY", "BackgroundFill", "IndexStatus"]
