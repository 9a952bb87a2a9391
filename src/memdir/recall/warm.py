"""Long-lived recall engines kept warm for many callers: the cache behind the recall daemon.

Building an engine (ONNX embedder, search index) costs seconds; one recall on a warm engine
costs milliseconds. :class:`WarmRecall` keeps up to ``max_engines`` engines (least recently used
evicted) keyed by (memory dir, cache dir) and keeps each one's index current. It knows nothing
about sockets or hooks: the daemon is a transport in front of it, and a hook that recalls
in-process uses :func:`build_engine` and :func:`recall_attachments` directly, so both surface
identical text.

Invariants:
- One recall at a time per engine (its lock); a refresh runs under the same lock.
- The prompt path never walks the memory dir: :class:`Freshness` compares directory mtimes (a few
  ``stat`` calls) and refreshes only when one moved; edits in place are caught by a background
  refresh after each answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memdir.errors import MissingExtraError
from memdir.prompt_context import RecallContext
from memdir.recall.base import MAX_SELECTED, takes_keyword
from memdir.recall.engine import MemoryRecall, should_recall
from memdir.recall.session import RecallSession
from memdir.recall.surface import Attachment, RelevantMemory, surface

MAX_ENGINES = 4


def build_engine(memory_dir: Path, cache_dir: Path) -> MemoryRecall:
    """Local (offline) recall, or the keyword selector when the ``recall`` extra is missing."""
    from memdir.recall.factory import build_recall

    try:
        return build_recall(memory_dir, cache_dir, kind="local")
    except MissingExtraError:
        from memdir.recall.keyword import KeywordSelector

        return MemoryRecall(memory_dir, KeywordSelector(), header_cache=cache_dir / "headers.json")


def recall_attachments(
    engine: MemoryRecall,
    query: str,
    exclude: Sequence[str],
    limit: int,
    *,
    context: RecallContext | None = None,
) -> list[dict[str, Any]]:
    """What recall surfaces for ``query``, skipping ``exclude`` paths, as JSON-ready dicts."""
    if hasattr(engine.selector, "select_sync") and engine.manifest_cap is None:
        found = _local_recall(engine, query, exclude, limit, context)
    else:
        session = RecallSession(surfaced={str(Path(p).resolve()) for p in exclude})
        found = asyncio.run(engine.recall(query, session, limit=limit, context=context))
    return [
        {
            "path": str(Path(a.path).resolve()),
            "filename": a.filename,
            "header": a.header,
            "content": a.content,
            "truncated": a.truncated,
        }
        for a in found
    ]


def _local_recall(
    engine: MemoryRecall,
    query: str,
    exclude: Sequence[str],
    limit: int,
    context: RecallContext | None = None,
) -> list[Attachment]:
    """The offline selector over its own index, asked for enough extra picks to skip ``exclude``.

    ``MemoryRecall.find`` rescans every header and resolves every path to drop the surfaced ones
    (O(N) filesystem calls per prompt); the selector's index already knows every memory, so only
    the few picks are resolved here. Same selection: the best ``limit`` not yet surfaced.
    """
    if not should_recall(query):
        return []
    excluded = {str(Path(p).resolve()) for p in exclude}
    selector: Any = engine.selector  # a local selector: select_sync over its own index
    wants = context is not None and takes_keyword(selector.select_sync, "context")
    kwargs = {"context": context} if wants else {}  # the keyword fallback takes none
    picks = selector.select_sync(query, None, limit=limit + len(excluded), **kwargs)
    out: list[Attachment] = []
    for pick in picks:
        path = engine.memory_dir / pick.filename
        try:
            if str(path.resolve()) in excluded:
                continue
            mtime = path.stat().st_mtime
        except OSError:
            continue  # deleted since the index saw it
        attachment = surface(RelevantMemory(path, pick.filename, mtime, pick.score, pick.reason))
        if attachment is not None:
            out.append(attachment)
        if len(out) >= min(limit, MAX_SELECTED):
            break
    return out


class Freshness:
    """Keeps a warm selector's index current without walking the memory dir on the prompt path.

    Before a recall: compare the mtimes of the memory dir's directories with the last walk (a
    few ``stat`` calls) and refresh now if any changed — that catches every new, deleted or
    renamed memory, and every memdir write (an atomic rename). After answering: refresh in the
    background, which catches memories edited in place by other tools by the next prompt.
    """

    def __init__(self, engine: MemoryRecall) -> None:
        self.engine = engine
        selector: Any = engine.selector  # the offline selector has refresh(); others need none
        self.selector: Any = selector if hasattr(selector, "refresh") else None
        if self.selector is not None:
            self.selector.refresh_interval = float("inf")  # refreshes are decided here
        self.signature: dict[str, int] = {}
        self.first_done = False
        self.background: threading.Thread | None = None

    def _walk_signature(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for dirpath, dirnames, _ in os.walk(self.engine.memory_dir):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            with contextlib.suppress(OSError):
                found[dirpath] = os.stat(dirpath).st_mtime_ns
        return found

    def _changed(self) -> bool:
        for path, mtime in self.signature.items():
            try:
                if os.stat(path).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        return not self.signature

    def refresh(self) -> None:
        if self.selector is not None:
            signature = self._walk_signature()  # before the walk: a change during it is seen
            self.selector.refresh()
            self.signature = signature

    def before_recall(self) -> None:
        if self.selector is None:
            return
        if not self.signature and not self.first_done:
            # the first answer of a cold engine (a prompt may be waiting on it): one walk, the
            # selector's; the directory signature is taken by the refresh after the answer
            self.selector.refresh()
            self.first_done = True
        elif self._changed():
            self.refresh()

    def after_recall(self, lock: threading.Lock) -> None:
        if self.selector is None or (self.background and self.background.is_alive()):
            return

        def run() -> None:
            with lock:
                self.refresh()

        self.background = threading.Thread(target=run, daemon=True, name="memdir-refresh")
        self.background.start()


def _upgrade_later(engine: MemoryRecall) -> None:
    """After a warm engine's first answer: its embedder builds the optimised graph in the
    background (the first answer used the graph as shipped, ready sooner)."""
    index = getattr(engine.selector, "index", None)
    upgrade = getattr(getattr(index, "embedder", None), "upgrade", None)
    if callable(upgrade):
        threading.Thread(target=_quietly, args=(upgrade,), daemon=True).start()


def _quietly(work: Any) -> None:
    with contextlib.suppress(Exception):  # advisory: the graph as shipped keeps answering
        work()


class WarmRecall:
    """Warm engines for up to ``max_engines`` memory dirs, least recently used evicted."""

    def __init__(self, *, max_engines: int = MAX_ENGINES) -> None:
        self.max_engines = max_engines
        self.engines: OrderedDict[tuple[str, str], MemoryRecall] = OrderedDict()
        self.locks: dict[tuple[str, str], threading.Lock] = {}
        self.freshness: dict[tuple[str, str], Freshness] = {}
        self.guard = threading.Lock()
        self.answered: dict[tuple[str, str], threading.Event] = {}  # set once loaded
        self.loading: dict[tuple[str, str], threading.Thread] = {}
        self.ready_guard = threading.Lock()  # not ``guard``: that one is held through a build

    def engine(self, memory_dir: str, cache_dir: str) -> tuple[MemoryRecall, threading.Lock]:
        key = (memory_dir, cache_dir)
        with self.guard:
            if key in self.engines:
                self.engines.move_to_end(key)
                return self.engines[key], self.locks[key]
            engine = build_engine(Path(memory_dir), Path(cache_dir))
            self.engines[key] = engine
            self.locks[key] = threading.Lock()
            self.freshness[key] = Freshness(engine)
            while len(self.engines) > self.max_engines:
                old, _ = self.engines.popitem(last=False)
                self.locks.pop(old, None)
                self.freshness.pop(old, None)
                with self.ready_guard:
                    self.answered.pop(old, None)
            return engine, self.locks[key]

    def recall(
        self,
        memory_dir: str,
        cache_dir: str,
        query: str,
        exclude: Sequence[str],
        limit: int,
        context: RecallContext | None = None,
    ) -> list[dict[str, Any]]:
        """Recall with a warm engine: index checked before, refreshed in the background after."""
        engine, lock = self.engine(memory_dir, cache_dir)
        fresh = self.freshness[(memory_dir, cache_dir)]
        with lock:
            fresh.before_recall()
            found = recall_attachments(engine, query, exclude, limit, context=context)
        fresh.after_recall(lock)
        self._loaded(memory_dir, cache_dir, engine)
        return found

    def _loaded(self, memory_dir: str, cache_dir: str, engine: MemoryRecall) -> None:
        answered = self._answered(memory_dir, cache_dir)
        if not answered.is_set():
            answered.set()
            _upgrade_later(engine)

    def first_build(self, memory_dir: str, cache_dir: str) -> bool:
        """True while this dir has no index anywhere: not loaded here, none on disk (a new
        memdir home, a dir never recalled from). Its first load reads every memory."""
        from memdir.recall.index_files import saved

        return not self._answered(memory_dir, cache_dir).is_set() and not saved(Path(cache_dir))

    def _answered(self, memory_dir: str, cache_dir: str) -> threading.Event:
        with self.ready_guard:
            return self.answered.setdefault((memory_dir, cache_dir), threading.Event())

    def ready(self, memory_dir: str, cache_dir: str, wait: float) -> bool:
        """True when this dir's engine has answered once (embedder and index loaded), waiting
        up to ``wait`` seconds for it; a load is started if none is under way."""
        answered = self._answered(memory_dir, cache_dir)
        if answered.is_set():
            return True
        with self.ready_guard:
            loading = self.loading.get((memory_dir, cache_dir))
            if loading is None or not loading.is_alive():
                loading = threading.Thread(
                    target=self.warm_up, args=(memory_dir, cache_dir), daemon=True
                )
                self.loading[(memory_dir, cache_dir)] = loading
                loading.start()
        return answered.wait(wait)

    def warm_up(self, memory_dir: str, cache_dir: str) -> None:
        """Load this dir's engine: its index read (or built) and its embedder loaded.

        No query is answered: a made-up one would have the model read its "best" candidates
        (up to ``QUERY_FILL_SECONDS``) while the prompt that is waiting asks for its own.
        """
        engine, lock = self.engine(memory_dir, cache_dir)
        fresh = self.freshness[(memory_dir, cache_dir)]
        with lock:
            fresh.before_recall()
            embedder = getattr(getattr(engine.selector, "index", None), "embedder", None)
            if embedder is not None:
                embedder.embed(["warm"])  # the network loads on first use
        self._loaded(memory_dir, cache_dir, engine)

    def memory_dirs(self) -> list[str]:
        return [m for m, _ in self.engines]
