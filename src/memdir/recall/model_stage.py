"""The second stage of a two-stage search index: the model's vectors, filled in after the fact.

A refresh indexes every changed memory with the fast stage and the memory is searchable at once;
this part has the model read the passages it has not read yet — a query's best candidates on
demand (:meth:`ModelStage.fill` with rows and a deadline), everything else in the background
(:mod:`memdir.recall.fill`) or by ``memdir reindex``. Each distinct passage text is embedded once
(:mod:`memdir.recall.model_vectors`); texts read by this process are kept until the model has
read them, others are read again from their files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memdir.recall import index_files
from memdir.recall.embed import Embedder, Vectors
from memdir.recall.index_rows import RefreshReport
from memdir.recall.memory_text import MemoryText
from memdir.recall.model_vectors import HASH_DTYPE, passage_hash

FILL_BATCH = 8  # passages per model call when filling (one ONNX batch)
QUERY_BATCH = 2  # ... when a query waits for it


class StagedIndex(index_files.SearchIndex, Protocol):
    """What the second stage needs of a :class:`memdir.recall.search_index.SearchIndex`."""

    starts: npt.NDArray[np.int64]
    progress: Callable[[int, int], None] | None

    @property
    def fast(self) -> Embedder | None: ...

    def live_rows(self) -> npt.NDArray[np.int64]: ...

    def positions(self, rows: Iterable[int]) -> npt.NDArray[np.int64]: ...

    def read_text(
        self, rel: str, report: RefreshReport | None
    ) -> tuple[MemoryText | None, str, int]: ...


class ModelStage:
    """The model's side of ``index``: what it has still to read, and reading it."""

    def __init__(self, index: StagedIndex) -> None:
        self.index = index
        self.texts: dict[bytes, str] = {}  # passages read this process, not yet model-embedded

    def pending(self) -> int:
        """Live passages still without the model's vector."""
        index = self.index
        if index.fast is None or not index.docs:
            return 0
        have = index.passages.have
        return int(np.logical_not(have)[index.positions(index.live_rows())].sum())

    def work(
        self, rows: Iterable[int] | None = None, limit: int = FILL_BATCH
    ) -> list[tuple[bytes, str]]:
        """Up to ``limit`` distinct (hash, text) passages of ``rows`` (all live rows when None)
        that wait for the model; texts not kept in memory are read again from their files."""
        index = self.index
        if index.fast is None:
            return []
        out: dict[bytes, str] = {}
        have = index.passages.have
        candidates = index.live_rows() if rows is None else rows
        for row in candidates:
            row = int(row)
            start, count = int(index.starts[row]), index.docs[row].passages
            if have[start : start + count].all():
                continue
            for position in range(start, start + count):
                if have[position]:
                    continue
                digest = bytes(index.passages.hashes[position])
                text = self.texts.get(digest) or self._reread(row).get(digest)
                if text is not None:
                    out.setdefault(digest, text)
            if len(out) >= limit:
                break
        return list(out.items())[:limit] if len(out) > limit else list(out.items())

    def _reread(self, row: int) -> dict[bytes, str]:
        text = self.index.read_text(self.index.docs[row].rel, None)[0]
        if text is None:
            return {}
        found = {passage_hash(p): p for p in text.passages()}
        self.texts.update(found)
        return found

    def install(
        self, hashes: Sequence[bytes], vectors: Vectors, rows: Iterable[int] | None = None
    ) -> None:
        """Record the model's ``vectors`` for passages with these ``hashes`` (in ``rows``, or
        every pending passage when None)."""
        index = self.index
        index.model_vectors.add(list(hashes), vectors)
        positions = index.positions(rows) if rows is not None else np.arange(index.passages.n)
        positions = positions[np.logical_not(index.passages.have[positions])]
        wanted = np.isin(index.passages.hashes[positions], np.array(list(hashes), dtype=HASH_DTYPE))
        positions = positions[wanted]
        if positions.size:
            have, model = index.model_vectors.lookup(index.passages.hashes[positions])
            index.passages.set_model(positions[have], model[have])
        for digest in hashes:
            self.texts.pop(digest, None)

    def fill(self, rows: Sequence[int] | None = None, *, deadline: float | None = None) -> int:
        """Embed with the model what ``rows`` (every live row when None) still lack, one batch
        at a time until done or ``deadline`` (a ``time.monotonic()`` value; the first batch runs
        regardless); passages embedded."""
        index = self.index
        done, last = 0, 0.0
        total = self.pending() if rows is None else 0
        # with a deadline: small batches, the first always (a query's two best candidates are
        # read whatever the refresh cost), then none that would end past it (as the last took)
        limit = FILL_BATCH if deadline is None else QUERY_BATCH
        while deadline is None or done == 0 or time.monotonic() + last < deadline:
            batch = self.work(rows, limit)
            if not batch:
                break
            hashes = [h for h, _ in batch]
            began = time.monotonic()
            self.install(hashes, index.model_vectors.embed(hashes, [t for _, t in batch]), rows)
            last = time.monotonic() - began
            done += len(batch)
            if index.progress is not None and rows is None:
                index.progress(done, max(total, done))
        return done

    def save(self) -> list[str]:
        """Persist the model vectors computed since the last save; problems, if any."""
        report = RefreshReport()
        if self.index.model_vectors.dirty:
            index_files.save(self.index, report, rows=False)
        return report.problems


__all__ = ["FILL_BATCH", "QUERY_BATCH", "ModelStage", "StagedIndex"]
