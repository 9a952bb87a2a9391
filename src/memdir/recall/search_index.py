"""The derived search index of a memory dir: embedding rows and BM25 terms for every memory.

Invariants:
- Memory files are the truth; this index is derived, lives in ``cache_dir`` (never inside the memory
  dir), and may be deleted at any time: the next refresh rebuilds it.
- A refresh costs what changed, not what exists: :class:`~memdir.recall.dirstate.DirState` finds
  changed files from directory mtimes; a file is re-read only when its (mtime, size) changed and
  re-embedded only when its content hash changed.
- Rows are append-only between compactions. A changed memory gets a new row at the end (its old
  row is masked dead), so a change never rebuilds the 100,000-row arrays; BM25 for the appended
  rows comes from :class:`~memdir.recall.live_lexical.LiveLexical`. When the appended rows pass a
  fraction of the base, the live rows are compacted into a new base.
- On disk a base generation is three files named after a random id (``vectors-<gen>.npy``,
  ``lexical-<gen>.npz``, ``terms-<gen>.json``) plus ``manifest.json`` naming it; the rows appended
  since are ``overlay-<gen>.npz``. Every file is written with :func:`atomic_write`, the manifest
  after its generation, so a crash leaves a whole previous state. A cache file that cannot be read
  or does not match is reported in :attr:`RefreshReport.problems` and rebuilt — never raised.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.atomic import atomic_write, ensure_dir, locked
from memdir.errors import LockHeldError, UnsafePathError
from memdir.model import MemoryHeader
from memdir.recall.dirstate import DirState, FileStat
from memdir.recall.embed import Embedder, Vectors
from memdir.recall.lexical import K1, B, LexicalIndex, TermAnalyzer
from memdir.recall.live_lexical import LiveLexical, should_compact
from memdir.recall.memory_text import PASSAGE_WORDS, MemoryText, read_memory_text

log = logging.getLogger(__name__)

# 4: type and applies_when per row; 5: only stored ones in BM25; 6: rules + stored as evidence
FORMAT_VERSION = 6
SAVE_LOCK_TIMEOUT = 10.0
EMBED_CHUNK = 256  # passages per embed call: the unit of progress reporting
_GENERATION_FILES = ("vectors", "lexical", "terms", "overlay")
MTIME_TOLERANCE = 1e-6  # seconds; header mtimes are floats and round-trip through JSON

Progress = Callable[[int, int], None]  # (passages embedded so far, passages to embed)


@dataclass(slots=True)
class IndexedDoc:
    """One memory as the index knows it (no body kept: texts live in the files)."""

    rel: str
    mtime: float
    size: int
    sha256: str
    name: str
    description: str
    passages: int = 1  # embedding rows this memory owns (long bodies are sliced)
    type: str = ""
    applies_when: tuple[str, ...] = ()

    def to_json(self) -> list[Any]:
        return [
            self.rel,
            self.mtime,
            self.size,
            self.sha256,
            self.name,
            self.description,
            self.passages,
            self.type,
            list(self.applies_when),
        ]

    @classmethod
    def from_json(cls, row: list[Any]) -> IndexedDoc:
        rel, mtime, size, sha, name, description, passages, mtype, situations = row
        return cls(
            str(rel),
            float(mtime),
            int(size),
            str(sha),
            str(name),
            str(description),
            int(passages),
            str(mtype),
            tuple(str(s) for s in situations),
        )


@dataclass
class RefreshReport:
    """What a refresh did: files (re)embedded, dropped, and any cache problem it recovered from."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    embedded: int = 0
    rebuilt: bool = False
    compacted: bool = False
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def modified(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.rebuilt)


