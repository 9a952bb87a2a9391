"""What recall knows besides the prompt: recent turns, files just read or edited, tools just used.

"Add the dependency" says little; "add the dependency" right after editing ``admin/package.json``
says which memory governs it. A :class:`RecallContext` is a bounded summary of that context,
read from the tail of the host's transcript (:func:`from_transcript`, for the Claude Code hook)
or from the runtime's own conversation (:func:`from_entries` over the same entry shape:
``memdir.runtime.recall_turn``), so both summarise by one rule. The local selector uses it so
the prompt dominates:

- the context's words add to the BM25 score at ``CONTEXT_WEIGHT`` (0.3) of the prompt's, and never
  count as lexical coverage (so context alone cannot make a memory pass the relevance rule);
- the names of the files and tools just used count as ``applies_when`` words (a package manifest
  just edited is evidence that a package-manager rule applies);
- the embedding is the prompt's alone: the per-prompt latency stays one short embedding.

It lives beside the ``recall`` package, not in it: the prompt hook imports it, and importing
``memdir.recall`` loads the LLM selector (the hook path stays free of recall, llm and numpy
until it recalls; tests/cli/test_main.py).

Invariants: bounded whatever the transcript holds (the last ``TAIL_BYTES`` of the file, at most
``MAX_TURNS`` turns, ``MAX_WORDS`` words of text, ``MAX_ITEMS`` files and tools); reading never
raises (an unreadable or malformed transcript is an empty context).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from memdir.errors import MemdirError
from memdir.pathsafe import open_regular

CONTEXT_WEIGHT = 0.3
TAIL_BYTES = 64 * 1024
MAX_TURNS = 4
MAX_WORDS = 80
MAX_ITEMS = 8
_FILE_KEYS = ("file_path", "path", "notebook_path")
_NAME_PARTS = re.compile(r"[A-Za-z][A-Za-z0-9]+")
# Text the host injected into a user message (recalled memories, file-change notes): what the
# user and the agent said is the context; a memory surfaced last turn must not recall itself.
_REMINDER = "<system-reminder>"


@dataclass(frozen=True, slots=True)
class RecallContext:
    """A bounded summary of what happened just before the prompt."""

    recent: str = ""
    files: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.recent or self.files or self.tools)

    def activity(self) -> str:
        """The files and tools as words ("admin/package.json" → "admin package json")."""
        words = [w for f in self.files for w in _NAME_PARTS.findall(PurePosixPath(f).as_posix())]
        return " ".join([*words, *self.tools])

    def text(self) -> str:
        """Everything the lexical side adds (at ``CONTEXT_WEIGHT``)."""
        return f"{self.recent} {self.activity()}".strip()

    def to_json(self) -> dict[str, Any]:
        return {"recent": self.recent, "files": list(self.files), "tools": list(self.tools)}

    @classmethod
    def from_json(cls, raw: Any) -> RecallContext:
        """From a daemon request; anything malformed is dropped, everything is re-bounded."""
        if not isinstance(raw, Mapping):
            return cls()
        recent = raw.get("recent")
        return cls(
            _bounded_words(recent if isinstance(recent, str) else ""),
            _strings(raw.get("files")),
            _strings(raw.get("tools")),
        )


def _bounded_words(text: str) -> str:
    return " ".join(text.split()[-MAX_WORDS:])


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        return ()
    out: list[str] = []
    for item in value:
        if isinstance(item, str) and item and item not in out:
            out.append(item[:300])
    return tuple(out[-MAX_ITEMS:])


def _tail_lines(path: Path) -> list[str]:
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - TAIL_BYTES))
        data = fh.read(TAIL_BYTES)
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if size > TAIL_BYTES else lines  # the first line may be cut


def _entry_parts(entry: Mapping[str, Any]) -> tuple[str, list[str], list[str]]:
    """(text, files, tools) of one transcript entry (the reference's JSONL shape)."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        return content, [], []
    texts: list[str] = []
    files: list[str] = []
    tools: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            if not block["text"].lstrip().startswith(_REMINDER):  # recalled memories, notes
                texts.append(block["text"])
        elif block.get("type") == "tool_use":
            if isinstance(block.get("name"), str):
                tools.append(block["name"])
            tool_input = block.get("input")
            if isinstance(tool_input, Mapping):
                files += [tool_input[k] for k in _FILE_KEYS if isinstance(tool_input.get(k), str)]
    return " ".join(texts), files, tools


def from_transcript(path: Path | str | None) -> RecallContext:
    """The context at the end of a JSONL transcript (see module); empty when unreadable."""
    if not path:
        return RecallContext()
    try:
        lines = _tail_lines(Path(path))
    except (OSError, ValueError, MemdirError):  # missing, a FIFO or other non-regular file, …
        return RecallContext()
    entries: list[Any] = []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return from_entries(entries)


def from_entries(entries: Sequence[Any]) -> RecallContext:
    """The context at the end of transcript entries (oldest first; malformed ones skipped)."""
    texts: list[str] = []
    files: list[str] = []
    tools: list[str] = []
    turns = 0
    for entry in reversed(entries):
        if not isinstance(entry, Mapping) or entry.get("type") not in ("user", "assistant"):
            continue
        if entry.get("isSidechain"):
            continue
        text, entry_files, entry_tools = _entry_parts(entry)
        texts.insert(0, text)
        files[:0] = entry_files
        tools[:0] = entry_tools
        turns += bool(text)
        if turns >= MAX_TURNS:
            break
    return RecallContext(_bounded_words(" ".join(texts)), _strings(files), _strings(tools))


__all__ = ["CONTEXT_WEIGHT", "RecallContext", "from_entries", "from_transcript"]
