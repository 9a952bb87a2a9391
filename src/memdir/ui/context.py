"""What the web app is given: resolved settings and paths, a store factory, the start token.

Built once by the entry point (``memdir ui``); the app never reads the environment.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memdir.config import Settings
from memdir.model import MemoryHeader
from memdir.paths import ResolvedPaths
from memdir.store import MemoryStore


@dataclass
class UiContext:
    settings: Settings
    paths: ResolvedPaths
    make_store: Callable[[], MemoryStore]
    token: str
    read_only: bool = False
    evidence: bool = True  # check memories against the project's repository (MEMDIR_EVIDENCE)
    today: Callable[[], dt.date] = dt.date.today
    _selector: Any = field(default=None, repr=False)
    _tracker: Any = field(default=None, repr=False)
    _last: list[MemoryHeader] | None = field(default=None, repr=False)
    generation: int = 0  # bumped whenever the headers change (live updates watch it)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def memory_dir(self) -> Path:
        return self.paths.memory_dir

    @property
    def cache_dir(self) -> Path:
        return self.paths.cache_dir

    @property
    def csrf(self) -> str:
        """The form token: derived from the start token, so it dies with the process."""
        return hmac.new(self.token.encode(), b"csrf", hashlib.sha256).hexdigest()

    def store(self) -> MemoryStore:
        return self.make_store()

    def headers(self) -> list[MemoryHeader]:
        """Every memory header, newest first, kept warm: only changed files are read again
        (recall's :class:`~memdir.recall.headers.HeaderTracker`, not a scan per request)."""
        with self._lock:
            if self._tracker is None:
                from memdir.recall.headers import HeaderTracker

                cache = self.cache_dir / "headers.json"
                self._tracker = HeaderTracker(self.memory_dir, cache_path=cache)
            tracker = self._tracker
        found: list[MemoryHeader] = tracker.headers()
        with self._lock:
            if found is not self._last:
                self._last = found
                self.generation += 1
        return found

    def selector(self) -> Any:
        """The local recall selector, built once: its index stays warm between searches."""
        with self._lock:
            if self._selector is None:
                from memdir.recall.factory import local_selector

                self._selector = local_selector(self.memory_dir, self.cache_dir)
            return self._selector
