"""What the hooks did, for ``memdir hook log``: one JSON line per hook call.

Invariants: the log is append-only JSONL in the cache dir (``hooks/log.jsonl``), written with the
transcripts' single ``O_APPEND`` write under a lock, so parallel sessions interleave whole lines.
It is derived and capped: past :data:`MAX_LOG_BYTES` the file is renamed to ``log.1.jsonl``
(replacing the previous one) and a new one starts. A hook never fails because its log could not
be written — the hook's answer matters more than its record.

No credential is written: a record's ``prompt`` (what the user typed, a pasted token included)
and ``text`` (what was injected) go through :func:`memdir.team.secrets.redact` first, whatever
``privateSecrets`` says — the log is a copy nobody asked to keep. A prompt is kept only to its
first :data:`PROMPT_LOG_CHARS` characters, cut *after* redaction so a token straddling the cut
cannot leave a recognisable half behind.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memdir.transcripts import append_entries

log = logging.getLogger(__name__)

MAX_LOG_BYTES = 4 * 1024 * 1024
PROMPT_LOG_CHARS = 300  # the log keeps the start of each prompt, not all of it
# how much of a prompt is scanned before the cut: a PEM private key is ~1.7k characters
_SCAN_CHARS = PROMPT_LOG_CHARS + 8 * 1024


def _scrubbed(entry: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(entry)
    prompt, text = out.get("prompt"), out.get("text")
    if isinstance(prompt, str) or isinstance(text, str):
        from memdir.team.secrets import redact

        if isinstance(prompt, str):
            out["prompt"] = redact(prompt[:_SCAN_CHARS])[:PROMPT_LOG_CHARS]
        if isinstance(text, str):
            out["text"] = redact(text)
    return out


def log_path(cache_dir: Path) -> Path:
    return cache_dir / "hooks" / "log.jsonl"


def unresolved_cache(memdir_home: Path) -> Path:
    """Where a hook records what it could not even resolve a project's cache dir for (broken
    settings): ``memdir hook log`` shows these rows in every project."""
    return memdir_home / "cache" / "unresolved"


def read_all(
    cache_dir: Path, memdir_home: Path, *, session: str | None = None, limit: int = 20
) -> list[dict[str, Any]]:
    """The project's records and the unresolved ones, by time, the newest ``limit``."""
    rows = read(cache_dir, session=session, limit=0)
    unresolved = unresolved_cache(memdir_home)
    extra = [] if unresolved == cache_dir else read(unresolved, session=session, limit=0)
    if extra:
        rows = sorted([*rows, *extra], key=lambda r: r.get("ts") or 0)
    return rows[-limit:] if limit > 0 else rows


def record(cache_dir: Path, entry: Mapping[str, Any]) -> None:
    """Append ``entry`` (plus a timestamp); problems go to the logger, never to the caller."""
    path = log_path(cache_dir)
    try:
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_size > MAX_LOG_BYTES:
                os.replace(path, path.with_name("log.1.jsonl"))
        # not fsynced: every hook writes a row and waits for nothing but the host
        append_entries(path, [{"ts": round(time.time(), 3), **_scrubbed(entry)}], durable=False)
    except Exception as exc:  # the log is best effort by design
        log.warning("could not write the hook log %s: %s", path, exc)


def read(cache_dir: Path, *, session: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """The newest ``limit`` records (of ``session`` when given), oldest first; a daemon's row
    for a prompt the hook then answered itself is left out."""
    path = log_path(cache_dir)
    rows: list[dict[str, Any]] = []
    for candidate in (path.with_name("log.1.jsonl"), path):
        try:
            lines = candidate.read_bytes().splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                row = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                continue  # a torn last line from a killed hook
            if isinstance(row, dict) and (session is None or row.get("session") == session):
                rows.append(row)
    # a hook that stopped waiting for the daemon answered the prompt itself; the daemon's late
    # row for the same request was never read by the host, so one prompt shows as one row
    replaced = {row["replaces"] for row in rows if isinstance(row.get("replaces"), str)}
    if replaced:
        rows = [row for row in rows if row.get("request") not in replaced]
    return rows[-limit:] if limit > 0 else rows
