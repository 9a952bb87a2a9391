"""The consolidation lock: ``<memory dir>/.consolidate-lock``, compatible with the reference.

The file carries two facts at once:

* its **mtime** is the time of the last consolidation (0 when the file is absent) — the time gate
  reads nothing else;
* its **body** is the PID of the process that holds it (or held it last).

Protocol:

* *Acquire*: a holder whose mtime is younger than one hour and whose PID is alive blocks us.
  Otherwise we write our PID (which stamps the mtime with "now") and read the body back; a
  different PID means another process won the race. Acquire returns the prior mtime.
* *Release* after success keeps the new mtime: the dream happened now.
* *Rollback* after a failure or cancel puts the prior state back: no prior file -> unlink; else
  an empty body with the mtime set back to the prior one (one atomic rename, so a crash leaves the
  old or the new state, never a half).

Beyond the reference: the check-write-read sequence runs under the memory dir's store lock
(``flock``), so of N racing processes exactly one wins instead of "usually one". And a
``kill -9`` cannot run a rollback, so when a ``state_dir`` is given the prior mtime is recorded
there on acquire; the next :meth:`recover` (every gate check and ``dream status`` calls it) rolls
the lock back if its holder died without releasing.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from memdir.atomic import FileLock, atomic_write, ensure_dir
from memdir.errors import LockHeldError
from memdir.pathsafe import read_regular

LOCK_NAME = ".consolidate-lock"
GUARD_NAME = ".memdir.lock"  # the store's lock: short critical sections, already in the dir
RECORD_NAME = "dream-inflight.json"
STALE_AFTER_S = 3600.0


def pid_alive(pid: int | None) -> bool:
    """True when ``pid`` names a live (non-zombie) process, as far as this user can tell."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    try:  # a killed child that nobody reaped yet still answers kill(0); it is dead for us
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _parse_pid(body: str) -> int | None:
    text = body.strip()
    return int(text) if text.isdigit() else None


@dataclass(frozen=True, slots=True)
class LockState:
    """What the lock file says right now."""

    exists: bool
    mtime: float  # last consolidated at (0.0 when absent)
    pid: int | None
    alive: bool

    def blocks(self, now: float, stale_after: float = STALE_AFTER_S) -> bool:
        return self.exists and self.alive and (now - self.mtime) < stale_after


class ConsolidationLock:
    """Acquire, release and roll back ``<memory_dir>/.consolidate-lock``."""

    def __init__(
        self,
        memory_dir: Path,
        *,
        state_dir: Path | None = None,
        pid: int | None = None,
        stale_after: float = STALE_AFTER_S,
        guard_timeout: float = 5.0,
    ) -> None:
        self.memory_dir = Path(memory_dir)
        self.path = self.memory_dir / LOCK_NAME
        self.state_dir = state_dir
        self.pid = pid if pid is not None else os.getpid()
        self.stale_after = stale_after
        self.guard_timeout = guard_timeout

    # -- reading -------------------------------------------------------------------------
    def last_consolidated_at(self) -> float:
        """The lock's mtime in epoch seconds; 0.0 when there is no lock file (one stat)."""
        try:
            return self.path.stat().st_mtime
        except (FileNotFoundError, NotADirectoryError):
            return 0.0

    def state(self) -> LockState:
        try:
            mtime = self.path.stat().st_mtime
            body = read_regular(self.path, limit=4096).decode("utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError):
            return LockState(False, 0.0, None, False)
        pid = _parse_pid(body)
        return LockState(True, mtime, pid, pid_alive(pid))

    # -- the protocol --------------------------------------------------------------------
    def try_acquire(self, now: float | None = None) -> float | None:
        """Take the lock; the prior mtime on success, None when blocked or the race was lost."""
        moment = time.time() if now is None else now
        ensure_dir(self.memory_dir)
        try:
            with FileLock(self.memory_dir / GUARD_NAME, timeout=self.guard_timeout):
                before = self.state()
                if before.blocks(moment, self.stale_after) and before.pid != self.pid:
                    return None
                atomic_write(self.path, f"{self.pid}\n", mtime=moment)
                if self.state().pid != self.pid:
                    return None  # another writer not using the guard (the reference) got in
                self._write_record(before.mtime, moment)
                return before.mtime
        except LockHeldError:
            return None

    def release(self) -> None:
        """Success: keep the new mtime (the consolidation happened), forget the crash record."""
        self._drop_record()

    def rollback(self, prior: float) -> None:
        """Failure or cancel: put the last-consolidated time back to ``prior``."""
        try:
            with FileLock(self.memory_dir / GUARD_NAME, timeout=self.guard_timeout):
                self._rollback_locked(prior, self.pid)
        finally:
            self._drop_record()

    def _rollback_locked(self, prior: float, holder: int) -> None:
        if self.state().pid != holder:
            return  # someone took the lock over meanwhile; their state is not ours to undo
        if prior <= 0:
            self.path.unlink(missing_ok=True)
        else:
            atomic_write(self.path, "", mtime=prior)

    def recover(self) -> bool:
        """Roll back a lock whose holder died mid-dream (kill -9); True if it did."""
        record = self._read_record()
        if record is None:
            return False
        holder, prior = record
        current = self.state()
        if current.pid == holder and current.alive:
            return False  # still dreaming
        try:
            with FileLock(self.memory_dir / GUARD_NAME, timeout=self.guard_timeout):
                if current.pid == holder:
                    self._rollback_locked(prior, holder)
        except LockHeldError:
            return False
        self._drop_record(holder)
        return current.pid == holder

    # -- the crash record (beside the caches, never in the memory dir) -------------------
    def _record_path(self) -> Path | None:
        return self.state_dir / RECORD_NAME if self.state_dir is not None else None

    def _write_record(self, prior: float, acquired: float) -> None:
        path = self._record_path()
        if path is not None:
            payload = {"pid": self.pid, "prior_mtime": prior, "acquired_at": acquired}
            atomic_write(path, json.dumps(payload))

    def _read_record(self) -> tuple[int, float] | None:
        path = self._record_path()
        if path is None:
            return None
        try:
            data = json.loads(read_regular(path, limit=65536).decode("utf-8"))
            return int(data["pid"]), float(data["prior_mtime"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)  # a torn record cannot be trusted; the lock still works
            return None

    def _drop_record(self, holder: int | None = None) -> None:
        path = self._record_path()
        if path is None:
            return
        record = self._read_record()
        if record is not None and record[0] == (self.pid if holder is None else holder):
            path.unlink(missing_ok=True)
