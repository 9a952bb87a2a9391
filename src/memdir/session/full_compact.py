"""The full summarising compaction: the configured model writes a 9-section summary.

Reference §6b. Invariants:

* The conversation goes to the model unchanged (a cacheable prefix), the instruction last; the
  model's analysis scratchpad is dropped and only the summary is kept.
* A request that is itself too long for the model (:class:`PromptTooLongError`) is retried at
  most :data:`MAX_RETRIES` times, each time without the oldest API-round groups (a user request
  with everything that answered it): enough to cover the gap the provider reported, or 20% of the
  groups when it did not say; a marker tells the model that part is missing.
* Any other failure raises :class:`CompactionError`; the conversation is never half-replaced.
* Afterwards up to 5 recently read files are re-attached from disk (≤ 5,000 tokens each, ≤ 50,000
  together, less when the window is small) so that work can continue.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

from memdir.errors import CompactionError, PromptTooLongError, ProviderError
from memdir.llm.base import CompletionRequest, Message, Provider, TextBlock
from memdir.pathsafe import read_regular
from memdir.session import facts
from memdir.session.messages import ChatMessage, to_llm_messages
from memdir.session.sm_compact import RESUME, Compaction
from memdir.session.tokens import Window, estimate_tokens, text_tokens

MAX_RETRIES = 3
SUMMARY_MAX_TOKENS = 20_000
REATTACH_FILES = 5
REATTACH_FILE_TOKENS = 5_000
REATTACH_TOTAL_TOKENS = 50_000
DROPPED_MARKER = "[The oldest part of this conversation was left out here to fit the request.]"

SYSTEM = (
    "You write precise summaries of working sessions between a user and an AI assistant, so that "
    "the assistant can continue the work from the summary alone. You do not call tools."
)

INSTRUCTION = """\
The conversation above is about to be replaced by a summary. Write that summary now.

First think it through inside <analysis> tags: go through the conversation in order and note
each request the user made, what was done about it, the decisions, the files and code involved,
the errors and how they were fixed, and everything the user said that corrects or constrains the
work. This analysis is discarded.

Then write the summary inside <summary> tags, with these sections:

1. Primary request and intent — everything the user asked for, in detail.
2. Key technical concepts — technologies, frameworks and ideas that matter here.
3. Files and code sections — each file read, changed or created, why it matters, and the
   important code, quoted exactly where it is short.
4. Errors and fixes — each error met and how it was resolved, including user feedback on it.
5. Problem solving — problems solved and any troubleshooting still going on.
6. All user messages — every message the user wrote that is not a tool result, briefly.
7. Pending tasks — what the user asked for that is not done yet.
8. Current work — exactly what was being worked on just before this summary, with file names
   and code.
9. Optional next step — only if it follows directly from the user's most recent explicit
   request; quote that request word for word. Leave it out if the last task was finished.
