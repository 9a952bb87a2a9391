"""The compaction ladder, run before each model call: microcompact → session memory → full.

Invariants:

* :meth:`Compactor.maybe_compact` never raises for anything a compaction can fail at: a failure
  is reported (``report.error``) and the messages come back as they were (microcompacted at
  most). After :data:`MAX_FAILURES` consecutive failures the breaker opens and autocompaction is
  not tried again in this session (a forced compaction still is).
* The side queries a compaction makes (the summary, a notes update) call the provider directly,
  never through a Compactor, so a compaction cannot trigger another (the recursion guard).
* On success the transcript gets the boundary and summary entries appended (so a resumed session
  sees what the model saw), the recall session's byte budget is reset (the old attachments left
  the context) and session memory counts growth from the new size.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from memdir.errors import CompactionError
from memdir.llm.base import Provider
from memdir.recall.session import RecallSession
from memdir.session.convert import append_compaction
from memdir.session.memory import SessionMemory
from memdir.session.messages import ChatMessage
from memdir.session.microcompact import KEEP_RECENT, microcompact, time_triggered
from memdir.session.sm_compact import Compaction, session_memory_compact
from memdir.session.tokens import MAX_OUTPUT_RESERVE, Window, estimate_tokens
from memdir.transcripts import Transcript

log = logging.getLogger(__name__)
MAX_FAILURES = 3


@dataclass
class CompactReport:
    """What one :meth:`Compactor.maybe_compact` call did."""

    rung: str  # none | microcompact | session_memory | full | failed | breaker_open
    context_window: int
    threshold: int
    tokens_before: int
    tokens_after: int
    cleared_results: int = 0
    kept_messages: int = 0
    kept_from_uuid: str | None = None
    summarized_messages: int = 0
    retries: int = 0
    fallback_reason: str | None = None
    error: str | None = None
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CompactResult:
    messages: list[ChatMessage]
    report: CompactReport

    @property
    def compacted(self) -> bool:
        return self.report.rung in ("session_memory", "full")


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class Compactor:
    """One session's compaction ladder (see the module docstring)."""

    def __init__(
        self,
        *,
        session_memory: SessionMemory | None = None,
        provider: Provider | None = None,
        transcript: Transcript | None = None,
        recall_session: RecallSession | None = None,
        max_output_tokens: int = MAX_OUTPUT_RESERVE,
        keep_recent_results: int = KEEP_RECENT,
        reattach_files: bool = True,
        max_failures: int = MAX_FAILURES,
        now: Callable[[], dt.datetime] = _utcnow,
    ) -> None:
        self.session_memory = session_memory
        self.provider = provider
        self.transcript = transcript
        self.recall_session = recall_session
        self.max_output_tokens = max_output_tokens
        self.keep_recent_results = keep_recent_results
        self.reattach_files = reattach_files
        self.max_failures = max_failures
        self.failures = 0
        self._now = now

    @property
    def breaker_open(self) -> bool:
        return self.failures >= self.max_failures

    async def maybe_compact(
        self,
        messages: Sequence[ChatMessage],
        context_window: int,
        *,
        force: bool = False,
        usage_tokens: int | None = None,
    ) -> CompactResult:
        """Compact if needed (or ``force``); ``usage_tokens`` is the provider's count if known."""
        started = time.monotonic()
        window = Window(context_window, self.max_output_tokens)
        current = list(messages)
        tokens = usage_tokens if usage_tokens is not None else estimate_tokens(current)
        report = CompactReport("none", context_window, window.threshold, tokens, tokens)
        if force or window.over(tokens) or time_triggered(current, self._now()):
            mc = microcompact(current, keep_recent=self.keep_recent_results)
            if mc.cleared:
                current = mc.messages
                tokens = max(0, tokens - mc.tokens_saved)
                report.rung, report.cleared_results, report.tokens_after = (
                    "microcompact",
                    mc.cleared,
                    tokens,
                )
        if not force and not window.over(tokens):
            return self._done(current, report, started)
        if self.breaker_open and not force:
            report.rung = "breaker_open" if not report.cleared_results else report.rung
            report.error = f"autocompaction stopped after {self.failures} consecutive failures"
            return self._done(current, report, started)
        try:
            compaction = await self._autocompact(current, window, report, force=force)
        except CompactionError as exc:
            self.failures += 1
            report.rung, report.error = "failed", str(exc)
            log.warning("compaction failed (%d in a row): %s", self.failures, exc)
            return self._done(current, report, started)
        self.failures = 0
        await asyncio.to_thread(self._record, compaction)
        report.rung = compaction.rung
        report.tokens_after = compaction.tokens_after
        report.kept_messages = len(compaction.kept)
        report.kept_from_uuid = compaction.kept[0].uuid if compaction.kept else None
        report.summarized_messages = compaction.summarized
        report.retries = compaction.retries
        return self._done(compaction.messages, report, started)

    async def _autocompact(
        self, messages: list[ChatMessage], window: Window, report: CompactReport, *, force: bool
    ) -> Compaction:
        trigger = "manual" if force else "auto"
        transcript_path = self.transcript.path if self.transcript else None
        sm = self.session_memory
        if sm is not None:
            if sm.updater.cursor_at_end:  # offline notes are cheap: bring them fully up to date
                await sm.wait_for_update()
                outcome = await sm.update_now(messages)
                if not outcome.ok:
                    report.notes.append(f"notes update failed: {outcome.error}")
            elif not await sm.wait_for_update():
                report.notes.append("a notes update was still running; used the notes as they are")
            compaction = await asyncio.to_thread(
                session_memory_compact,
                messages,
                notes_text=sm.notes_text(),
                template=sm.template,
                last_summarized_id=sm.last_summarized_id,
                window=window,
                notes_path=sm.path,
                transcript_path=transcript_path,
                trigger=trigger,
            )
            if compaction is not None:
                return compaction
            report.fallback_reason = _why_not(sm, messages)
        else:
            report.fallback_reason = "no session memory"
        if self.provider is None:
            raise CompactionError(
                f"session-memory compaction not possible ({report.fallback_reason}) and no model "
                "is configured for a full compaction"
            )
        from memdir.session.full_compact import full_compact

        return await full_compact(
            messages,
            self.provider,
            window=window,
            transcript_path=transcript_path,
            reattach_files=self.reattach_files,
            trigger=trigger,
        )

    def _record(self, compaction: Compaction) -> None:
        if self.transcript is not None:
            try:
                append_compaction(
                    self.transcript, compaction.boundary, compaction.added, kept=compaction.kept
                )
            except OSError as exc:  # the compaction itself stands; resuming will not see it
                log.warning("could not append the compaction to %s: %s", self.transcript.path, exc)
        if self.recall_session is not None:
            self.recall_session.reset_budget()
        if self.session_memory is not None:
            self.session_memory.note_compacted(compaction.tokens_after)

    def _done(
        self, messages: list[ChatMessage], report: CompactReport, started: float
    ) -> CompactResult:
        report.elapsed_s = round(time.monotonic() - started, 4)
        return CompactResult(messages, report)


def _why_not(sm: SessionMemory, messages: Sequence[ChatMessage]) -> str:
    text = sm.notes_text()
    if text is None:
        return "no notes file"
    if text.strip() == sm.template.strip():
        return "the notes are still the empty template"
    cursor = sm.last_summarized_id
    if cursor is not None and all(m.uuid != cursor for m in messages):
        return "the last summarised message is no longer in the conversation"
    return "the notes plus the kept messages would still be over the threshold"
