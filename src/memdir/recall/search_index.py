"""The derived search index of a memory dir: one embedding row and one BM25 document per memory.

Invariants:
- Memory files are the truth; this index is derived, lives in ``cache_dir`` (never inside the memory
  dir), and may be deleted at any time: the next refresh rebuilds it.
- A file is identified by its relative path; it is re-read only when its (mtime, size) changed and
  re-embedded only when its content hash changed, so an edit to one memory embeds one text.
- On disk a generation is three files named after a random generation id (``vectors-<gen>.npy``,
  ``lexical-<gen>.npz``, ``terms-<gen>.json``) plus ``manifest.json`` naming that id; every file is
  written with :func:`atomic_write` and the manifest last, so a crash leaves the previous
  generation whole. A manifest or generation file that cannot be read or does not match is
  reported in :attr:`RefreshReport.problems` and the index is rebuilt — a bad cache never raises.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.atomic import atomic_write, content_hash, ensure_dir, locked
from memdir.errors import FrontmatterError, LockHeldError
from memdir.frontmatter import parse
from memdir.model import MemoryHeader
from memdir.recall.embed import Embedder, Vectors
from memdir.recall.lexical import K1, B, LexicalIndex, TermAnalyzer
from memdir.scan import iter_memory_files

log = logging.getLogger(__name__)

FORMAT_VERSION = 2
# ≈ 200 word pieces: one slice plus the memory's title fits MiniLM's 256-piece window.
PASSAGE_WORDS = 150
SAVE_LOCK_TIMEOUT = 10.0
_GENERATION_FILES = ("vectors", "lexical", "terms")
MTIME_TOLERANCE = 1e-6  # seconds; header mtimes are floats and round-trip through JSON


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

    def to_json(self) -> list[Any]:
        return [
            self.rel,
            self.mtime,
            self.size,
            self.sha256,
            self.name,
            self.description,
            self.passages,
        ]

    @classmethod
    def from_json(cls, row: list[Any]) -> IndexedDoc:
        rel, mtime, size, sha, name, description, passages = row
        return cls(
            str(rel), float(mtime), int(size), str(sha), str(name), str(description), int(passages)
        )


@dataclass
class RefreshReport:
    """What a refresh did: files (re)embedded, dropped, and any cache problem it recovered from."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    embedded: int = 0
    rebuilt: bool = False
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def modified(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.rebuilt)


@dataclass(frozen=True, slots=True)
class MemoryText:
    """The parts of a memory file recall searches over."""

    name: str
    description: str
    body: str

    def passages(self, words: int = PASSAGE_WORDS) -> list[str]:
        """Embedding inputs: the title and description, with each ``words``-word body slice.

        MiniLM reads at most 256 word pieces, so a long memory embedded whole would be judged by
        its opening alone; slicing lets its best passage speak for it (a memory's semantic score
        is the maximum over its passages).
        """
        head = ". ".join(p for p in (self.name, self.description) if p)
        body_words = self.body.split()
        if len(body_words) <= words:
            return [f"{head}\n{self.body}".strip()]
        return [
            f"{head}\n{' '.join(body_words[i : i + words])}".strip()
            for i in range(0, len(body_words), words)
        ]

    def for_lexical(self) -> str:
        return f"{self.name}\n{self.description}\n{self.body}"


def read_memory_text(path: Path, rel: str) -> tuple[MemoryText, str, int]:
    """(text parts, content hash, size) of a memory file; bad frontmatter is searched as body."""
    raw = path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    try:
        parsed = parse(text, source=rel)
        meta, body = parsed.meta, parsed.body
    except FrontmatterError:
        meta, body = {}, text
    name = meta.get("name")
    description = meta.get("description")
    return (
        MemoryText(
            name=str(name) if name is not None else Path(rel).stem,
            description=str(description) if description is not None else "",
            body=body,
        ),
        content_hash(raw),
        len(raw),
    )


