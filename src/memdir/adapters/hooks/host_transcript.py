"""A host's transcript, in the shape memdir's readers take (the Claude Code JSONL entries).

Extraction, session notes and the recall context read transcripts in one shape. A host that
writes another (Codex's rollout JSONL, Gemini CLI's chat JSON) is read by its dialect into
entries, and those are written once more, as memdir's JSONL, into the cache
(``<cache>/hooks/transcripts/<host>-<id>.jsonl``, 0600) for the readers to open; a host whose
transcript already has the shape (Claude Code) is read where it is.

Invariants: the converted file is a pure function of the host file (rewritten atomically from
it each time, never appended to), so a reader's cursor by entry ``uuid`` stays valid as long as
the dialect gives each host line a stable uuid; the host file itself is only read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.atomic import atomic_write

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Dialect
    from memdir.prompt_context import RecallContext

MAX_CONTEXT_ENTRIES = 40  # the recall context reads a few turns back, no more
TAIL_BYTES = 256 * 1024  # of a host transcript, for that (its lines carry more than memdir's)


def readable(dialect: Dialect, transcript: Path, cache_dir: Path) -> Path:
    """The file memdir's readers open for ``transcript`` (checked by ``transcript_file``)."""
    entries = dialect.read_entries(transcript)
    if entries is None:
        return transcript
    digest = hashlib.sha256(str(transcript).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    target = cache_dir / "hooks" / "transcripts" / f"{dialect.name}-{digest}.jsonl"
    lines = (json.dumps(e, ensure_ascii=False) for e in entries)
    atomic_write(target, "".join(line + "\n" for line in lines), mode=0o600)
    return target


def recall_context(dialect: Dialect, transcript: Path | None) -> RecallContext:
    """What the prompt is about, from the transcript's tail (bounded by the readers)."""
    from memdir.prompt_context import from_entries, from_transcript

    if transcript is None:
        return from_transcript(None)
    entries = dialect.read_entries(transcript, tail_bytes=TAIL_BYTES)
    if entries is None:
        return from_transcript(transcript)
    return from_entries(entries[-MAX_CONTEXT_ENTRIES:])


__all__ = ["readable", "recall_context"]
