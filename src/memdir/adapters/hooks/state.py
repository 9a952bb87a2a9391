"""Per-session hook state in the cache dir: what was surfaced, the byte budget, the extraction
cursor and the notices waiting for the next prompt.

Invariants:
- One file per session, ``<cache dir>/hooks/sessions/<session id>.json``; every change is a
  read-modify-write under that file's lock and lands through :func:`memdir.atomic.atomic_write`,
  so parallel hook processes (several sessions, or a prompt racing the background extraction of
  the same session) never lose an update and readers never see a torn file.
- A memory path in ``surfaced`` is never injected again in this session — compaction included: it
  resets the byte budget (the old attachments left the context) but not the set.
- A ``session-start`` block is in one context at most once (:meth:`SessionState.claim_start`):
  the same event delivered twice (plugin and settings install both active) injects once, and a
  resumed context (``--continue`` after ``/compact``) that already holds the block gets nothing.
- A prompt the daemon answered after its hook stopped waiting records nothing that lasts: the
  daemon keeps what its answer recorded (:class:`Answer`) and the hook, answering the prompt
  itself, takes it back (:meth:`SessionState.take_back`) — or, when the daemon has not got that
  far, bars it from recording at all. Whichever runs first, the prompt's memories and notices
  reach the one answer the host reads.
- The state is derived and disposable: a corrupt file is reported and replaced by a fresh state;
  the cost is at most one memory surfaced a second time.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memdir.atomic import atomic_write, locked

log = logging.getLogger(__name__)

SESSION_BUDGET_BYTES = 60 * 1024  # per session, as the reference's relevant-memory cap
SAME_EVENT_SECONDS = 10.0  # one SessionStart delivered twice arrives within this
NEW_CONTEXT_SOURCES = ("startup", "clear", "compact")  # resume keeps what the context holds
STATE_LOCK_TIMEOUT = 5.0
SETTLED_MAX_AGE = 600.0  # seconds a late recall (cold daemon) waits for the next prompt
STATE_MAX_AGE_DAYS = 30
GIVEN_UP_KEPT = 8  # requests a hook stopped waiting for, remembered until the daemon gets there
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Injected:
    """One memory as the hook injects it (the recall daemon sends these over the wire)."""

    path: str
    filename: str
    header: str
    content: str
    truncated: bool = False

    @property
    def text(self) -> str:
        return f"{self.header}\n{self.content}"

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8"))

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Injected:
        return cls(
            str(raw["path"]),
            str(raw["filename"]),
            str(raw["header"]),
            str(raw["content"]),
            bool(raw.get("truncated", False)),
        )


@dataclass
class Answer:
    """What the daemon's answer to one forwarded prompt changed, until the next one: a hook that
    stopped waiting for it (``request``) takes it back and answers the prompt itself."""

    request: str
    surfaced: list[str] = field(default_factory=list)
    used_bytes: int = 0
    notices: list[str] = field(default_factory=list)
    settled: list[Injected] = field(default_factory=list)
    settled_at: float = 0.0

    @classmethod
    def from_json(cls, raw: Any) -> Answer | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("request"), str):
            return None
        return cls(
            request=raw["request"],
            surfaced=[str(p) for p in raw.get("surfaced", [])],
            used_bytes=int(raw.get("used_bytes", 0)),
            notices=[str(n) for n in raw.get("notices", [])],
            settled=_settled(raw.get("settled")),
            settled_at=float(raw.get("settled_at", 0.0)),
        )


@dataclass
class SessionState:
    session_id: str
    surfaced: list[str] = field(default_factory=list)
    used_bytes: int = 0
    budget_bytes: int = SESSION_BUDGET_BYTES
    cursor: str | None = None  # uuid of the last transcript message extraction covered
    notices: list[str] = field(default_factory=list)
    extract_pending: bool = False  # a stop arrived while extraction ran: one trailing run
    compactions: int = 0
    start_blocks: list[str] = field(default_factory=list)  # digests in the current context
    start_event: str = ""  # digest of the last session-start input, to spot a second delivery
    start_at: float = 0.0
    # a session start the host cannot take context at (Gemini CLI): its source, for the first
    # prompt to deliver the blocks
    start_pending: str = ""
    updated: float = 0.0
    # recalled for an earlier prompt after it was answered (a daemon still loading): the next
    # prompt delivers them, unless surfaced by then
    settled: list[Injected] = field(default_factory=list)
    settled_at: float = 0.0
    answer: Answer | None = None  # the daemon's last answer to a prompt, kept to take back
    given_up: list[str] = field(default_factory=list)  # requests a hook answered itself
    answered_turn: str = ""  # the host's id of the last prompt answered (HookInput.turn)
    compacted_at: float = 0.0  # when the host last said it compacts (pre-compact)
    start_given: list[str] = field(default_factory=list)  # the blocks the last start added

    @property
    def exhausted(self) -> bool:
        return self.used_bytes >= self.budget_bytes

    def accept(self, found: Iterable[Injected], *, max_chars: int) -> list[Injected]:
        """Keep memories not surfaced before, within the session budget and ``max_chars`` of
        text this turn; record the kept ones. Ones left out for size stay eligible later."""
        kept: list[Injected] = []
        seen = set(self.surfaced)
        chars = 0
        for item in found:
            if item.path in seen or self.exhausted:
                continue
            if chars + len(item.text) + 2 > max_chars:
                continue
            seen.add(item.path)
            self.surfaced.append(item.path)
            self.used_bytes += item.size
            chars += len(item.text) + 2
            kept.append(item)
        return kept

    def claim_start(
        self, event_key: str, blocks: Sequence[str], source: str, now: float
    ) -> tuple[str | None, list[str]]:
        """Record which of a session-start's blocks (digests) go into the context: (why none
        does, or None; the ones that do). A block the context already holds is left out — a
        resume after a compaction holds what the compaction's session-start put there."""
        again = event_key == self.start_event and now - self.start_at < SAME_EVENT_SECONDS
        # Codex compacts a resumed session before it starts it, then fires SessionStart twice
        # (resume, then compact): what the resume's start gave came after the compaction and
        # is in the context the compact start adds to
        after_compaction = source == "compact" and 0 < self.compacted_at < self.start_at
        self.start_event, self.start_at = event_key, now
        if again:
            return "the same session-start delivered twice (memdir installed twice?)", []
        if source in NEW_CONTEXT_SOURCES:
            self.start_blocks = list(self.start_given) if after_compaction else []
        new = [b for b in dict.fromkeys(blocks) if b not in self.start_blocks]
        self.start_given = new
        if not new:
            return "this context already holds the same block", []
        self.start_blocks += new
        return None, new

    def take_settled(self, now: float) -> list[Injected]:
        """What recall found for an earlier prompt, unless that is over
        :data:`SETTLED_MAX_AGE` seconds old (it answered another moment's question)."""
        settled, self.settled = self.settled, []
        return settled if now - self.settled_at <= SETTLED_MAX_AGE else []

    def take_notices(self) -> list[str]:
        notices, self.notices = self.notices, []
        return notices

    def record_answer(
        self,
        request: str,
        injected: Sequence[Injected],
        notices: Sequence[str],
        settled: Sequence[Injected],
        settled_at: float,
    ) -> None:
        """Remember what the daemon's answer to ``request`` took from this state."""
        self.answer = Answer(
            request,
            [m.path for m in injected],
            sum(m.size for m in injected),
            list(notices),
            list(settled),
            settled_at,
        )

    def take_back(self, request: str) -> None:
        """The hook stopped waiting for the daemon's answer to ``request`` and answers the prompt
        itself: undo what that answer recorded, or, not recorded yet, keep it from recording."""
        answer = self.answer
        if answer is None or answer.request != request:
            self.given_up = [*self.given_up[-(GIVEN_UP_KEPT - 1) :], request]
            return
        gone = set(answer.surfaced)
        self.surfaced = [p for p in self.surfaced if p not in gone]
        self.used_bytes = max(0, self.used_bytes - answer.used_bytes)
        self.notices = [*answer.notices, *self.notices]
        if answer.settled and not self.settled:
            self.settled, self.settled_at = answer.settled, answer.settled_at
        self.answer = None

    def to_json(self) -> dict[str, Any]:
        return {"format": _FORMAT, **asdict(self)}

    @classmethod
    def from_json(cls, session_id: str, raw: Any) -> SessionState:
        if not isinstance(raw, dict) or raw.get("format") != _FORMAT:
            raise ValueError("not a memdir hook state file")
        return cls(
            session_id=session_id,
            surfaced=[str(p) for p in raw.get("surfaced", [])],
            used_bytes=int(raw.get("used_bytes", 0)),
            budget_bytes=int(raw.get("budget_bytes", SESSION_BUDGET_BYTES)),
            cursor=raw.get("cursor") if isinstance(raw.get("cursor"), str) else None,
            notices=[str(n) for n in raw.get("notices", [])],
            extract_pending=bool(raw.get("extract_pending", False)),
            compactions=int(raw.get("compactions", 0)),
            start_blocks=[str(b) for b in raw.get("start_blocks", [])],
            start_event=str(raw.get("start_event", "")),
            start_at=float(raw.get("start_at", 0.0)),
            start_pending=str(raw.get("start_pending", "")),
            updated=float(raw.get("updated", 0.0)),
            settled=_settled(raw.get("settled")),
            settled_at=float(raw.get("settled_at", 0.0)),
            answer=Answer.from_json(raw.get("answer")),
            given_up=[str(r) for r in raw.get("given_up", [])][-GIVEN_UP_KEPT:],
            answered_turn=str(raw.get("answered_turn", "")),
            compacted_at=float(raw.get("compacted_at", 0.0)),
            start_given=[str(b) for b in raw.get("start_given", [])],
        )

    def claim_turn(self, turn: str) -> bool:
        """True the first time the host's prompt ``turn`` is seen in a row, False again."""
        if turn == self.answered_turn:
            return False
        self.answered_turn = turn
        return True