@dataclass
class _NewRow:
    doc: IndexedDoc
    terms: str
    passages: list[str]
    replaces: int | None


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
    ) -> None:
        self.memory_dir = memory_dir
        self.applies_when = applies_when  # index applies_when situations (see memory_text)
        self._real_root = Path(os.path.realpath(memory_dir))
        self.cache_dir = cache_dir / "search" / _safe(embedder.name)
        self.embedder = embedder
        self.analyzer = analyzer or TermAnalyzer()
        self.dir_state = dir_state or DirState(memory_dir)
        self.progress: Progress | None = None
        self.docs: list[IndexedDoc] = []  # one per row, dead rows included
        self.live = np.zeros(0, dtype=bool)
        self.starts = np.zeros(0, dtype=np.int64)  # first passage row of each row
        self.lexical = LiveLexical(LexicalIndex(self.analyzer), [])
        self._vec: Vectors = np.zeros((0, embedder.dim), dtype=np.float32)
        self._nvec = 0
        self._base_rows = 0
        self._rows: dict[str, int] = {}  # live rows only
        self._mtimes = np.zeros(0, dtype=np.float64)
        self._terms: list[str | None] = []  # per row, space-joined; base rows load lazily
        self._generation: str | None = None
        self._loaded = False
        self._live_rows: npt.NDArray[np.int64] | None = None
        self._touched: set[int] = set()  # base rows whose mtime moved since the base was saved
        self.last_refresh = 0.0

    # -- queries -------------------------------------------------------------------------------
    @property
    def vectors(self) -> Vectors:
        """One row per passage (dead rows' passages included until the next compaction)."""
        return self._vec[: self._nvec]

    def row_of(self, rel: str) -> int | None:
        return self._rows.get(rel)

    def live_docs(self) -> list[IndexedDoc]:
        return [self.docs[int(i)] for i in self.live_rows()]

    def live_rows(self) -> npt.NDArray[np.int64]:
        if self._live_rows is None:
            self._live_rows = np.flatnonzero(self.live).astype(np.int64)
        return self._live_rows

    def semantic_scores(self, query_vector: Vectors) -> Vectors:
        """Cosine similarity of every row to the query: the best of its passages."""
        if not self.docs:
            return np.zeros(0, dtype=np.float32)
        per_passage = self.vectors @ query_vector
        best: Vectors = np.maximum.reduceat(per_passage, self.starts).astype(np.float32)
        return best

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
    def refresh(self) -> RefreshReport:
        """Bring the index in step with the memory dir (read and embed only what changed)."""
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
                if (row := self._rows.get(rel)) is None or not _same(self.docs[row], st)
            )
            removed = sorted(set(self._rows) - set(files))
        else:
            suspects = sorted(
                rel
                for rel in delta.changed
                if (row := self._rows.get(rel)) is None or not _same(self.docs[row], files[rel])
            )
            removed = sorted(rel for rel in delta.removed if rel in self._rows)
        touched, new_rows = self._read(suspects, report)
        report.removed = removed
        if new_rows or removed or touched or report.rebuilt:
            vectors = self._embed([p for row in new_rows for p in row.passages])
            # A rebuild compacts right away: scoring the rows one by one first would be waste.
            self._apply(new_rows, removed, vectors, lexical=not report.rebuilt)
            report.embedded = len(new_rows)
            if report.rebuilt or should_compact(self._base_rows, len(self.docs) - self._base_rows):
                self._compact(report)
            self._save(report)
        self.last_refresh = time.monotonic()
        report.seconds = time.perf_counter() - started
        return report

    def _read(self, suspects: list[str], report: RefreshReport) -> tuple[bool, list[_NewRow]]:
        """Read the suspect files: mtime-only changes are recorded, real changes become rows."""
        touched = False
        new_rows: list[_NewRow] = []
        for rel in suspects:
            st = self.dir_state.files[rel]
            try:
                text, sha, size = read_memory_text(
                    self.memory_dir / rel, rel, real_root=self._real_root, applies=self.applies_when
                )
            except UnsafePathError as exc:  # swapped for a link out of the dir since listed
                report.problems.append(f"{rel}: {exc}")
                continue
            except OSError as exc:
                report.problems.append(f"{rel}: unreadable ({exc.strerror or exc})")
                continue
            row = self._rows.get(rel)
            if row is not None and self.docs[row].sha256 == sha:
                self._touch(row, st[2], size)
                touched = True  # touched, not changed: keep its vectors and terms
                continue
            (report.changed if row is not None else report.added).append(rel)
            doc = IndexedDoc(
                rel, st[2], size, sha, text.name, text.description, 1, text.type, text.applies_when
            )
            passages = text.passages()
            doc.passages = len(passages)
            terms = " ".join(self.analyzer.terms(text.for_lexical()))
            new_rows.append(_NewRow(doc, terms, passages, row))
        return touched, new_rows

    def _touch(self, row: int, mtime: float, size: int) -> None:
        self.docs[row].mtime, self.docs[row].size = mtime, size
        self._mtimes[row] = mtime
        if row < self._base_rows:
            self._touched.add(row)

    def _apply(
        self,
        new_rows: list[_NewRow],
        removed: list[str],
        vectors: Vectors,
        *,
        lexical: bool = True,
    ) -> None:
        """Mask replaced and removed rows; append the new ones with their ``vectors``."""
        for rel in removed:
            self._kill(self._rows.pop(rel))
        cursor = 0
        starts: list[int] = []
        for new in new_rows:
            if new.replaces is not None:
                self._kill(new.replaces)
            row = len(self.docs)
            self.docs.append(new.doc)
            self._terms.append(new.terms)
            if lexical:
                self.lexical.append(new.terms.split(" ") if new.terms else [])
            self._rows[new.doc.rel] = row
            starts.append(self._nvec + cursor)
            cursor += new.doc.passages
        self._append_vectors(vectors)
        if new_rows:
            self.starts = np.concatenate([self.starts, np.array(starts, dtype=np.int64)])
            self.live = np.concatenate([self.live, np.ones(len(new_rows), dtype=bool)])
            mtimes = np.array([n.doc.mtime for n in new_rows], dtype=np.float64)
            self._mtimes = np.concatenate([self._mtimes, mtimes])
        self._live_rows = None

    def _kill(self, row: int) -> None:
        self.live[row] = False
        self.lexical.kill(row)

    def _embed(self, texts: list[str]) -> Vectors:
        """Embed in length order (little padding), in chunks so progress can be shown."""
        dim = self.embedder.dim
        out = np.zeros((len(texts), dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        done = 0
        for start in range(0, len(order), EMBED_CHUNK):
            chunk = order[start : start + EMBED_CHUNK]
            out[chunk] = self.embedder.embed([texts[i] for i in chunk])
            done += len(chunk)
            if self.progress is not None:
                self.progress(done, len(texts))
        return out

    def _append_vectors(self, vectors: Vectors) -> None:
        need = self._nvec + len(vectors)
        if need > len(self._vec):  # grow geometrically: appends stay amortised O(new rows)
            grown = np.zeros((max(need, 2 * len(self._vec), 16), self.embedder.dim), np.float32)
            grown[: self._nvec] = self._vec[: self._nvec]
            self._vec = grown
        self._vec[self._nvec : need] = vectors
        self._nvec = need

    def _compact(self, report: RefreshReport) -> None:
        """Fold every live row into a new base (sorted by path) and rebuild BM25 once."""
        terms = self._all_terms(report)
        keep = sorted(self.live_rows().tolist(), key=lambda r: self.docs[r].rel)
        docs = [self.docs[r] for r in keep]
        pieces = [self._vec[self.starts[r] : self.starts[r] + self.docs[r].passages] for r in keep]
        dim = self.embedder.dim
        vectors = np.vstack(pieces) if pieces else np.zeros((0, dim), dtype=np.float32)
        kept_terms = [terms[r] for r in keep]
        base = LexicalIndex(self.analyzer).build_from_terms(
            [t.split(" ") if t else [] for t in kept_terms]
        )
        lengths = [len(t.split(" ")) if t else 1 for t in kept_terms]
        self._install_base(docs, vectors, base, list(kept_terms), lengths)
        report.compacted = True

    def _all_terms(self, report: RefreshReport) -> list[str]:
        """Terms of every row; base rows come from the saved terms file or are re-analysed."""
        if any(t is None for t in self._terms):
            saved = self._saved_terms(report)
            for row, value in enumerate(saved or []):
                if self._terms[row] is None:
                    self._terms[row] = value
            for row in np.flatnonzero(self.live).tolist():
                if self._terms[row] is None:  # no saved terms: analyse the file again
                    try:
                        path = self.memory_dir / self.docs[row].rel
                        text = read_memory_text(
                            path, "", real_root=self._real_root, applies=self.applies_when
                        )[0]
                        self._terms[row] = " ".join(self.analyzer.terms(text.for_lexical()))
                    except (OSError, UnsafePathError):
                        self._terms[row] = ""
        return [t or "" for t in self._terms]

    def _install_base(
        self,
        docs: list[IndexedDoc],
        vectors: Vectors,
        base: LexicalIndex,
        terms: list[str | None],
        lengths: list[int],
    ) -> None:
        self.docs = docs
        self._vec = np.ascontiguousarray(vectors, dtype=np.float32)
        self._nvec = len(vectors)
        self.starts = _starts(docs)
        self.live = np.ones(len(docs), dtype=bool)
        self._base_rows = len(docs)
        self._rows = {d.rel: i for i, d in enumerate(docs)}
        self._mtimes = np.array([d.mtime for d in docs], dtype=np.float64)
        self._terms = terms
        self._touched = set()
        self.lexical = LiveLexical(base, lengths)
        self._live_rows = None

    # -- persistence ---------------------------------------------------------------------------
    def _manifest_path(self) -> Path:
        return self.cache_dir / "manifest.json"

    def _expected_header(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "embedder": self.embedder.name,
            "dim": self.embedder.dim,
            "analyzer": self.analyzer.to_json(),
            "bm25": [K1, B],
            "passage_words": PASSAGE_WORDS,
            "applies_when": self.applies_when,
            "memory_dir": str(self.memory_dir),
        }

    def _load(self, report: RefreshReport) -> None:
        """Load the saved base and overlay; on any mismatch or damage, note it and start empty."""
        self._loaded = True
        path = self._manifest_path()
        if not path.exists():
            report.rebuilt = True
            return
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
            if manifest["header"] != self._expected_header():
                report.rebuilt = True
                report.problems.append("search index built with other settings; rebuilding")
                return
            generation = str(manifest["generation"])
            docs = [IndexedDoc.from_json(row) for row in manifest["docs"]]
            vectors = np.load(self.cache_dir / f"vectors-{generation}.npy", allow_pickle=False)
            lexical = LexicalIndex.load(self.cache_dir / f"lexical-{generation}.npz", self.analyzer)
            rows = sum(d.passages for d in docs)
            if vectors.shape != (rows, self.embedder.dim) or lexical is None:
                raise ValueError("generation files do not match the manifest")
            if lexical.size != len(docs):
                raise ValueError("lexical index size does not match the manifest")
            lengths = manifest.get("lengths")
            if not isinstance(lengths, list) or len(lengths) != len(docs):
                raise ValueError("document lengths do not match the manifest")
        except Exception as exc:  # any damage to a derived cache means "rebuild", never a crash
            problem = f"search index cache at {self.cache_dir} was unreadable ({exc}); rebuilding"
            log.warning("%s", problem)
            report.problems.append(problem)
            report.rebuilt = True
            return
        self._install_base(docs, vectors, lexical, [None] * len(docs), [int(n) for n in lengths])
        self._generation = generation
        self._load_overlay(report)

    def _load_overlay(self, report: RefreshReport) -> None:
        """Re-append the rows saved since the base; a bad overlay only costs re-reading files."""
        path = self.cache_dir / f"overlay-{self._generation}.npz"
        if not path.exists():
            return
        try:
            with np.load(path, allow_pickle=False) as npz:
                meta = json.loads(npz["meta"].tobytes().decode("utf-8"))
                vectors = np.asarray(npz["vectors"], dtype=np.float32)
            docs = [IndexedDoc.from_json(row) for row in meta["docs"]]
            terms = [str(t) for t in meta["terms"]]
            if len(terms) != len(docs) or len(vectors) != sum(d.passages for d in docs):
                raise ValueError("overlay rows do not match")
            if vectors.ndim != 2 or (len(vectors) and vectors.shape[1] != self.embedder.dim):
                raise ValueError("overlay vectors have the wrong shape")
            dead = [self._rows[rel] for rel in meta["dead"] if rel in self._rows]
            touched = {str(k): v for k, v in meta["touched"].items()}
        except Exception as exc:  # the base is whole; files changed since will be re-read
            report.problems.append(f"search index overlay unreadable ({exc}); re-reading changes")
            return
        for dead_row in dead:
            self._rows.pop(self.docs[dead_row].rel, None)
            self._kill(dead_row)
        for rel, (mtime, size) in touched.items():
            if (row := self._rows.get(rel)) is not None:
                self._touch(row, float(mtime), int(size))
        new_rows = [
            _NewRow(doc, term, [], self._rows.get(doc.rel))
            for doc, term in zip(docs, terms, strict=True)
        ]
        self._apply(new_rows, [], vectors)

    def _saved_terms(self, report: RefreshReport) -> list[str] | None:
        if self._generation is None:
            return None
        path = self.cache_dir / f"terms-{self._generation}.json"
        try:
            terms = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(terms, list) or len(terms) != self._base_rows:
                raise ValueError("term lists do not match the manifest")
        except (OSError, ValueError) as exc:
            report.problems.append(f"search index terms unreadable ({exc}); re-analysing")
            return None
        return [str(t) for t in terms]

    def _save(self, report: RefreshReport) -> None:
        try:
            ensure_dir(self.cache_dir)
            # Two processes refreshing one cache must not delete each other's generation files.
            with locked(self.cache_dir / "index.lock", timeout=SAVE_LOCK_TIMEOUT):
                if report.compacted or self._generation is None:
                    generation = self._write_generation()
                    self._remove_stale_generations(generation)
                    self._generation = generation
                else:
                    self._write_overlay(self._generation)
        except (OSError, LockHeldError) as exc:
            # The in-memory index is complete; only the next process pays for a rebuild.
            report.problems.append(f"search index not saved ({exc})")

    def _write_generation(self) -> str:
        generation = secrets.token_hex(6)
        buffer = io.BytesIO()
        np.save(buffer, self.vectors, allow_pickle=False)
        atomic_write(self.cache_dir / f"vectors-{generation}.npy", buffer.getvalue())
        self.lexical.base.save(self.cache_dir / f"lexical-{generation}.npz")
        terms = [t or "" for t in self._terms]
        atomic_write(self.cache_dir / f"terms-{generation}.json", json.dumps(terms))
        manifest = {
            "header": self._expected_header(),
            "generation": generation,
            "docs": [d.to_json() for d in self.docs],
            "lengths": [len(t.split(" ")) if t else 1 for t in terms],
        }
        atomic_write(self._manifest_path(), json.dumps(manifest))
        return generation

    def _write_overlay(self, generation: str) -> None:
        base, rows = self._base_rows, range(self._base_rows, len(self.docs))
        live = [r for r in rows if self.live[r]]
        meta = {
            "docs": [self.docs[r].to_json() for r in live],
            "terms": [self._terms[r] or "" for r in live],
            "dead": [self.docs[r].rel for r in range(base) if not self.live[r]],
            "touched": {
                self.docs[r].rel: [self.docs[r].mtime, self.docs[r].size]
                for r in sorted(self._touched)
                if self.live[r]
            },
        }
        pieces = [self._vec[self.starts[r] : self.starts[r] + self.docs[r].passages] for r in live]
        vectors = np.vstack(pieces) if pieces else np.zeros((0, self.embedder.dim), np.float32)
        buffer = io.BytesIO()
        np.savez(buffer, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8), vectors=vectors)
        atomic_write(self.cache_dir / f"overlay-{generation}.npz", buffer.getvalue())

    def _remove_stale_generations(self, keep: str) -> None:
        for entry in os.scandir(self.cache_dir):
            stem = entry.name.split(".", 1)[0]
            if stem.split("-", 1)[0] in _GENERATION_FILES and not stem.endswith(keep):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        with contextlib.suppress(OSError):  # the new base holds every row: no overlay yet
            os.unlink(self.cache_dir / f"overlay-{keep}.npz")


def _starts(docs: list[IndexedDoc]) -> npt.NDArray[np.int64]:
    counts = np.fromiter((d.passages for d in docs), dtype=np.int64, count=len(docs))
    return np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if len(docs) else counts


def _same(doc: IndexedDoc, st: FileStat) -> bool:
    return abs(doc.mtime - st[2]) <= MTIME_TOLERANCE and doc.size == st[1]


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


__all__ = [
    "PASSAGE_WORDS",
    "IndexedDoc",
    "MemoryText",
    "Progress",
    "RefreshReport",
    "SearchIndex",
    "read_memory_text",
]
