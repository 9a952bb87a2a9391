"""Which recent messages a session-memory compaction keeps verbatim (reference §6).

The kept range is always a suffix ``messages[start:]``. Invariants on the result, both of which
the API enforces and Hypothesis checks:

1. every tool_result kept has its tool_use kept (and, as the range is a suffix and results follow
   their calls, every tool_use kept has its result kept when one exists);
2. no assistant reply is split: all pieces sharing one provider message id are kept, or none
   (a thinking block separated from the text it belongs to is rejected by the API).

The walk never moves ``start`` before the last compact boundary: what precedes it was already
summarised, and is not in front of the model any more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memdir.session.messages import ChatMessage
from memdir.session.tokens import Window, message_tokens

MIN_TOKENS = 10_000
MIN_TEXT_MESSAGES = 5
MAX_TOKENS = 40_000


@dataclass(frozen=True)
class KeepConfig:
    min_tokens: int = MIN_TOKENS
    min_text_messages: int = MIN_TEXT_MESSAGES
    max_tokens: int = MAX_TOKENS

    @classmethod
    def for_window(cls, window: Window) -> KeepConfig:
        """The reference's numbers, scaled down when the window is too small to hold them.

        The kept messages may take at most 40% of the autocompact threshold, so that the notes
        (which take at most another 40%) and the kept range together stay under it.
        """
        cap = int(window.threshold * 0.4)
        max_tokens = max(1, min(MAX_TOKENS, cap))
        min_tokens = min(MIN_TOKENS, max_tokens // 2)
        return cls(min_tokens=min_tokens, max_tokens=max_tokens)


def last_boundary_index(messages: Sequence[ChatMessage]) -> int:
    """Index of the last compact boundary, -1 if none."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].is_boundary:
            return i
    return -1


def messages_to_keep_index(
    messages: Sequence[ChatMessage], last_summarized_index: int, config: KeepConfig
) -> int:
    """The start of the kept suffix: :func:`walk_start`, then widened until both invariants
    hold (:func:`preserve_invariants`)."""
    if not messages:
        return 0
    return preserve_invariants(messages, walk_start(messages, last_summarized_index, config))


def walk_start(
    messages: Sequence[ChatMessage], last_summarized_index: int, config: KeepConfig
) -> int:
    """Start right after the last summarised message (at the end when there is none); if that
    range already holds ``max_tokens`` or meets both minimums, keep exactly it. Otherwise walk
    backwards, never past the last compact boundary, until the range reaches ``max_tokens`` or
    meets both minimums."""
    start = last_summarized_index + 1 if last_summarized_index >= 0 else len(messages)
    start = min(max(start, 0), len(messages))
    floor = last_boundary_index(messages) + 1
    start = max(start, floor)
    total = sum(message_tokens(m) for m in messages[start:])
    texts = sum(1 for m in messages[start:] if m.has_text)

    def enough() -> bool:
        if total >= config.max_tokens:
            return True
        return total >= config.min_tokens and texts >= config.min_text_messages

    if not enough():
        for i in range(start - 1, floor - 1, -1):
            total += message_tokens(messages[i])
            texts += 1 if messages[i].has_text else 0
            start = i
            if enough():
                break
    return start


def preserve_invariants(messages: Sequence[ChatMessage], start: int) -> int:
    """Move ``start`` back until no kept tool_result lacks its tool_use and no reply is split.

    Repeated to a fixed point: widening for one invariant can pull in a piece that needs the
    other. Each round only moves ``start`` backwards, so it terminates.
    """
    while True:
        moved = _include_tool_uses(messages, start)
        moved = _include_split_replies(messages, moved)
        if moved == start:
            return start
        start = moved


def _include_tool_uses(messages: Sequence[ChatMessage], start: int) -> int:
    kept = messages[start:]
    have = {t for m in kept for t in m.tool_use_ids}
    needed = {r for m in kept for r in m.tool_result_ids} - have
    if not needed:
        return start
    for i in range(start - 1, -1, -1):
        found = needed & set(messages[i].tool_use_ids)
        if found:
            start = i
            needed -= found
            if not needed:
                break
    return start


def _include_split_replies(messages: Sequence[ChatMessage], start: int) -> int:
    ids = {m.message_id for m in messages[start:] if m.role == "assistant" and m.message_id}
    if not ids:
        return start
    for i in range(start - 1, -1, -1):
        m = messages[i]
        if m.role == "assistant" and m.message_id in ids:
            start = i
    return start


def invariant_problems(kept: Sequence[ChatMessage], dropped: Sequence[ChatMessage]) -> list[str]:
    """Both invariants, checked on a split into ``dropped`` + ``kept`` (for tests and asserts)."""
    problems: list[str] = []
    uses = {t for m in kept for t in m.tool_use_ids}
    results = {r for m in kept for r in m.tool_result_ids}
    dropped_uses = {t for m in dropped for t in m.tool_use_ids}
    dropped_results = {r for m in dropped for r in m.tool_result_ids}
    for rid in sorted(results - uses):
        if rid in dropped_uses:
            problems.append(f"tool_result {rid} kept without its tool_use")
    for tid in sorted(uses - results):
        if tid in dropped_results:
            problems.append(f"tool_use {tid} kept without its tool_result")
    kept_ids = {m.message_id for m in kept if m.role == "assistant" and m.message_id}
    dropped_ids = {m.message_id for m in dropped if m.role == "assistant" and m.message_id}
    for mid in sorted(kept_ids & dropped_ids):
        problems.append(f"assistant reply {mid} split across the boundary")
    return problems
