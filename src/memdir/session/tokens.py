"""Token accounting for the compaction ladder (reference §6b).

Invariant: the estimate is a pure function of the messages — characters / 4 for text, thinking
and tool results; a tool_use counts its name plus its JSON input; an image or document a fixed
2,000; and the whole padded by 4/3, because the estimate must err on the side of compacting too
early rather than sending a request the provider rejects. Providers' usage figures, when known,
are better and the caller may pass them instead.

:class:`Window` turns a model's context window into the thresholds the ladder acts on. At the
windows the reference targets (≥ 100k tokens) they are the reference's numbers; small windows
(local models, tests, the 40k benchmark) scale the reserve and the buffer so that a compacted
conversation still fits (see ``docs/session.md``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memdir.session.messages import ChatMessage, result_text

IMAGE_TOKENS = 2_000
PADDING = 4 / 3
MAX_OUTPUT_RESERVE = 20_000
AUTOCOMPACT_BUFFER = 13_000
WARNING_BUFFER = 20_000


def text_tokens(text: str) -> int:
    """Characters / 4, rounded (the reference's rough count, used for caps)."""
    return round(len(text) / 4)


def _block_chars(block: Mapping[str, Any]) -> float:
    kind = block.get("type")
    if kind == "text":
        return len(str(block.get("text", "")))
    if kind == "thinking":
        return len(str(block.get("thinking", "")))
    if kind == "redacted_thinking":
        return len(str(block.get("data", "")))
    if kind == "tool_use":
        payload = json.dumps(block.get("input", {}), ensure_ascii=False, default=str)
        return len(str(block.get("name", ""))) + len(payload)
    if kind == "tool_result":
        content = block.get("content")
        chars = float(len(result_text(content)))
        if isinstance(content, list):
            media = sum(1 for b in content if isinstance(b, Mapping) and b.get("type") in _MEDIA)
            chars += media * (IMAGE_TOKENS * 4 - len("[image]"))
        return chars
    if kind in _MEDIA:
        return IMAGE_TOKENS * 4
    return len(json.dumps(block, ensure_ascii=False, default=str))


_MEDIA = ("image", "document")


def raw_tokens(blocks: Iterable[Mapping[str, Any]]) -> float:
    return sum(_block_chars(b) for b in blocks) / 4


def message_tokens(message: ChatMessage) -> int:
    """One message's padded estimate (what the keep-index walk sums)."""
    return math.ceil(raw_tokens(message.content) * PADDING)


def estimate_tokens(messages: Sequence[ChatMessage]) -> int:
    """The padded estimate of a whole conversation (boundaries count nothing)."""
    return math.ceil(sum(raw_tokens(m.content) for m in messages) * PADDING)


@dataclass(frozen=True)
class Window:
    """Thresholds for one model: when to compact and what must fit afterwards."""

    context_window: int
    max_output_tokens: int = MAX_OUTPUT_RESERVE

    @property
    def reserve(self) -> int:
        """Tokens kept free for the model's reply (and the summary a compaction writes)."""
        return min(self.max_output_tokens, MAX_OUTPUT_RESERVE, self.context_window // 5)

    @property
    def effective(self) -> int:
        return max(0, self.context_window - self.reserve)

    @property
    def buffer(self) -> int:
        return min(AUTOCOMPACT_BUFFER, self.context_window // 10)

    @property
    def threshold(self) -> int:
        """Autocompact fires at or above this many tokens."""
        return max(1, self.effective - self.buffer)

    @property
    def warning(self) -> int:
        return max(0, self.threshold - min(WARNING_BUFFER, self.context_window // 10))

    def over(self, tokens: int) -> bool:
        return tokens >= self.threshold
