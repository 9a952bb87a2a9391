"""Session-memory compaction: the notes replace the old messages, recent ones stay verbatim.

Reference §6. Returns ``None`` (the caller falls back to the full summarising compaction) when
there are no notes, the notes are still the empty template, the summarised message is no longer
in the conversation, or the result would still be over the autocompact threshold. Otherwise the
result is: a compact boundary, one user message holding the notes (each section cut at a line
boundary to fit the budget, with a pointer to the full file when anything was cut) and the kept
suffix chosen by :func:`memdir.session.keep.messages_to_keep_index`, without older boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memdir.session.keep import KeepConfig, messages_to_keep_index
from memdir.session.messages import ChatMessage
from memdir.session.notes import cut_at_line, parse_notes, section_budget
from memdir.session.tokens import Window, estimate_tokens

SECTION_CHARS = 8_000
NOTES_SHARE = 0.4  # of the autocompact threshold

CONTINUATION = (
    "This session continues an earlier conversation that grew too long for the context window. "
    "The earlier part is summarised below by the session notes; the most recent messages follow "
    "unchanged."
)
RESUME = "Carry on from where the conversation stopped, without asking the user to repeat anything."


@dataclass
class Compaction:
    """A compacted conversation and what it took to make it."""

    rung: str
    messages: list[ChatMessage]
    boundary: ChatMessage
    added: list[ChatMessage]  # summary (+ re-attached files): what a transcript must append
    kept: list[ChatMessage]
    summarized: int
    tokens_before: int
    tokens_after: int
    retries: int = 0
    notes: list[str] = field(default_factory=list)


def notes_summary(
    notes_text: str,
    *,
    budget_tokens: int,
    notes_path: Path | None,
    transcript_path: Path | None,
) -> str:
    """The notes as a continuation message, cut to ``budget_tokens``."""
    notes = parse_notes(notes_text)
    budget = max(400, budget_tokens * 4)
    if notes.sections:
        bodies = section_budget(notes.sections, budget, SECTION_CHARS)
        cut = any(b != s.body for b, s in zip(bodies, notes.sections, strict=True))
        parts = [f"# {s.name}\n{b}" for s, b in zip(notes.sections, bodies, strict=True) if b]
        body = "\n\n".join(parts)
    else:  # hand-edited into no sections at all: one block
        body = cut_at_line(notes_text.strip(), budget)
        cut = body != notes_text.strip()
    lines = [CONTINUATION, "", "<session-notes>", body, "</session-notes>", ""]
    if cut and notes_path is not None:
        lines.append(f"Some sections were shortened here; the full notes are in {notes_path}.")
    if transcript_path is not None:
        lines.append(
            "Exact earlier details (code, error text, tool output) can be read from the full "
            f"transcript at {transcript_path}."
        )
    lines.append(RESUME)
    return "\n".join(lines)


def session_memory_compact(
    messages: Sequence[ChatMessage],
    *,
    notes_text: str | None,
    template: str,
    last_summarized_id: str | None,
    window: Window,
    keep: KeepConfig | None = None,
    notes_path: Path | None = None,
    transcript_path: Path | None = None,
    trigger: str = "auto",
) -> Compaction | None:
    """See the module docstring; ``None`` means "fall back"."""
    if not messages or notes_text is None or notes_text.strip() == template.strip():
        return None
    if last_summarized_id is None:
        last_index = len(messages) - 1  # resumed without a cursor: keep nothing to begin with
    else:
        found = [i for i, m in enumerate(messages) if m.uuid == last_summarized_id]
        if not found:
            return None
        last_index = found[-1]
    config = keep or KeepConfig.for_window(window)
    start = messages_to_keep_index(messages, last_index, config)
    kept = [m for m in messages[start:] if not m.is_boundary]
    tokens_before = estimate_tokens(messages)
    summary = ChatMessage.user(
        notes_summary(
            notes_text,
            budget_tokens=int(window.threshold * NOTES_SHARE),
            notes_path=notes_path,
            transcript_path=transcript_path,
        ),
        kind="compact_summary",
        is_meta=True,
    )
    boundary = ChatMessage.boundary(pre_tokens=tokens_before, trigger=trigger)
    result = [boundary, summary, *kept]
    tokens_after = estimate_tokens(result)
    if window.over(tokens_after):
        return None
    return Compaction(
        rung="session_memory",
        messages=result,
        boundary=boundary,
        added=[summary],
        kept=kept,
        summarized=start,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
    )