"""

_ANALYSIS = re.compile(r"<analysis>.*?(?:</analysis>|$)", re.DOTALL | re.IGNORECASE)
_SUMMARY = re.compile(r"<summary>(.*?)(?:</summary>|$)", re.DOTALL | re.IGNORECASE)


def extract_summary(text: str) -> str:
    """The summary without the scratchpad ('' if the model wrote nothing usable)."""
    match = _SUMMARY.search(text)
    body = match.group(1) if match else _ANALYSIS.sub("", text)
    return body.strip()


def round_groups(messages: Sequence[ChatMessage]) -> list[list[ChatMessage]]:
    """API-round groups: each starts at a user request; what precedes the first is group 0."""
    groups: list[list[ChatMessage]] = []
    for m in messages:
        if not groups or facts.is_request(m):
            groups.append([m])
        else:
            groups[-1].append(m)
    return groups


def drop_oldest_groups(
    messages: Sequence[ChatMessage], gap_tokens: int | None
) -> list[ChatMessage] | None:
    """The conversation without its oldest groups (None when nothing can be dropped)."""
    groups = round_groups(messages)
    if len(groups) < 2:
        return None
    if gap_tokens is None or gap_tokens <= 0:
        drop = max(1, math.ceil(len(groups) * 0.2))
    else:
        drop, covered = 0, 0
        while drop < len(groups) - 1 and covered < gap_tokens:
            covered += estimate_tokens(groups[drop])
            drop += 1
    drop = min(drop, len(groups) - 1)
    rest = [m for g in groups[drop:] for m in g]
    return [ChatMessage.user(DROPPED_MARKER, is_meta=True), *rest]


async def summarize(
    provider: Provider,
    messages: Sequence[ChatMessage],
    *,
    max_tokens: int = SUMMARY_MAX_TOKENS,
    max_retries: int = MAX_RETRIES,
) -> tuple[str, int]:
    """(summary, retries used)."""
    current = [m for m in messages if not m.is_boundary]
    retries = 0
    while True:
        prefix = to_llm_messages(current)
        request = CompletionRequest(
            system=SYSTEM,
            messages=_with_instruction(prefix),
            max_tokens=max_tokens,
            cache_prefix=True,
        )
        try:
            completion = await provider.complete(request)
        except PromptTooLongError as exc:
            shorter = drop_oldest_groups(current, exc.gap_tokens)
            if retries >= max_retries or shorter is None:
                raise CompactionError(
                    f"the conversation is too long to summarise even after {retries} retries"
                ) from exc
            current, retries = shorter, retries + 1
            continue
        except ProviderError as exc:
            raise CompactionError(f"the summary request failed: {exc}") from exc
        summary = extract_summary(completion.text)
        if not summary:
            raise CompactionError("the model returned no summary")
        return summary, retries


def _with_instruction(prefix: list[Message]) -> list[Message]:
    if prefix and prefix[-1].role == "user":
        last = prefix.pop()
        return [*prefix, Message("user", [*last.blocks, TextBlock(INSTRUCTION)])]
    return [*prefix, Message("user", INSTRUCTION)]


def summary_message(summary: str, transcript_path: Path | None) -> ChatMessage:
    lines = [
        "This session continues an earlier conversation that grew too long for the context "
        "window. A summary of that conversation follows.",
        "",
        summary,
        "",
    ]
    if transcript_path is not None:
        lines.append(
            "Exact earlier details (code, error text, tool output) can be read from the full "
            f"transcript at {transcript_path}."
        )
    lines.append(RESUME)
    return ChatMessage.user("\n".join(lines), kind="compact_summary", is_meta=True)


def recently_read(messages: Sequence[ChatMessage], limit: int = REATTACH_FILES) -> list[str]:
    """Absolute paths of files read with a tool, most recent first, unique."""
    found: list[str] = []
    for m in reversed(messages):
        if m.role != "assistant":
            continue
        for use in reversed(m.tool_uses):
            if facts.file_action(str(use.get("name", "")), use) != "read":
                continue
            path = facts.tool_path(use)
            if path and path.startswith("/") and path not in found:
                found.append(path)
                if len(found) >= limit:
                    return found
    return found


def reattach(paths: Sequence[str], *, per_file_tokens: int, total_tokens: int) -> list[ChatMessage]:
    """Current contents of ``paths`` as meta user messages, within both budgets."""
    out: list[ChatMessage] = []
    used = 0
    for raw in paths:
        path = Path(raw)
        try:
            if not path.is_file() or path.is_symlink():
                continue
            data = read_regular(path, limit=per_file_tokens * 4 + 1)
        except OSError:
            continue
        if b"\x00" in data:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        cut = len(text) > per_file_tokens * 4
        text = text[: per_file_tokens * 4]
        cost = text_tokens(text)
        if used + cost > total_tokens:
            break
        used += cost
        note = " (first part only)" if cut else ""
        out.append(
            ChatMessage.user(
                f"Re-attached after compaction: the current contents of {raw}{note}.\n"
                f"<file path={raw!r}>\n{text}\n</file>",
                is_meta=True,
            )
        )
    return out


async def full_compact(
    messages: Sequence[ChatMessage],
    provider: Provider,
    *,
    window: Window,
    transcript_path: Path | None = None,
    reattach_files: bool = True,
    trigger: str = "auto",
) -> Compaction:
    """Summarise the whole conversation with ``provider``; raises :class:`CompactionError`."""
    tokens_before = estimate_tokens(messages)
    summary_tokens = min(SUMMARY_MAX_TOKENS, window.reserve)
    summary, retries = await summarize(provider, messages, max_tokens=max(256, summary_tokens))
    added = [summary_message(summary, transcript_path)]
    if reattach_files:
        budget = min(REATTACH_TOTAL_TOKENS, int(window.threshold * 0.25))
        per_file = min(REATTACH_FILE_TOKENS, budget)
        added += reattach(recently_read(messages), per_file_tokens=per_file, total_tokens=budget)
    boundary = ChatMessage.boundary(pre_tokens=tokens_before, trigger=trigger)
    result = [boundary, *added]
    return Compaction(
        rung="full",
        messages=result,
        boundary=boundary,
        added=added,
        kept=[],
        summarized=len(messages),
        tokens_before=tokens_before,
        tokens_after=estimate_tokens(result),
        retries=retries,
    )