def _settled(raw: Any) -> list[Injected]:
    """The well-formed entries of a stored ``settled`` list (state is derived: skip the rest)."""
    out = []
    for item in raw if isinstance(raw, list) else []:
        with contextlib.suppress(KeyError, TypeError):
            out.append(Injected.from_json(item))
    return out


class SessionStore:
    """The state files of every session that uses one memory dir's cache."""

    def __init__(self, cache_dir: Path) -> None:
        self.root = cache_dir / "hooks" / "sessions"

    def path(self, session_id: str) -> Path:
        return self.root / f"{session_id}.json"

    def lock_path(self, session_id: str, what: str = "state") -> Path:
        return self.root / f"{session_id}.{what}.lock"

    def load(self, session_id: str) -> SessionState:
        """The current state (a fresh one when absent or corrupt); no lock taken."""
        path = self.path(session_id)
        try:
            raw = json.loads(path.read_text("utf-8"))
            return SessionState.from_json(session_id, raw)
        except FileNotFoundError:
            return SessionState(session_id)
        except (OSError, ValueError, TypeError, UnicodeDecodeError) as exc:
            log.warning("hook state %s unreadable (%s); starting afresh", path, exc)
            return SessionState(session_id)

    @contextlib.contextmanager
    def update(self, session_id: str) -> Iterator[SessionState]:
        """Read-modify-write the session's state under its lock."""
        with locked(self.lock_path(session_id), timeout=STATE_LOCK_TIMEOUT):
            state = self.load(session_id)
            before = state.to_json()
            yield state
            if state.to_json() != before:
                state.updated = time.time()
                text = json.dumps(state.to_json(), ensure_ascii=False)
                # not fsynced: a power cut that takes this write back takes the host's session
                # down with it, and a hook rewrites it several times per turn
                atomic_write(self.path(session_id), text, durable=False)

    def prune(self, *, max_age_days: float = STATE_MAX_AGE_DAYS, now: float | None = None) -> int:
        """Delete state (and lock) files of sessions idle for ``max_age_days``; how many."""
        cutoff = (time.time() if now is None else now) - max_age_days * 86400
        removed = 0
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return 0
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.name.endswith(".json") and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
                    for lock in self.root.glob(f"{entry.name[:-5]}.*.lock"):
                        lock.unlink()
        return removed
