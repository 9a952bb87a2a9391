"""Learn from past sessions: each planned transcript, whole, through the extraction write path.

Invariants:

* Every memory is written by the :class:`~memdir.extract.base.Extractor` the entry point hands
  in — the rule extractor, or the model agent with the rules beside it — so a lesson seen in ten
  sessions goes through the one notion of "the same memory" (:mod:`memdir.sameness`) ten times
  and ends as one memory with ten sightings, never ten files.
* A transcript is marked done in the cursor only after its extraction succeeded, and the cursor
  is written (atomically) before the next transcript starts: an interrupted backfill resumes at
  the first transcript not finished. A stop request (the entry point's signal handler) is
  honoured *between* transcripts, so one is never half learnt.
* A session memdir's own hooks already extracted from (the entry point's ``covered``: the last
  message their cursor passed) counts as learnt up to there, so installing memdir and then
  backfilling never pays a model twice for the same turns.
* A transcript that cannot be read (a FIFO, a link out of the host's dirs, not a transcript) is
  reported in one line and recorded as skipped for its current size and time; a failed
  extraction is reported and left for the next run.
* A session is learnt *as of its own time* (its newest message's timestamp, else the file's
  modification time): the extractor is made for that moment, so a sighting is dated the day the
  user said it and "next Friday" in a session from March means March's Friday.
* No block of a message is longer than :data:`MAX_BLOCK_CHARS` when extraction reads it: past
  that it is pasted text (a log, a file), and a hostile 50 MB line must cost seconds, not an hour.
* The model sees at most :data:`~memdir.backfill.cost.MODEL_WINDOW_CHARS` of a session's newest
  messages (what the cost estimate assumed); the offline rules read all of it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memdir.backfill.cursor import BackfillCursor, Done, file_stamp
from memdir.backfill.plan import Item, Plan, TranscriptSource
from memdir.errors import BudgetExhaustedError, MemdirError
from memdir.extract.base import Extractor, Turn
from memdir.extract.service import messages_since
from memdir.extract.transcript import turns_from_entries
from memdir.llm.base import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock

MAX_BLOCK_CHARS = 64_000


@dataclass(frozen=True, slots=True)
class Outcome:
    item: Item
    status: str  # "learnt", "nothing new", "skipped", "failed"
    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    reason: str | None = None  # why skipped or failed; the offline fallback's note when learnt


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    stopped: str | None = None  # why the run ended before the plan did

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)


Progress = Callable[[int, int, Outcome], None]  # (number done, of total, what happened)
ExtractorFor = Callable[[dt.datetime], Extractor]  # the extractor for a session of that time


class Backfill:
    """Runs a :class:`~memdir.backfill.plan.Plan` with one extractor."""

    def __init__(
        self,
        extractor_for: ExtractorFor,
        cursor: BackfillCursor,
        sources: Sequence[TranscriptSource],
        *,
        include_meta: bool = False,
        window_chars: int | None = None,
        should_stop: Callable[[], bool] = lambda: False,
        check_budget: Callable[[], object] | None = None,
        on_progress: Progress | None = None,
        covered: Callable[[Item], str | None] = lambda item: None,
    ) -> None:
        self.extractor_for = extractor_for
        self.cursor = cursor
        self.sources: Mapping[str, TranscriptSource] = {s.host: s for s in sources}
        self.include_meta = include_meta
        self.window_chars = window_chars
        self.should_stop = should_stop
        self.check_budget = check_budget
        self.on_progress = on_progress
        self.covered = covered

    async def run(self, plan: Plan) -> Report:
        report = Report()
        for number, item in enumerate(plan.items, start=1):
            if self.should_stop():
                report.stopped = "interrupted"
                break
            if self.check_budget is not None:
                try:
                    self.check_budget()
                except BudgetExhaustedError as exc:
                    report.stopped = str(exc)
                    break
            outcome = await self._one(item)
            report.outcomes.append(outcome)
            if self.on_progress is not None:
                self.on_progress(number, len(plan.items), outcome)
        return report

    async def _one(self, item: Item) -> Outcome:
        try:
            size, mtime_ns = file_stamp(item.path)
            entries = self.sources[item.host].read(item.path)
        except (MemdirError, OSError, ValueError) as exc:
            why = _one_line(exc)
            self._mark(item, item.size, item.mtime_ns, None, f"skipped: {why}")
            return Outcome(item, "skipped", reason=why)
        turns = turns_from_entries(entries, include_meta=self.include_meta)
        previous = self.cursor.get(item.path)
        since = previous.last_uuid if previous else self.covered(item)
        new = messages_since(turns, since)
        if not new:
            self._mark(item, size, mtime_ns, since, "learnt")
            return Outcome(item, "nothing new")
        messages = _window([_bounded(t.message) for t in turns], self.window_chars)
        extractor = self.extractor_for(_session_time(entries, item))
        try:
            result = await extractor.extract(messages, new_messages=min(len(new), len(messages)))
        except (MemdirError, OSError) as exc:
            return Outcome(item, "failed", reason=_one_line(exc))
        if not result.ok:
            return Outcome(item, "failed", reason=result.error or "extraction failed")
        self._mark(item, size, mtime_ns, _last_uuid(turns), "learnt", len(result.written))
        return Outcome(item, "learnt", result.written, result.removed, reason=result.fallback)

    def _mark(
        self, item: Item, size: int, mtime_ns: int, last: str | None, status: str, written: int = 0
    ) -> None:
        self.cursor.mark(item.path, Done(item.host, size, mtime_ns, last, status, written))


def _session_time(entries: Sequence[Mapping[str, object]], item: Item) -> dt.datetime:
    for entry in reversed(entries):
        stamp = entry.get("timestamp")
        if isinstance(stamp, str) and stamp:
            try:
                moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
            except ValueError:
                continue
            if moment.tzinfo is not None:
                return moment.astimezone()
    return item.modified


def _last_uuid(turns: Sequence[Turn]) -> str | None:
    return turns[-1].uuid if turns else None


def _bounded(message: Message) -> Message:
    """``message`` with every text and tool result cut to :data:`MAX_BLOCK_CHARS` (its head)."""
    blocks = message.blocks
    if not any(_long(b) for b in blocks):
        return message
    cut: list[Block] = []
    for block in blocks:
        if isinstance(block, TextBlock) and _long(block):
            block = TextBlock(block.text[:MAX_BLOCK_CHARS])
        elif isinstance(block, ToolResultBlock) and _long(block):
            block = ToolResultBlock(
                block.tool_use_id, block.content[:MAX_BLOCK_CHARS], block.is_error
            )
        cut.append(block)
    return Message(message.role, cut)


def _long(block: Block) -> bool:
    if isinstance(block, TextBlock):
        return len(block.text) > MAX_BLOCK_CHARS
    return isinstance(block, ToolResultBlock) and len(block.content) > MAX_BLOCK_CHARS


def _chars(message: Message) -> int:
    total = 0
    for block in message.blocks:
        if isinstance(block, TextBlock):
            total += len(block.text)
        elif isinstance(block, ToolResultBlock):
            total += len(block.content)
        elif isinstance(block, ToolUseBlock):
            total += len(json.dumps(block.input, ensure_ascii=False, default=str))
    return total


def _window(messages: list[Message], limit: int | None) -> list[Message]:
    """The newest messages within ``limit`` characters, starting at a user's own words (a window
    opening on a tool result would orphan it from its call)."""
    if limit is None:
        return messages
    total, start = 0, len(messages)
    while start > 0 and total + _chars(messages[start - 1]) <= limit:
        start -= 1
        total += _chars(messages[start])
    while start < len(messages) and not _opens(messages[start]):
        start += 1
    if start == len(messages) and messages:  # one message larger than the window: its tail
        last = messages[-1]
        return [Message(last.role, [TextBlock(last.text[-limit:])])] if last.text else []
    return messages[start:]


def _opens(message: Message) -> bool:
    return message.role == "user" and any(isinstance(b, TextBlock) for b in message.blocks)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


__all__ = ["Backfill", "ExtractorFor", "Outcome", "Progress", "Report"]