class SearchIndex:
    """Embeddings + BM25 over every memory file in ``memory_dir``, cached in ``cache_dir``."""

    def __init__(
        self,
        memory_dir: Path,
        cache_dir: Path,
        embedder: Embedder,
        analyzer: TermAnalyzer | None = None,
    ) -> None:
        self.memory_dir = memory_dir
        self.cache_dir = cache_dir / "search" / _safe(embedder.name)
        self.embedder = embedder
        self.analyzer = analyzer or TermAnalyzer()
        self.docs: list[IndexedDoc] = []
        self.vectors: Vectors = np.zeros((0, embedder.dim), dtype=np.float32)  # one row a passage
        self.starts = np.zeros(0, dtype=np.int64)  # first passage row of each doc
        self.lexical = LexicalIndex(self.analyzer)
        self._rows: dict[str, int] = {}
        self._mtimes = np.zeros(0, dtype=np.float64)
        self._generation: str | None = None
        self._terms: list[str] | None = None  # per doc, space-joined; loaded only when needed
        self._loaded = False
        self.last_refresh = 0.0

    # -- queries -------------------------------------------------------------------------------
    def row_of(self, rel: str) -> int | None:
        return self._rows.get(rel)

    def semantic_scores(self, query_vector: Vectors) -> Vectors:
        """Cosine similarity of every doc to the query: the best of its passages."""
        if not self.docs:
            return np.zeros(0, dtype=np.float32)
        per_passage = self.vectors @ query_vector
        best: Vectors = np.maximum.reduceat(per_passage, self.starts).astype(np.float32)
        return best

    def resolve(
        self, headers: Sequence[MemoryHeader]
    ) -> tuple[list[MemoryHeader], npt.NDArray[np.int64]]:
        """(headers not indexed at their mtime, rows of the indexed ones), in one O(N) pass.

        Vectorised because callers pass every header on every query (100,000 at the top of the
        scale benchmark), so no per-header Python branching on the common path.
        """
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
        """Bring the index in step with the memory dir (stat every file, read only changed ones)."""
        started = time.perf_counter()
        report = RefreshReport()
        if not self._loaded:
            self._load(report)
        listing: list[tuple[str, os.DirEntry[str], os.stat_result]] = []
        for rel, entry in iter_memory_files(self.memory_dir):
            try:
                listing.append((rel, entry, entry.stat()))
            except OSError:
                continue
        listing.sort(key=lambda item: item[0])
        if not report.rebuilt and self._unchanged(listing):
            self.last_refresh = time.monotonic()
            report.seconds = time.perf_counter() - started
            return report
        terms = None if report.rebuilt else self._current_terms(report)
        old_docs = {d.rel: (i, d) for i, d in enumerate(self.docs)} if terms is not None else {}
        report.rebuilt = report.rebuilt or terms is None
        docs: list[IndexedDoc] = []
        doc_terms: list[str] = []
        keep_rows: list[int] = []
        new_passages: list[list[str]] = []
        for rel, entry, stat in listing:
            previous = old_docs.get(rel)
            if previous is not None and terms is not None and _same_stat(previous[1], stat):
                docs.append(previous[1])
                doc_terms.append(terms[previous[0]])
                keep_rows.append(previous[0])
                continue
            try:
                text, sha, size = read_memory_text(Path(entry.path), rel)
            except OSError as exc:
                report.problems.append(f"{rel}: unreadable ({exc.strerror or exc})")
                continue
            doc = IndexedDoc(rel, stat.st_mtime, size, sha, text.name, text.description)
            docs.append(doc)
            doc_terms.append(" ".join(self.analyzer.terms(text.for_lexical())))
            if previous is not None and previous[1].sha256 == sha:
                doc.passages = previous[1].passages
                keep_rows.append(previous[0])  # touched, not changed: keep its vectors
                continue
            (report.changed if previous is not None else report.added).append(rel)
            keep_rows.append(-1)
            new_passages.append(text.passages())
            doc.passages = len(new_passages[-1])
        live = {d.rel for d in docs}
        report.removed = sorted(rel for rel in old_docs if rel not in live)
        self._install(docs, doc_terms, keep_rows, new_passages)
        report.embedded = len(new_passages)
        self._save(report)
        self.last_refresh = time.monotonic()
        report.seconds = time.perf_counter() - started
        return report

    def _unchanged(self, listing: list[tuple[str, os.DirEntry[str], os.stat_result]]) -> bool:
        if len(listing) != len(self.docs):
            return False
        return all(
            rel == doc.rel and _same_stat(doc, stat)
            for (rel, _, stat), doc in zip(listing, self.docs, strict=True)
        )

    def _install(
        self,
        docs: list[IndexedDoc],
        doc_terms: list[str],
        keep_rows: list[int],
        new_passages: list[list[str]],
    ) -> None:
        """Swap in the new doc list: kept docs reuse their vectors, new ones are embedded."""
        flat = [p for passages in new_passages for p in passages]
        embedded = self.embedder.embed(flat) if flat else self.vectors[:0]
        pieces: list[Vectors] = []
        cursor = 0
        for doc, row in zip(docs, keep_rows, strict=True):
            if row >= 0:
                start = int(self.starts[row])
                pieces.append(self.vectors[start : start + doc.passages])
            else:
                pieces.append(embedded[cursor : cursor + doc.passages])
                cursor += doc.passages
        dim = self.embedder.dim
        self.vectors = np.vstack(pieces) if pieces else np.zeros((0, dim), dtype=np.float32)
        self.docs = docs
        self.starts = _starts(docs)
        self._rows = {d.rel: i for i, d in enumerate(docs)}
        self._mtimes = np.array([d.mtime for d in docs], dtype=np.float64)
        self._terms = doc_terms
        self.lexical = LexicalIndex(self.analyzer).build_from_terms(
            [t.split(" ") if t else [] for t in doc_terms]
        )

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
            "memory_dir": str(self.memory_dir),
        }

    def _load(self, report: RefreshReport) -> None:
        """Load the saved generation; on any mismatch or damage, note it and start empty."""
        self._loaded = True
        path = self._manifest_path()
        if not path.exists():
            report.rebuilt = True
            return
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
            header = manifest["header"]
            if header != self._expected_header():
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
        except Exception as exc:  # any damage to a derived cache means "rebuild", never a crash
            problem = f"search index cache at {self.cache_dir} was unreadable ({exc}); rebuilding"
            log.warning("%s", problem)
            report.problems.append(problem)
            report.rebuilt = True
            return
        self.docs = docs
        self.vectors = vectors.astype(np.float32, copy=False)
        self.starts = _starts(docs)
        self.lexical = lexical
        self._rows = {d.rel: i for i, d in enumerate(docs)}
        self._mtimes = np.array([d.mtime for d in docs], dtype=np.float64)
        self._generation = generation

    def _current_terms(self, report: RefreshReport) -> list[str] | None:
        """Per-doc analysed terms, so a change re-analyses only changed files; None = unknown."""
        if self._terms is not None:
            return self._terms
        if self._generation is None:
            return None if self.docs else []
        path = self.cache_dir / f"terms-{self._generation}.json"
        try:
            terms = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(terms, list) or len(terms) != len(self.docs):
                raise ValueError("term lists do not match the manifest")
        except (OSError, ValueError) as exc:
            report.problems.append(f"search index terms unreadable ({exc}); rebuilding")
            return None
        self._terms = [str(t) for t in terms]
        return self._terms

    def _save(self, report: RefreshReport) -> None:
        try:
            ensure_dir(self.cache_dir)
            # Two processes refreshing one cache must not delete each other's generation files.
            with locked(self.cache_dir / "index.lock", timeout=SAVE_LOCK_TIMEOUT):
                generation = self._write_generation()
                self._remove_stale_generations(generation)
        except (OSError, LockHeldError) as exc:
            # The in-memory index is complete; only the next process pays for a rebuild.
            report.problems.append(f"search index not saved ({exc})")
            return
        self._generation = generation

    def _write_generation(self) -> str:
        generation = secrets.token_hex(6)
        buffer = io.BytesIO()
        np.save(buffer, self.vectors, allow_pickle=False)
        atomic_write(self.cache_dir / f"vectors-{generation}.npy", buffer.getvalue())
        self.lexical.save(self.cache_dir / f"lexical-{generation}.npz")
        atomic_write(self.cache_dir / f"terms-{generation}.json", json.dumps(self._terms or []))
        manifest = {
            "header": self._expected_header(),
            "generation": generation,
            "docs": [d.to_json() for d in self.docs],
        }
        atomic_write(self._manifest_path(), json.dumps(manifest))
        return generation

    def _remove_stale_generations(self, keep: str) -> None:
        for entry in os.scandir(self.cache_dir):
            stem = entry.name.split(".", 1)[0]
            if stem.split("-", 1)[0] in _GENERATION_FILES and not stem.endswith(keep):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _starts(docs: list[IndexedDoc]) -> npt.NDArray[np.int64]:
    counts = np.fromiter((d.passages for d in docs), dtype=np.int64, count=len(docs))
    return np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if len(docs) else counts


def _same_stat(doc: IndexedDoc, stat: os.stat_result) -> bool:
    return abs(doc.mtime - stat.st_mtime) <= MTIME_TOLERANCE and doc.size == stat.st_size


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


__all__ = ["IndexedDoc", "MemoryText", "RefreshReport", "SearchIndex", "read_memory_text"]
