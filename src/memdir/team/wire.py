"""The team-sync wire protocol: shapes, limits, checksums and PUT batching, shared by both ends.

Invariant: the client and the server compute every checksum and every batch boundary with the
functions in this module, so a checksum the server returns is byte-for-byte the one the client
computes for the same text, and a batch the client builds never exceeds the server's body limit.
The shapes match the reference protocol (GET ``/api/claude_code/team_memory?repo=<owner/repo>``)
so a reference client can talk to our server. Pure Python, no third-party imports.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, TypedDict

API_PATH = "/api/claude_code/team_memory"
ALIAS_PATH = "/api/team_memory"
MAX_ENTRY_BYTES = 250_000
MAX_BODY_BYTES = 200_000
DEFAULT_MAX_ENTRIES = 5_000
# A key is a relative file path: no file system takes a name segment over 255 bytes, and no
# honest team dir nests 1 KB deep. Longer keys could only fail on every client, one by one.
MAX_KEY_BYTES = 1_024
MAX_KEY_SEGMENT_BYTES = 255
TOO_MANY_ENTRIES = "team_memory_too_many_entries"
ENTRY_TOO_LARGE = "team_memory_entry_too_large"
BODY_TOO_LARGE = "team_memory_request_too_large"
_EMPTY_BODY = '{"entries":{}}'


class Content(TypedDict, total=False):
    entries: dict[str, str]
    entryChecksums: dict[str, str]


class RepoDocument(TypedDict):
    """The ``GET`` body (``content.entries`` omitted with ``view=hashes``)."""

    organizationId: str
    repo: str
    version: int
    lastModified: str | None
    checksum: str
    content: Content


def checksum(text: str) -> str:
    """``'sha256:' + hex(sha256(utf8(text)))``: the per-entry checksum of the reference."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def repo_checksum(entry_checksums: Mapping[str, str]) -> str:
    """One checksum over a whole repository: sorted ``key NUL checksum LF`` lines, hashed.

    Deterministic in the set of (key, entry checksum) pairs only, so every replica and the client
    agree on it without sharing any state besides the entries.
    """
    digest = hashlib.sha256()
    for key in sorted(entry_checksums):
        digest.update(key.encode("utf-8"))
        digest.update(b"\0")
        digest.update(entry_checksums[key].encode("ascii"))
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def entry_bytes(text: str) -> int:
    """UTF-8 size of an entry (check :func:`text_problem` first: a lone surrogate raises)."""
    return len(text.encode("utf-8"))


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be a team entry's content, or None.

    A lone surrogate (legal in JSON's ``\\ud800`` escapes, impossible in UTF-8) cannot be stored
    or written to a file; a NUL character cannot be stored by PostgreSQL and is never Markdown.
    Both ends apply this one rule, so what a client uploads the server accepts on every backend.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "not valid Unicode (lone surrogate)"
    if "\x00" in text:
        return "contains a NUL character"
    return None


def body_bytes(entries: Mapping[str, str]) -> int:
    """The size of ``{"entries": ...}`` exactly as :func:`batch_entries` accounts for it."""
    size = len(_EMPTY_BODY)
    for key, value in entries.items():
        size += _entry_cost(key, value)
    return size


def _entry_cost(key: str, value: str) -> int:
    # '"key":"value",' -> the two JSON strings plus the colon and the comma.
    return len(_json(key).encode("utf-8")) + len(_json(value).encode("utf-8")) + 2


def _json(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def encode_put(entries: Mapping[str, str]) -> bytes:
    """The compact UTF-8 JSON body of a PUT; its size never exceeds :func:`body_bytes`."""
    return json.dumps({"entries": dict(entries)}, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8"
    )


def batch_entries(
    entries: Mapping[str, str], *, limit: int = MAX_BODY_BYTES
) -> list[dict[str, str]]:
    """Split ``entries`` into PUT bodies of at most ``limit`` bytes, in sorted key order.

    A new batch starts when adding an entry would push the current one over ``limit`` and the
    current one is not empty; an entry too big on its own travels alone (the server then decides).
    """
    batches: list[dict[str, str]] = []
    current: dict[str, str] = {}
    size = len(_EMPTY_BODY)
    for key in sorted(entries):
        cost = _entry_cost(key, entries[key])
        if current and size + cost > limit:
            batches.append(current)
            current, size = {}, len(_EMPTY_BODY)
        current[key] = entries[key]
        size += cost
    if current:
        batches.append(current)
    return batches


def too_many_entries_body(max_entries: int, received: int) -> dict[str, Any]:
    """The 413 body of the reference when a write would exceed the repository's entry limit."""
    return error_body(
        TOO_MANY_ENTRIES,
        f"too many entries: {received} > {max_entries}",
        max_entries=max_entries,
        received_entries=received,
    )


def error_body(code: str, message: str, **details: Any) -> dict[str, Any]:
    return {"error": {"message": message, "details": {"error_code": code, **details}}}


def error_details(body: Any) -> dict[str, Any]:
    """``body.error.details`` if the body has that shape, else ``{}`` (never raises)."""
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            details = error.get("details")
            if isinstance(details, dict):
                return details
    return {}


def quote_etag(value: str) -> str:
    return f'"{value}"'


def unquote_etag(header: str | None) -> list[str]:
    """The entity tags in an ``If-Match``/``If-None-Match`` header, quotes and ``W/`` removed."""
    if not header:
        return []
    tags = []
    for part in header.split(","):
        tag = part.strip()
        if tag.startswith("W/"):
            tag = tag[2:]
        tags.append(tag.strip('"'))
    return [t for t in tags if t]


_REPO_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def valid_repo(name: str) -> bool:
    """``owner/repo`` with GitHub-style name characters, neither part ``.`` or ``..``."""
    parts = name.split("/")
    return (
        len(name) <= 200
        and len(parts) == 2
        and all(p and p not in (".", "..") and set(p) <= _REPO_CHARS for p in parts)
    )
