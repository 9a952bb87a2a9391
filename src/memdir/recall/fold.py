"""Recall never spends two slots on the same memory.

Two files that are the same memory — a copy, or a near duplicate by :mod:`memdir.sameness` (the
notion dream merges by and extraction updates by) — surface once, as the one most recently
updated, in the slot of the better ranked of them; the other is *folded* into it, and ``recall
--explain`` says so.

Invariants:
- Cheap: a memory's body is read only when its name and description already look like a kept
  one's (the same description, or the same memory by name and description); reads are bounded
  (:data:`memdir.recall.memory_text.RECALL_READ_BYTES`) and a file that cannot be read is simply
  not folded.
- Never more than ``limit`` survivors; the ranking decides which memories get slots, the dates
  only which copy fills one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import MemdirError
from memdir.recall.memory_text import read_memory_text
from memdir.sameness import Doc, find_same, make_doc, normalise


@dataclass(frozen=True, slots=True)
class Entry:
    """A ranked memory that passed the relevance rule."""

    rel: str
    mtime: float
    name: str
    description: str
    type: str = ""


@dataclass(frozen=True, slots=True)
class Folding:
    """Which memories got the slots, in slot order, and which were folded into which."""

    kept: list[Entry]
    folded: dict[str, tuple[str, str]]  # folded rel -> (survivor rel, "exact" | "near")

    def reason(self, rel: str) -> str | None:
        """Why ``rel`` is not surfaced although relevant, or None when it is not folded."""
        if rel not in self.folded:
            return None
        survivor, verdict = self.folded[rel]
        what = "a copy" if verdict == "exact" else "a near duplicate"
        return f"folded into {survivor}: {what} of it, updated more recently"


MAX_CACHED = 10_000  # memories whose comparable form a long-lived SameMemory keeps


class SameMemory:
    """Decides whether two memory files of one dir are the same memory. Long-lived (a selector
    keeps one): each file's comparable form is computed once per version (its mtime)."""

    def __init__(self, memory_dir: Path) -> None:
        self.root = memory_dir
        self._real = Path(os.path.realpath(memory_dir))
        self._docs: dict[tuple[str, float], Doc | None] = {}
        self._heads: dict[tuple[str, float], Doc] = {}

    def _doc(self, entry: Entry) -> Doc | None:
        key = (entry.rel, entry.mtime)
        if key not in self._docs:
            if len(self._docs) > MAX_CACHED:
                self._docs.clear()
            try:
                text, _sha, _size = read_memory_text(
                    self.root / entry.rel, entry.rel, real_root=self._real, applies=False
                )
            except (OSError, MemdirError):
                self._docs[key] = None
            else:
                scope = "team" if entry.rel.startswith("team/") else "private"
                body = f"{text.description}\n{text.body}"
                doc = make_doc(entry.rel, scope, text.type or None, body, name=text.name)
                self._docs[key] = doc
        return self._docs[key]

    def same_as(self, entry: Entry, kept: Sequence[Entry]) -> tuple[Entry, str] | None:
        """The entry of ``kept`` that ``entry`` is the same memory as, with the verdict."""
        heads = [k for k in kept if self._alike(entry, k)]
        if not heads:
            return None
        doc = self._doc(entry)
        docs = [d for k in heads if (d := self._doc(k)) is not None]
        if doc is None or not docs:
            return None
        pair = find_same(doc, docs)
        if pair is None:
            return None
        return next(k for k in heads if k.rel == pair.b), pair.verdict

    def _alike(self, a: Entry, b: Entry) -> bool:
        """Worth reading both bodies: the same description, or the same memory by headers."""
        if normalise(a.description) == normalise(b.description):
            return True
        head_a, head_b = self._head(a), self._head(b)
        shared = len(head_a.words & head_b.words)
        # Weighted over two docs, a near duplicate needs over half its words shared (shared
        # words weigh log 2, the others log 3): fewer than 40% rules it out without weighing.
        if shared < 0.4 * len(head_a.words | head_b.words):
            return False
        if (head_a.values - head_b.values) and (head_b.values - head_a.values):
            return False  # different values: two memories, never copies (memdir.sameness)
        return find_same(head_a, [head_b]) is not None

    def _head(self, entry: Entry) -> Doc:
        key = (entry.rel, entry.mtime)
        if key not in self._heads:
            if len(self._heads) > MAX_CACHED:
                self._heads.clear()
            text = f"{entry.name}\n{entry.description}"
            self._heads[key] = make_doc(entry.rel, "", entry.type or None, text, name=entry.name)
        return self._heads[key]


def fold(
    ranked: Sequence[Entry],
    same: Callable[[Entry, Sequence[Entry]], tuple[Entry, str] | None],
    *,
    limit: int,
) -> Folding:
    """The first ``limit`` distinct memories of ``ranked`` (best first), each the most recently
    updated of its copies among ``ranked``."""
    kept: list[Entry] = []
    folded: dict[str, tuple[str, str]] = {}
    for entry in ranked:
        found = same(entry, kept)
        if found is None:
            if len(kept) < limit:
                kept.append(entry)
            continue
        twin, verdict = found
        if entry.mtime > twin.mtime:  # the newer copy takes the older one's slot
            kept[kept.index(twin)] = entry
            folded = {rel: (entry.rel if s == twin.rel else s, v) for rel, (s, v) in folded.items()}
            folded[twin.rel] = (entry.rel, verdict)
        else:
            folded[entry.rel] = (twin.rel, verdict)
    return Folding(kept, folded)


__all__ = ["Entry", "Folding", "SameMemory", "fold"]
