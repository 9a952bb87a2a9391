"""The search index on disk: base generations, the overlay, and the model vectors.

A base generation is four files named after a random id (``vectors-<gen>.npy`` with the first
stage's vectors, ``hashes-<gen>.npy`` naming each passage's text, ``lexical-<gen>.npz``,
``terms-<gen>.json``) plus ``manifest.json`` naming it; the rows appended since are
``overlay-<gen>.npz``; the model's vectors are ``model-vectors.npz``, keyed by passage text, so
they outlive generations. Every file is written with :func:`atomic_write`, the manifest after its
generation, so a crash leaves a whole previous state. A cache file that cannot be read or does not
match is reported in :attr:`RefreshReport.problems` and rebuilt — never raised.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memdir.atomic import atomic_write, ensure_dir, locked
from memdir.errors import LockHeldError
from memdir.recall.embed import Embedder, Vectors
from memdir.recall.index_rows import IndexedDoc, NewRow, RefreshReport
from memdir.recall.lexical import LexicalIndex, TermAnalyzer
from memdir.recall.live_lexical import LiveLexical
from memdir.recall.model_vectors import HASH_DTYPE, ModelVectors
from memdir.recall.passage_rows import PassageRows

log = logging.getLogger(__name__)

SAVE_LOCK_TIMEOUT = 10.0
GENERATION_FILES = ("vectors", "hashes", "lexical", "terms", "overlay")


class SearchIndex(Protocol):
    """What is saved and loaded of a :class:`memdir.recall.search_index.SearchIndex`."""

    cache_dir: Path
    embedder: Embedder
    analyzer: TermAnalyzer
    generation: str | None
    base_rows: int
    docs: list[IndexedDoc]
    live: npt.NDArray[np.bool_]
    terms: list[str | None]
    touched: set[int]
    passages: PassageRows
    lexical: LiveLexical
    model_vectors: ModelVectors

    @property
    def has_fast_stage(self) -> bool: ...

    def expected_header(self) -> dict[str, Any]: ...

    def install_base(
        self,
        docs: list[IndexedDoc],
        vectors: Vectors | PassageRows,
        hashes: npt.NDArray[np.bytes_] | None,
        base: LexicalIndex,
        terms: list[str | None],
        lengths: list[int],
    ) -> None: ...

    def row_of(self, rel: str) -> int | None: ...

    def forget(self, row: int) -> None: ...

    def touch(self, row: int, mtime: float, size: int) -> None: ...

    def apply(
        self,
        new_rows: list[NewRow],
        removed: list[str],
        vectors: Vectors,
        hashes: npt.NDArray[np.bytes_],
        *,
        lexical: bool = True,
    ) -> None: ...

    def positions(self, rows: Iterable[int]) -> npt.NDArray[np.int64]: ...

    def live_hashes(self) -> npt.NDArray[np.bytes_]: ...


def manifest_path(index: SearchIndex) -> Path:
    return index.cache_dir / "manifest.json"


def load(index: SearchIndex, report: RefreshReport) -> None:
    """Load the saved base and overlay; on any mismatch or damage, note it and start empty."""
    path = manifest_path(index)
    if not path.exists():
        report.rebuilt = True
        return
    dim = index.embedder.dim
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if manifest["header"] != index.expected_header():
            report.rebuilt = True
            report.problems.append("search index built with other settings; rebuilding")
            return
        generation = str(manifest["generation"])
        docs = [IndexedDoc.from_json(row) for row in manifest["docs"]]
        vectors = np.load(index.cache_dir / f"vectors-{generation}.npy", allow_pickle=False)
        hashes = np.load(index.cache_dir / f"hashes-{generation}.npy", allow_pickle=False)
        lexical = LexicalIndex.load(index.cache_dir / f"lexical-{generation}.npz", index.analyzer)
        rows = sum(d.passages for d in docs)
        if vectors.shape != (rows, dim) or hashes.shape != (rows,) or lexical is None:
            raise ValueError("generation files do not match the manifest")
        if lexical.size != len(docs):
            raise ValueError("lexical index size does not match the manifest")
        lengths = manifest.get("lengths")
        if not isinstance(lengths, list) or len(lengths) != len(docs):
            raise ValueError("document lengths do not match the manifest")
    except Exception as exc:  # any damage to a derived cache means "rebuild", never a crash
        problem = f"search index cache at {index.cache_dir} was unreadable ({exc}); rebuilding"
        log.warning("%s", problem)
        report.problems.append(problem)
        report.rebuilt = True
        return
    lengths_ = [int(n) for n in lengths]
    index.install_base(docs, vectors, hashes.astype(HASH_DTYPE), lexical, [None] * len(docs),
                       lengths_)  # fmt: skip
    index.generation = generation
    _load_overlay(index, report)


def _load_overlay(index: SearchIndex, report: RefreshReport) -> None:
    """Re-append the rows saved since the base; a bad overlay only costs re-reading files."""
    path = index.cache_dir / f"overlay-{index.generation}.npz"
    if not path.exists():
        return
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(npz["meta"].tobytes().decode("utf-8"))
            vectors = np.asarray(npz["vectors"], dtype=np.float32)
            hashes = np.asarray(npz["hashes"]).astype(HASH_DTYPE)
        docs = [IndexedDoc.from_json(row) for row in meta["docs"]]
        terms = [str(t) for t in meta["terms"]]
        passages = sum(d.passages for d in docs)
        if len(terms) != len(docs) or len(vectors) != passages or len(hashes) != passages:
            raise ValueError("overlay rows do not match")
        if vectors.ndim != 2 or (len(vectors) and vectors.shape[1] != index.embedder.dim):
            raise ValueError("overlay vectors have the wrong shape")
        dead = [index.row_of(rel) for rel in meta["dead"]]
        touched = {str(k): v for k, v in meta["touched"].items()}
    except Exception as exc:  # the base is whole; files changed since will be re-read
        report.problems.append(f"search index overlay unreadable ({exc}); re-reading changes")
        return
    for dead_row in dead:
        if dead_row is not None:
            index.forget(dead_row)
    for rel, (mtime, size) in touched.items():
        if (row := index.row_of(rel)) is not None:
            index.touch(row, float(mtime), int(size))
    new_rows = [
        NewRow(doc, term, [], index.row_of(doc.rel)) for doc, term in zip(docs, terms, strict=True)
    ]
    index.apply(new_rows, [], vectors, hashes)


def saved_terms(index: SearchIndex, report: RefreshReport) -> list[str] | None:
    if index.generation is None:
        return None
    path = index.cache_dir / f"terms-{index.generation}.json"
    try:
        terms = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(terms, list) or len(terms) != index.base_rows:
            raise ValueError("term lists do not match the manifest")
    except (OSError, ValueError) as exc:
        report.problems.append(f"search index terms unreadable ({exc}); re-analysing")
        return None
    return [str(t) for t in terms]


def save(index: SearchIndex, report: RefreshReport, *, rows: bool = True) -> None:
    """Write what changed: a new generation (after a compaction) or the overlay, and the model
    vectors when new ones were computed. ``rows=False`` writes only the model vectors."""
    try:
        ensure_dir(index.cache_dir)
        # Two processes refreshing one cache must not delete each other's generation files.
        with locked(index.cache_dir / "index.lock", timeout=SAVE_LOCK_TIMEOUT):
            if rows and (report.compacted or index.generation is None):
                generation = _write_generation(index)
                _remove_stale_generations(index.cache_dir, generation)
                index.generation = generation
            elif rows:
                _write_overlay(index, index.generation)
            if index.has_fast_stage and index.model_vectors.dirty:
                index.model_vectors.save(index.live_hashes())
    except (OSError, LockHeldError) as exc:
        # The in-memory index is complete; only the next process pays for a rebuild.
        report.problems.append(f"search index not saved ({exc})")


def _write_generation(index: SearchIndex) -> str:
    generation = secrets.token_hex(6)
    for stem, array in (("vectors", index.passages.fast), ("hashes", index.passages.hashes)):
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        atomic_write(index.cache_dir / f"{stem}-{generation}.npy", buffer.getvalue())
    index.lexical.base.save(index.cache_dir / f"lexical-{generation}.npz")
    terms = [t or "" for t in index.terms]
    atomic_write(index.cache_dir / f"terms-{generation}.json", json.dumps(terms))
    manifest = {
        "header": index.expected_header(),
        "generation": generation,
        "docs": [d.to_json() for d in index.docs],
        "lengths": [len(t.split(" ")) if t else 1 for t in terms],
    }
    atomic_write(manifest_path(index), json.dumps(manifest))
    return generation


def _write_overlay(index: SearchIndex, generation: str | None) -> None:
    base, rows = index.base_rows, range(index.base_rows, len(index.docs))
    live = [r for r in rows if index.live[r]]
    meta: dict[str, Any] = {
        "docs": [index.docs[r].to_json() for r in live],
        "terms": [index.terms[r] or "" for r in live],
        "dead": [index.docs[r].rel for r in range(base) if not index.live[r]],
        "touched": {
            index.docs[r].rel: [index.docs[r].mtime, index.docs[r].size]
            for r in sorted(index.touched)
            if index.live[r]
        },
    }
    positions = index.positions(live)
    buffer = io.BytesIO()
    np.savez(
        buffer,
        meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
        vectors=index.passages.fast[positions],
        hashes=index.passages.hashes[positions],
    )
    atomic_write(index.cache_dir / f"overlay-{generation}.npz", buffer.getvalue())


def _remove_stale_generations(cache_dir: Path, keep: str) -> None:
    for entry in os.scandir(cache_dir):
        stem = entry.name.split(".", 1)[0]
        if stem.split("-", 1)[0] in GENERATION_FILES and not stem.endswith(keep):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
    with contextlib.suppress(OSError):  # the new base holds every row: no overlay yet
        os.unlink(cache_dir / f"overlay-{keep}.npz")


def saved(cache_dir: Path) -> bool:
    """True when an index of this cache dir is on disk (for any model): a process that loads
    it reads it, one that finds none reads every memory first."""
    return any(cache_dir.glob("search/*/manifest.json"))


def read_status(cache_dir: Path) -> dict[str, Any]:
    """What a saved index holds, read from its files without loading a model (``memdir status``)."""
    out: dict[str, Any] = {}
    for sub in sorted(cache_dir.glob("search/*/manifest.json")):
        try:
            manifest = json.loads(sub.read_text(encoding="utf-8"))
            docs = len(manifest["docs"])
            passages = sum(int(d[6]) for d in manifest["docs"])
            hashes = np.load(sub.parent / f"hashes-{manifest['generation']}.npy")
            done = 0
            model = sub.parent / "model-vectors.npz"
            if model.exists():
                with np.load(model, allow_pickle=False) as npz:
                    done = int(np.isin(hashes, npz["keys"]).sum())
            elif not manifest["header"].get("fast_stage"):
                done = passages
            out[sub.parent.name] = {"memories": docs, "passages": passages, "embedded": done}
        except Exception as exc:  # status is a report: say what is wrong, never raise
            out[sub.parent.name] = {"problem": str(exc)}
    return out


__all__ = ["load", "read_status", "save", "saved", "saved_terms"]
