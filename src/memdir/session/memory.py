"""Session memory: when to update the notes, one update at a time, in the background.

Invariants (reference §6):

* The first update runs once the conversation reaches ``init_tokens``; later ones when it grew by
  ``update_tokens`` since the last update AND (``tool_calls`` tool calls happened since then OR the
  last assistant turn made no tool call).
* Single flight: :meth:`SessionMemory.maybe_update` starts at most one background update and
  never blocks or raises. A compaction calls :meth:`wait_for_update`, which polls every second and
  gives up after 15 s; an update running for more than 60 s counts as stale and is not waited for.
* ``last_summarized_id`` (where session-memory compaction may cut) moves only when the last
  assistant turn had no tool call; the offline updater, which covers every message it read,
  moves it to the last message (``cursor_at_end``).
* The cursor and token counts live in ``state.json`` beside the notes (written atomically), so a
  CLI command or a hook can continue where the runtime stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from memdir.atomic import atomic_write
from memdir.session.messages import ChatMessage
from memdir.session.notes import (
    SECTION_MAX_TOKENS,
    TOTAL_MAX_TOKENS,
    builtin_template,
    cap_instruction,
    create_exclusive,
    parse_notes,
    read_notes,
)
from memdir.session.tokens import estimate_tokens

log = logging.getLogger(__name__)
STATE_NAME = "state.json"


@dataclass(frozen=True)
class SessionMemoryConfig:
    init_tokens: int = 10_000
    update_tokens: int = 5_000
    tool_calls: int = 3
    section_tokens: int = SECTION_MAX_TOKENS
    total_tokens: int = TOTAL_MAX_TOKENS
    poll_seconds: float = 1.0
    wait_seconds: float = 15.0
    stale_seconds: float = 60.0


@dataclass
class UpdateOutcome:
    """What one notes update did. ``rolled_back``: the updater broke the structure and the
    previous notes were put back (``error`` says why)."""

    ok: bool
    updater: str
    changed: bool = False
    rolled_back: bool = False
    error: str | None = None
    notes_tokens: int = 0
    elapsed_s: float = 0.0
    messages_covered: int = 0


class NotesUpdater(Protocol):
    name: str
    cursor_at_end: bool

    async def update(
        self,
        path: Path,
        *,
        current: str,
        template: str,
        messages: Sequence[ChatMessage],
        new_messages: Sequence[ChatMessage],
        instruction_extra: str,
    ) -> UpdateOutcome: ...


@dataclass
class SessionState:
    last_summarized_id: str | None = None
    processed_id: str | None = None
    tokens_at_last_update: int | None = None
    updates: int = 0
    updated_at: float | None = None

    @classmethod
    def load(cls, path: Path) -> SessionState:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(raw, dict):
            return cls()
        state = cls()
        for key in ("last_summarized_id", "processed_id"):
            if isinstance(raw.get(key), str):
                setattr(state, key, raw[key])
        tokens = raw.get("tokens_at_last_update")
        state.tokens_at_last_update = tokens if isinstance(tokens, int) else None
        state.updates = raw["updates"] if isinstance(raw.get("updates"), int) else 0
        stamp = raw.get("updated_at")
        state.updated_at = float(stamp) if isinstance(stamp, int | float) else None
        return state

    def save(self, path: Path) -> None:
        atomic_write(path, json.dumps(asdict(self), indent=2) + "\n")


def last_turn_had_tool_call(messages: Sequence[ChatMessage]) -> bool:
    """Did the last assistant reply (all its pieces) call a tool?"""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role == "assistant":
            pieces = [x for x in messages if x.role == "assistant" and x.message_id == m.message_id]
            return any(p.tool_uses for p in (pieces if m.message_id else [m]))
    return False


def messages_after(messages: Sequence[ChatMessage], uuid: str | None) -> Sequence[ChatMessage]:
    """Messages after the one with ``uuid``; if it is gone (compacted away), those after the last
    compact boundary (the summary there already holds what came before)."""
    if uuid is not None:
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].uuid == uuid:
                return messages[i + 1 :]
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].is_boundary:
            return messages[i + 1 :]
    return messages


class SessionMemory:
    """The notes of one session and the single-flight updates that keep them current."""

    def __init__(
        self,
        notes_path: Path,
        updater: NotesUpdater,
        *,
        config: SessionMemoryConfig | None = None,
        template: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = notes_path
        self.updater = updater
        self.config = config or SessionMemoryConfig()
        self.template = template or builtin_template()
        self.state_path = notes_path.with_name(STATE_NAME)
        self.state = SessionState.load(self.state_path)
        self.last_outcome: UpdateOutcome | None = None
        self._clock = clock
        self._task: asyncio.Task[UpdateOutcome] | None = None
        self._started: float = 0.0

    # -- state ------------------------------------------------------------------------------

    @property
    def last_summarized_id(self) -> str | None:
        return self.state.last_summarized_id

    @property
    def in_progress(self) -> bool:
        return self._task is not None and not self._task.done()

    def notes_text(self) -> str | None:
        return read_notes(self.path)

    def has_content(self) -> bool:
        """True when the notes exist and say more than the empty template."""
        text = self.notes_text()
        return text is not None and text.strip() != self.template.strip()

    def note_compacted(self, tokens_after: int) -> None:
        """After a compaction the conversation is shorter: growth counts from its new size."""
        self.state.tokens_at_last_update = tokens_after
        self._save_state()

    def status(self) -> dict[str, Any]:
        text = self.notes_text()
        notes = parse_notes(text) if text is not None else None
        return {
            "notes_path": str(self.path),
            "exists": text is not None,
            "intact": notes.intact if notes else None,
            "notes_tokens": notes.total_tokens if notes else 0,
            "oversized_sections": notes.oversized(self.config.section_tokens) if notes else [],
            "updater": self.updater.name,
            "in_progress": self.in_progress,
            **asdict(self.state),
            "last_error": self.last_outcome.error if self.last_outcome else None,
        }

    # -- thresholds ---------------------------------------------------------------------------

    def should_update(self, messages: Sequence[ChatMessage], *, tokens: int | None = None) -> bool:
        current = estimate_tokens(messages) if tokens is None else tokens
        if self.state.tokens_at_last_update is None:
            return current >= self.config.init_tokens
        if current - self.state.tokens_at_last_update < self.config.update_tokens:
            return False
        new = messages_after(messages, self.state.processed_id)
        calls = sum(len(m.tool_uses) for m in new if m.role == "assistant")
        return calls >= self.config.tool_calls or not last_turn_had_tool_call(messages)

    # -- running --------------------------------------------------------------------------------

    def maybe_update(self, messages: Sequence[ChatMessage], *, tokens: int | None = None) -> bool:
        """Start a background update if the thresholds are met and none is running."""
        if self.in_progress or not messages:
            return False
        try:
            if not self.should_update(messages, tokens=tokens):
                return False
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False  # no event loop: the caller should use update_now
        except Exception:  # a threshold check must never break the turn
            log.exception("session memory threshold check failed")
            return False
        self._started = self._clock()
        self._task = loop.create_task(self.update_now(list(messages)), name="memdir-session-memory")
        return True

    async def wait_for_update(self, timeout: float | None = None) -> bool:
        """Wait (polling) for an in-flight update; False if it is still running afterwards."""
        limit = self.config.wait_seconds if timeout is None else timeout
        deadline = self._clock() + limit
        while self.in_progress:
            if self._clock() - self._started > self.config.stale_seconds:
                log.warning(
                    "session memory update running for over %ss; not waiting for it",
                    self.config.stale_seconds,
                )
                return False
            remaining = deadline - self._clock()
            if remaining <= 0:
                return False
            task = self._task
            assert task is not None
            await asyncio.wait({task}, timeout=min(self.config.poll_seconds, remaining))
        return True

    async def drain(self, timeout: float = 60.0) -> bool:
        task = self._task
        if task is None or task.done():
            return True
        done, _ = await asyncio.wait({task}, timeout=timeout)
        return bool(done)

    async def cancel(self) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def update_now(self, messages: Sequence[ChatMessage]) -> UpdateOutcome:
        """Run one update over ``messages`` now (the background task runs exactly this)."""
        started = time.monotonic()
        try:
            outcome = await self._update(messages)
        except Exception as exc:  # a background failure is reported, never raised into the turn
            log.warning("session memory update failed: %s", exc)
            outcome = UpdateOutcome(ok=False, updater=self.updater.name, error=str(exc))
        outcome.elapsed_s = round(time.monotonic() - started, 3)
        self.last_outcome = outcome
        return outcome

    async def _update(self, messages: Sequence[ChatMessage]) -> UpdateOutcome:
        await asyncio.to_thread(create_exclusive, self.path, self.template)
        current = await asyncio.to_thread(self.notes_text) or self.template
        notes = parse_notes(current)
        extra = cap_instruction(
            notes, per_section=self.config.section_tokens, total=self.config.total_tokens
        )
        new = messages_after(messages, self.state.processed_id)
        outcome = await self.updater.update(
            self.path,
            current=current,
            template=self.template,
            messages=messages,
            new_messages=new,
            instruction_extra=extra,
        )
        outcome.messages_covered = len(new)
        if outcome.ok and messages:
            last = messages[-1].uuid
            self.state.processed_id = last
            if self.updater.cursor_at_end or not last_turn_had_tool_call(messages):
                self.state.last_summarized_id = last
            self.state.tokens_at_last_update = estimate_tokens(messages)
            self.state.updates += 1
            self.state.updated_at = time.time()
            await asyncio.to_thread(self._save_state)
        return outcome

    def _save_state(self) -> None:
        try:
            self.state.save(self.state_path)
        except OSError as exc:
            log.warning("could not save session memory state %s: %s", self.state_path, exc)
