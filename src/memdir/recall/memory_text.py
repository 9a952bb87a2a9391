"""The text recall searches in a memory file: name, description, body and ``applies_when``.

``applies_when`` (see :mod:`memdir.applies_when`) is read from the frontmatter and indexed with
the text. A memory without one gets the offline rules' situations as evidence for the relevance
rule only, so recall knows when every memory applies even before ``memdir reindex`` writes the
field, while the ranking of a dir nobody reindexed stays what it was.

Bounded: recall reads at most :data:`RECALL_READ_BYTES` of a memory (the scan reads 30 lines, a
surfaced memory is capped at 4 KB), so one huge file cannot stall an index build or the prompt
path; ``memdir doctor`` lists the files recall reads only in part. FIFOs and devices are refused
without blocking.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memdir import applies_when
from memdir.atomic import content_hash
from memdir.errors import FrontmatterError
from memdir.frontmatter import parse
from memdir.pathsafe import open_inside, open_regular

# ≈ 200 word pieces: one slice plus the memory's title fits MiniLM's 256-piece window.
PASSAGE_WORDS = 150
# At most this many passages are embedded per memory (the first ones; BM25 still reads all that
# was read): a 64 KiB memory costs about as much as a few short ones, not sixty passes.
MAX_PASSAGES = 6
# The rules look for their cues in the first 8,000 characters of a body: a memory that names its
# situations does so early, and scanning 64 KiB for 44 cue lists cost more than the rest of its
# indexing together.
DERIVE_CHARS = 8000
RECALL_READ_BYTES = 64 * 1024  # ≈ 10,000 words: far more than any memory worth recalling


@dataclass(frozen=True, slots=True)
class MemoryText:
    """The parts of a memory file recall searches over."""

    name: str
    description: str
    body: str
    type: str = ""
    # Evidence for the relevance rule: the rules' situations, then the stored ones that are new.
    applies_when: tuple[str, ...] = ()
    # Only the stored list joins the BM25 text; the rules' list is evidence for the relevance
    # rule alone (a dir's ranking changes when its files do, not when the rules do).
    stored_when: tuple[str, ...] = ()

    def passages(self, words: int = PASSAGE_WORDS, limit: int = MAX_PASSAGES) -> list[str]:
        """Embedding inputs: the title and description, with each of the first ``limit``
        ``words``-word body slices.

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
            for i in range(0, min(len(body_words), words * limit), words)
        ]

    def for_lexical(self) -> str:
        if not self.stored_when:
            return f"{self.name}\n{self.description}\n{self.body}"
        return "\n".join([self.name, self.description, self.body, *self.stored_when])


def read_memory_text(
    path: Path, rel: str, *, real_root: Path | None = None, applies: bool = True
) -> tuple[MemoryText, str, int]:
    """(text parts, hash of what was read, file size) of a memory's first ``RECALL_READ_BYTES``;
    bad frontmatter is searched as body.

    ``applies=False`` leaves ``applies_when`` out (recall as it was before issue #20, for
    comparison).

    With ``real_root`` (a realpath) a file that resolves outside it raises UnsafePathError
    instead of being read: the same check every other reader of memory files makes. The hash
    covers the prefix read (what the index holds); the size is the file's, for change checks.
    """
    fd = open_regular(path) if real_root is None else open_inside(real_root, path)
    with open(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        raw = fh.read(RECALL_READ_BYTES)
    text = raw.decode("utf-8", errors="replace")
    try:
        parsed = parse(text, source=rel)
        meta, body = parsed.meta, parsed.body
    except FrontmatterError:
        meta, body = {}, text
    name = str(meta["name"]) if meta.get("name") is not None else Path(rel).stem
    description = str(meta["description"]) if meta.get("description") is not None else ""
    mtype = str(meta["type"]) if meta.get("type") is not None else ""
    stored = applies_when.normalise(meta.get(applies_when.FIELD)) if applies else []
    situations = (
        applies_when.for_recall(
            applies_when.derive(mtype, name, description, body[:DERIVE_CHARS]), stored
        )
        if applies
        else []
    )
    return (
        MemoryText(
            name=name,
            description=description,
            body=body,
            type=mtype,
            applies_when=tuple(situations),
            stored_when=tuple(stored),
        ),
        content_hash(raw),
        size,
    )


__all__ = ["MAX_PASSAGES", "PASSAGE_WORDS", "RECALL_READ_BYTES", "MemoryText", "read_memory_text"]
