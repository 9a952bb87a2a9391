"""Daily logs: ``logs/YYYY/MM/YYYY-MM-DD.md`` (local date), append-only.

The journal of a memory dir: what a person, an agent (``memdir log``) or the extractor
(:mod:`memdir.extract.sightings`) noted during a day. Dream distils it
(:mod:`memdir.consolidate.logs` records what it has distilled); it lives here, below both, because
the extractor writes it and the dream reads it.

Invariants:

* :func:`append_log` adds exactly one timestamped bullet (``- HH:MM — text``) per call, as one
  ``O_APPEND`` write under the memory dir's lock, so appends from many processes at once are
  never lost or interleaved; bytes already in the file never change. A torn last line (a crash
  mid-write) is closed with a newline before the next bullet.
* Logs are never indexed (:mod:`memdir.index` skips ``logs/``) and never touched by a dream.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from memdir.atomic import FILE_MODE, FileLock, ensure_dir, fsync_dir
from memdir.errors import DreamError
from memdir.index import LOGS_DIR
from memdir.pathsafe import read_regular
from memdir.store import LOCK_NAME

MAX_BULLET_CHARS = 2_000
_BULLET = re.compile(r"^\s*[-*]\s+(?:(?P<time>\d{1,2}:\d{2})\s*(?:[—–-]\s*)?)?(?P<text>.+?)\s*$")


def log_rel(day: dt.date) -> str:
    return f"{LOGS_DIR}/{day:%Y}/{day:%m}/{day:%Y-%m-%d}.md"


def append_log(root: Path, text: str, *, now: dt.datetime | None = None) -> Path:
    """Append ``- HH:MM — text`` to today's log (local time) and return the log's path."""
    flat = " ".join(text.split())
    if not flat:
        raise DreamError("a log entry needs some text")
    if len(flat) > MAX_BULLET_CHARS:
        raise DreamError(f"a log entry is one line of at most {MAX_BULLET_CHARS} characters")
    moment = now or dt.datetime.now().astimezone()
    path = root / log_rel(moment.date())
    ensure_dir(path.parent)
    with FileLock(root / LOCK_NAME):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            prefix = ""
            if size == 0:
                prefix = f"# {moment:%Y-%m-%d}\n\n"
            elif _last_byte(path) != b"\n":
                prefix = "\n"
            os.write(fd, f"{prefix}- {moment:%H:%M} — {flat}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        if size == 0:
            fsync_dir(path.parent)
    return path


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1)


@dataclass(frozen=True, slots=True)
class Bullet:
    log: str  # relative path of the log file
    day: dt.date
    time: str | None
    text: str

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.log}\n{self.text}".encode()).hexdigest()[:16]

    def when(self) -> dt.datetime:
        hour, minute = (int(x) for x in (self.time or "12:00").split(":"))
        return dt.datetime.combine(self.day, dt.time(min(hour, 23), min(minute, 59)))


def log_files(root: Path) -> list[tuple[str, dt.date]]:
    """(relative path, date) of every daily log, oldest first."""
    out = []
    base = root / LOGS_DIR
    for path in base.glob("[0-9][0-9][0-9][0-9]/[0-9][0-9]/*.md"):
        try:
            day = dt.date.fromisoformat(path.stem)
        except ValueError:
            continue
        out.append((path.relative_to(root).as_posix(), day))
    return sorted(out, key=lambda item: (item[1], item[0]))


def bullets(root: Path, rel: str, day: dt.date) -> list[Bullet]:
    try:
        text = read_regular(root / rel).decode("utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        m = _BULLET.match(line)
        if m is not None:
            out.append(Bullet(rel, day, m.group("time"), m.group("text")))
    return out
