"""The derived search index of a memory dir: embedding rows and BM25 terms for every memory.

Invariants:
- Memory files are the truth; this index is derived, lives in ``cache_dir`` (never inside the memory
  dir), and may be deleted at any time: the next refresh rebuilds it (files: ``index_files``).
- A refresh costs what changed, not what exists: :class:`~memdir.recall.dirstate.DirState` finds
  changed files from directory mtimes; a file is re-read only when its (mtime, size) changed and
  re-embedded only when its content hash changed.
- Two stages. With a ``fast`` embedder (the static one distilled from MiniLM,
  :mod:`memdir.recall.static_embed`) a refresh reads, analyses and embeds every changed memory
  with it — cheap — and the memory is searchable at once; the model's vectors come later, from
  :meth:`fill` (on demand for a query's best candidates, in the background, or by
  ``memdir reindex``). A passage ranks by the model's cosine once it has one and by the fast
  stage's, mapped onto the model's scale and kept below the "meaning alone" bar, until then.
  Without a fast embedder every passage is embedded by the model during the refresh, as before.
- Each distinct passage text is embedded by the model once (:mod:`memdir.recall.model_vectors`);
  a memory contributes at most :data:`~memdir.recall.memory_text.MAX_PASSAGES` passages.
- Rows are append-only between compactions. A changed memory gets a new row at the end (its old
  row is masked dead), so a change never rebuilds the 100,000-row arrays; BM25 for the appended
  rows comes from :class:`~memdir.recall.live_lexical.LiveLexical`. When the appended rows pass a
  fraction of the base, the live rows are compacted into a new base.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memdir.errors import UnsafePathError
from memdir.model import MemoryHeader
from memdir.recall import index_compaction, index_files
from memdir.recall.dirstate import DirState
from memdir.recall.embed import Embedder, Vectors
from memdir.recall.index_rows import (
    MTIME_TOLERANCE,
    IndexedDoc,
    NewRow,
    RefreshReport,
    safe_name,
    same_stat,
    starts_of,
)
from memdir.recall.lexical import K1, B, LexicalIndex, TermAnalyzer
from memdir.recall.live_lexical import LiveLexical, should_compact
from memdir.recall.memory_text import (
    MAX_PASSAGES,
    PASSAGE_WORDS,
    MemoryText,
    read_memory_text,
)
from memdir.recall.model_stage import ModelStage
from memdir.recall.model_vectors import FILE_NAME, HASH_DTYPE, ModelVectors, passage_hash
from memdir.recall.passage_rows import PassageRows

# 4: type and applies_when per row; 5: only stored ones in BM25; 6: rules + stored as evidence;
# 7: two stages (fast vectors + passage hashes; model vectors keyed by text), capped passages
FORMAT_VERSION = 7
EMBED_CHUNK = 256  # passages per embed call: the unit of progress reporting
# Static cosines crowd around 0.84 (every token vector shares a large component) while MiniLM's
# spread around 0.10 with sd 0.13 (query x memory pairs of the evaluation set and a LoCoMo
# conversation, docs/benchmarks.md). A query's fast-stage scores are standardised over the index
# and put on that spread to order (capped below the "meaning alone" bar, 0.40); the relevance
# rule sees at most UNREAD_COSINE for a memory the model has not read (LocalSelector.rank), so
# such a memory surfaces on its words or situations, never on the fast stage's similarity.
FAST_MEAN, FAST_SD, FAST_CEILING = 0.10, 0.13, 0.39
# Before the fast stage is ready (its table distils once per home), a passage the model has not
# read scores the rules' weak bar: its words alone then decide (lexical coverage ≥ 0.15).
UNREAD_COSINE = 0.18

Progress = Callable[[int, int], None]  # (passages embedded so far, passages to embed)


class FastStage(Embedder, Protocol):
    """A cheap embedder that may need a one-time preparation (``start`` it; ``ready`` says)."""

    def ready(self) -> bool: ...

    def start(self) -> None: ...

    def build(self) -> None: ...


class SearchIndex:
    """Embeddings + BM25 over every memory file in ``memory_dir``, cached in ``cache_dir``."""

    def __init__(
        self,
        memory_dir: Path,
        cache_dir: Path,
        embedder: Embedder,
        analyzer: TermAnalyzer | None = None,
        *,
        dir_state: DirState | None = None,
        applies_when: bool = True,
        fast: FastStage | None = None,
    ) -> None:
        self.memory_dir = memory_dir
        self.applies_when = applies_when  # index applies_when situations (see memory_text)
        self._real_root = Path(os.path.realpath(memory_dir))
        self.cache_dir = cache_dir / "search" / safe_name(embedder.name)
        self.embedder = embedder
        self.fast = fast
        self.model_vectors = ModelVectors(embedder, self.cache_dir / FILE_NAME)
        self.analyzer = analyzer or TermAnalyzer()
        self.dir_state = dir_state or DirState(memory_dir)
        self.progress: Progress | None = None
        self.docs: list[IndexedDoc] = []  # one per row, dead rows included
        self.live = np.zeros(0, dtype=bool)
        self.starts = np.zeros(0, dtype=np.int64)  # first passage row of each row
        self.lexical = LiveLexical(LexicalIndex(self.analyzer), [])
        self.passages = PassageRows(embedder.dim)
        self.base_rows = 0
        self._rows: dict[str, int] = {}  # live rows only
        self._mtimes = np.zeros(0, dtype=np.float64)
        self.terms: list[str | None] = []  # per row, space-joined; base rows load lazily
        self.generation: str | None = None
        self._loaded = False
        self._live_rows: npt.NDArray[np.int64] | None = None
        self.touched: set[int] = set()  # base rows whose mtime moved since the base was saved
        self.model = ModelStage(self)
        self.backlog: list[str] = []  # changed files a refresh's deadline left unread
        # start the fast stage's one-time preparation when it is missing (a long-lived process;
        # a one-shot command leaves it to `memdir reindex` rather than cut it off at exit)
        self.prepare_fast = True
        self.last_refresh = 0.0

    # -- queries -------------------------------------------------------------------------------
    @property
    def has_fast_stage(self) -> bool:
        return self.fast is not None

    @property
    def vectors(self) -> Vectors:
        """One row per passage in the first stage's space (dead rows' included until compaction)."""
        return self.passages.fast

    def row_of(self, rel: str) -> int | None:
        return self._rows.get(rel)

    def live_docs(self) -> list[IndexedDoc]:
        return [self.docs[int(i)] for i in self.live_rows()]

    def live_rows(self) -> npt.NDArray[np.int64]:
        if self._live_rows is None:
            self._live_rows = np.flatnonzero(self.live).astype(np.int64)
        return self._live_rows

    def query_vectors(self, query: str) -> tuple[Vectors, Vectors | None]:
        """(the model's vector of ``query``, the fast stage's or None)."""
        model = self.embedder.embed([query])[0]
        # the fast stage only scores passages the model has not read: none, none needed (a
        # cold process then never touches the 47 MB table)
        if self.fast is None or self.passages.have.all() or not self.fast.ready():
            return model, None
        return model, self.fast.embed([query])[0]

    def semantic_scores(self, query_vector: Vectors, fast_vector: Vectors | None = None) -> Vectors:
        """Cosine similarity of every row to the query: the best of its passages.

        A passage without the model's vector scores by the fast stage (mapped and capped, see
        :data:`FAST_CEILING`), or :data:`UNREAD_COSINE` when the fast stage is not ready either.
        """
        if not self.docs:
            return np.zeros(0, dtype=np.float32)
        rows = self.passages
        if self.fast is None:
            per_passage = rows.fast @ query_vector
        else:
            mapped = np.full(rows.n, UNREAD_COSINE, dtype=np.float32)
            if fast_vector is not None and not rows.have.all():
                fast = rows.fast @ fast_vector
                spread = float(fast.std())
                if spread > 1e-6:
                    mapped = FAST_MEAN + FAST_SD * (fast - float(fast.mean())) / spread
                mapped = np.minimum(mapped, FAST_CEILING)
            per_passage = np.where(rows.have, rows.model @ query_vector, mapped)
        best: Vectors = np.maximum.reduceat(per_passage, self.starts).astype(np.float32)
        return best

    def by_model(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """For each row: are all its passages scored by the model (not the fast stage)?"""
        if self.fast is None or rows.size == 0:
            return np.ones(rows.size, dtype=bool)
        pending = np.logical_not(self.passages.have).astype(np.int64)
        read: npt.NDArray[np.bool_] = np.add.reduceat(pending, self.starts)[rows] == 0
        return read

    def resolve(
        self, headers: Sequence[MemoryHeader]
    ) -> tuple[list[MemoryHeader], npt.NDArray[np.int64]]:
        """(headers not indexed at their mtime, rows of the indexed ones), in one O(N) pass."""
        names = [h.filename for h in headers]
        found = list(map(self._rows.get, names))
        if None in found:
            keep = [i for i, row in enumerate(found) if row is not None]
            stale = [headers[i] for i, row in enumerate(found) if row is None]
        else:
            keep, stale = None, []
        rows = np.array(found if keep is None else [found[i] for i in keep], dtype=np.int64)
        kept = headers if keep is None else [headers[i] for i in keep]
        header_mtimes = np.array([h.mtime for h in kept], dtype=np.float64)
        moved = np.flatnonzero(np.abs(self._mtimes[rows] - header_mtimes) > MTIME_TOLERANCE)
        stale += [kept[int(i)] for i in moved]
        return stale, rows

    def is_fresh_for(self, headers: Sequence[MemoryHeader]) -> bool:
        """True when every header names an indexed file with the same mtime (no I/O)."""
        return not self.resolve(headers)[0]

    # -- refresh -------------------------------------------------------------------------------
    def refresh(self, deadline: float | None = None) -> RefreshReport:
        """Bring the index in step with the memory dir (read and embed only what changed).

        With a ``deadline`` (a ``time.monotonic()`` value) the files not read by then are left in
        :attr:`backlog`, read first by the next refresh: the rows read so far answer meanwhile.
        """
        started = time.perf_counter()
        report = RefreshReport()
        if not self._loaded:
            self._load(report)
        delta = self.dir_state.poll()
        files = self.dir_state.files
        if report.rebuilt:
            suspects = sorted(files)
            removed = sorted(self._rows)
        elif delta.full:
            suspects = sorted(
                rel
                for rel, st in files.items()
                if (row := self._rows.get(rel)) is None or not same_stat(self.docs[row], st)
            )
            removed = sorted(set(self._rows) - set(files))
        else:
            suspects = sorted(
                rel
                for rel in delta.changed
                if (row := self._rows.get(rel)) is None or not same_stat(self.docs[row], files[rel])
            )
            removed = sorted(rel for rel in delta.removed if rel in self._rows)
        if self.backlog:
            suspects = sorted(set(suspects) | {r for r in self.backlog if r in files})
        touched, new_rows = self._read(suspects, report, deadline)
        report.removed = removed
        if new_rows or removed or touched or report.rebuilt:
            texts = [p for row in new_rows for p in row.passages]
            hashes = np.array([h for row in new_rows for h in row.hashes], dtype=HASH_DTYPE)
            vectors = self._embed(texts, hashes)
            # A rebuild compacts right away: scoring the rows one by one first would be waste.
            self.apply(new_rows, removed, vectors, hashes, lexical=not report.rebuilt)
            report.embedded = len(new_rows)
            if report.rebuilt or should_compact(self.base_rows, len(self.docs) - self.base_rows):
                index_compaction.compact(self, report)
            index_files.save(self, report)
        report.pending = self.pending()
        report.backlog = len(self.backlog)
        self.last_refresh = time.monotonic()
        report.seconds = time.perf_counter() - started
        return report

    def _read(
        self, suspects: list[str], report: RefreshReport, deadline: float | None = None
    ) -> tuple[bool, list[NewRow]]:
        """Read the suspect files: mtime-only changes are recorded, real changes become rows."""
        touched = False
        new_rows: list[NewRow] = []
        self.backlog = []
        for position, rel in enumerate(suspects):
            if deadline is not None and position % 16 == 0 and time.monotonic() >= deadline:
                self.backlog = suspects[position:]
                break
            st = self.dir_state.files[rel]
            text, sha, size = self.read_text(rel, report)
            if text is None:
                continue
            row = self._rows.get(rel)
            if row is not None and self.docs[row].sha256 == sha:
                self.touch(row, st[2], size)
                touched = True  # touched, not changed: keep its vectors and terms
                continue
            (report.changed if row is not None else report.added).append(rel)
            doc = IndexedDoc(
                rel, st[2], size, sha, text.name, text.description, 1, text.type, text.applies_when
            )
            passages = text.passages()
            doc.passages = len(passages)
            terms = " ".join(self.analyzer.terms(text.for_lexical()))
            hashes = [passage_hash(p) for p in passages]
            new_rows.append(NewRow(doc, terms, passages, row, hashes))
        return touched, new_rows

    def read_text(
        self, rel: str, report: RefreshReport | None
    ) -> tuple[MemoryText | None, str, int]:
        try:
            return read_memory_text(
                self.memory_dir / rel, rel, real_root=self._real_root, applies=self.applies_when
            )
        except UnsafePathError as exc:  # swapped for a link out of the dir since listed
            problem = f"{rel}: {exc}"
        except OSError as exc:
            problem = f"{rel}: unreadable ({exc.strerror or exc})"
        if report is not None:
            report.problems.append(problem)
        return None, "", 0

    def touch(self, row: int, mtime: float, size: int) -> None:
        self.docs[row].mtime, self.docs[row].size = mtime, size
        self._mtimes[row] = mtime
        if row < self.base_rows:
            self.touched.add(row)

    def apply(
        self,
        new_rows: list[NewRow],
        removed: list[str],
        vectors: Vectors,
        hashes: npt.NDArray[np.bytes_],
        *,
        lexical: bool = True,
    ) -> None:
        """Mask replaced and removed rows; append the new ones with first-stage ``vectors``."""
        for rel in removed:
            self.forget(self._rows[rel])
        cursor = 0
        starts: list[int] = []
        for new in new_rows:
            if new.replaces is not None:
                self._kill(new.replaces)
            row = len(self.docs)
            self.docs.append(new.doc)
            self.terms.append(new.terms)
            if lexical:
                self.lexical.append(new.terms.split(" ") if new.terms else [])
            self._rows[new.doc.rel] = row
            starts.append(self.passages.n + cursor)
            cursor += new.doc.passages
            self.model.texts.update(zip(new.hashes, new.passages, strict=True))
        self._append_passages(vectors, hashes)
        if new_rows:
            self.starts = np.concatenate([self.starts, np.array(starts, dtype=np.int64)])
            self.live = np.concatenate([self.live, np.ones(len(new_rows), dtype=bool)])
            mtimes = np.array([n.doc.mtime for n in new_rows], dtype=np.float64)
            self._mtimes = np.concatenate([self._mtimes, mtimes])
        self._live_rows = None

    def _append_passages(self, vectors: Vectors, hashes: npt.NDArray[np.bytes_]) -> None:
        if self.fast is None:
            self.passages.append(vectors, hashes, have=np.ones(len(hashes), dtype=bool))
            return
        have, model = self.model_vectors.lookup(hashes)
        self.passages.append(vectors, hashes, model, have)

    def forget(self, row: int) -> None:
        """A memory's row is gone (removed, or dead in a saved overlay)."""
        self._rows.pop(self.docs[row].rel, None)
        self._kill(row)

    def _kill(self, row: int) -> None:
        self.live[row] = False
        self.lexical.kill(row)

    def _embed(self, texts: list[str], hashes: npt.NDArray[np.bytes_]) -> Vectors:
        """First-stage vectors, in length order (little padding), in chunks for progress."""
        out = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
        if self.fast is not None and not self.fast.ready():
            if self.prepare_fast:  # distilled in the background: these rows wait for the model
                self.fast.start()
            return out
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        done = 0
        for start in range(0, len(order), EMBED_CHUNK):
            chunk = order[start : start + EMBED_CHUNK]
            if self.fast is not None:
                out[chunk] = self.fast.embed([texts[i] for i in chunk])
            else:
                out[chunk] = self.model_vectors.embed([bytes(hashes[i]) for i in chunk],
                                                      [texts[i] for i in chunk])  # fmt: skip
            done += len(chunk)
            if self.progress is not None:
                self.progress(done, len(texts))
        return out

    # -- the model's vectors (:mod:`memdir.recall.model_stage`) ------------------------------
    def positions(self, rows: Iterable[int]) -> npt.NDArray[np.int64]:
        """Passage positions of ``rows``, in order."""
        # one vector operation, not an arange per row: every recall asks for all live rows
        picked = np.fromiter(rows, dtype=np.int64)
        counts = np.fromiter((self.docs[r].passages for r in picked), np.int64, len(picked))
        ends = np.cumsum(counts)
        if not len(picked) or not ends[-1]:
            return np.zeros(0, dtype=np.int64)
        shift = np.repeat(self.starts[picked] - (ends - counts), counts)
        out: npt.NDArray[np.int64] = np.arange(ends[-1], dtype=np.int64) + shift
        return out

    def live_hashes(self) -> npt.NDArray[np.bytes_]:
        return self.passages.hashes[self.positions(self.live_rows())]

    def pending(self) -> int:
        return self.model.pending()

    def fill(self, rows: Sequence[int] | None = None, *, deadline: float | None = None) -> int:
        return self.model.fill(rows, deadline=deadline)

    def save_model_vectors(self) -> list[str]:
        return self.model.save()

    # -- compaction (:mod:`memdir.recall.index_compaction`) --------------------------------
    def install_base(
        self,
        docs: list[IndexedDoc],
        vectors: Vectors | PassageRows,
        hashes: npt.NDArray[np.bytes_] | None,
        base: LexicalIndex,
        terms: list[str | None],
        lengths: list[int],
    ) -> None:
        self.docs = docs
        if isinstance(vectors, PassageRows):
            self.passages = vectors
        else:
            self.passages = PassageRows(self.embedder.dim)
            assert hashes is not None
            self._append_passages(np.ascontiguousarray(vectors, dtype=np.float32), hashes)
        self.starts = starts_of(docs)
        self.live = np.ones(len(docs), dtype=bool)
        self.base_rows = len(docs)
        self._rows = {d.rel: i for i, d in enumerate(docs)}
        self._mtimes = np.array([d.mtime for d in docs], dtype=np.float64)
        self.terms = terms
        self.touched = set()
        self.lexical = LiveLexical(base, lengths)
        self._live_rows = None

    # -- persistence ---------------------------------------------------------------------------
    def expected_header(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "embedder": self.embedder.name,
            "fast_stage": self.fast.name if self.fast is not None else None,
            "dim": self.embedder.dim,
            "analyzer": self.analyzer.to_json(),
            "bm25": [K1, B],
            "passage_words": PASSAGE_WORDS,
            "max_passages": MAX_PASSAGES,
            "applies_when": self.applies_when,
            "memory_dir": str(self.memory_dir),
        }

    def _load(self, report: RefreshReport) -> None:
        self._loaded = True
        if self.fast is not None:
            problem = self.model_vectors.load()
            if problem:
                report.problems.append(problem)
        index_files.load(self, report)


__all__ = [
    "PASSAGE_WORDS",
    "FastStage",
    "IndexedDoc",
    "MemoryText",
    "Progress",
    "RefreshReport",
    "SearchIndex",
    "read_memory_text",
]
