"""The LLM selector: a small side query that picks which memories to surface for a query.

The model sees only the manifest (one line per memory: type, path, mtime, description) and answers
with ``{"selected_memories": [<path>, ...]}`` under a strict JSON schema. Invariants:

* Only filenames present in the given headers come back (a whitelist, so a hallucinated or
  mangled path can never be read), deduplicated, in the model's order, at most ``limit``.
* Recall is advisory and runs beside the agent's turn, so *every* failure — provider error,
  timeout, invalid JSON, wrong shape, even a bug in a fake — yields ``[]`` and a debug log line,
  never an exception into the turn.
* With ``constrain_names`` (automatic for providers that decode under a grammar, i.e. llama.cpp)
  the schema itself lists the filenames as an ``enum`` and caps the array at ``limit``. Small
  local models follow a grammar exactly but judge poorly: with the open ``string[]`` schema,
  SmolLM2-135M copied timestamps from the manifest until it ran out of tokens. Hosted models keep
  the reference's open schema (their strict modes limit ``maxItems`` and large enums).
* Cancellation is the one exception: ``asyncio.CancelledError`` propagates unlogged. The caller
  cancelled the prefetch (the turn ended or was aborted); swallowing it would break ``TaskGroup``
  and ``asyncio.timeout`` semantics, and there is nothing to report.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from memdir.llm.base import (
    CompletionRequest,
    Message,
    Provider,
    ToolResultBlock,
    ToolUseBlock,
)
from memdir.model import MemoryHeader
from memdir.prompt_context import RecallContext
from memdir.recall.base import MAX_SELECTED, Selection
from memdir.scan import format_manifest

log = logging.getLogger(__name__)

SELECTION_MAX_TOKENS = 256

SELECTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
    "required": ["selected_memories"],
    "additionalProperties": False,
}

SYSTEM_PROMPT = """\
You choose which saved memory files an AI agent should read before it answers a request.

You get the request and a list of memory files, one per line: optional [type], the file path, \
when it was last changed, and a short description. Return the paths of the files that will \
clearly help with this request — at most {limit}, most useful first. Be selective: leave a file \
out when you are unsure it helps, and return an empty list when none fit. Copy paths exactly as \
listed.

If recently used tools are listed, the agent is already using those tools successfully, so skip \
files that only explain how to use them (usage guides, API references). Still pick files that hold \
warnings, gotchas or known issues about those tools.

If recent context is given (the files the agent just read or edited, the last turns), use it to \
understand what the request is about; the request itself still decides what helps."""


def constrained_schema(filenames: Sequence[str], limit: int) -> dict[str, Any]:
    """The selection schema with the allowed filenames as an enum and at most ``limit`` items."""
    return {
        "type": "object",
        "properties": {
            "selected_memories": {
                "type": "array",
                "items": {"type": "string", "enum": list(dict.fromkeys(filenames))},
                "maxItems": limit,
            }
        },
        "required": ["selected_memories"],
        "additionalProperties": False,
    }


def build_user_message(
    query: str,
    manifest: str,
    recent_tools: Sequence[str] = (),
    context: RecallContext | None = None,
) -> str:
    """The side query's user message, in the reference's layout (plus the recent context,
    already bounded by memdir.prompt_context)."""
    text = f"Query: {query}\n\nAvailable memories:\n{manifest}"
    if recent_tools:
        text += f"\n\nRecently used tools: {', '.join(recent_tools)}"
    if context is not None and (context.files or context.recent):
        text += "\n\nRecent context:"
        if context.files:
            text += f"\nFiles just read or edited: {', '.join(context.files)}"
        if context.recent:
            text += f"\nLast turns: {context.recent}"
    return text


def pick_filenames(parsed: object, allowed: Sequence[str], limit: int) -> list[str]:
    """The whitelisted, deduplicated filenames from a ``{"selected_memories": [...]}`` reply."""
    if not isinstance(parsed, dict):
        return []
    names = parsed.get("selected_memories")
    if not isinstance(names, list):
        return []
    allowed_set = set(allowed)
    chosen: list[str] = []
    for name in names:
        if isinstance(name, str) and name.strip() in allowed_set and name.strip() not in chosen:
            chosen.append(name.strip())
            if len(chosen) >= limit:
                break
    return chosen


class LLMSelector:
    """``Selector`` backed by a provider side query (``max_tokens`` 256, strict JSON schema).

    ``timeout`` bounds the whole side query (retries included). It is generous because recall is
    prefetched beside the turn and consumed when settled; a small local model on a busy CPU takes
    tens of seconds for the ~500-token prompt.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        timeout: float | None = 60.0,
        constrain_names: bool | None = None,
    ) -> None:
        self.provider = provider
        self.timeout = timeout
        if constrain_names is None:
            constrain_names = bool(getattr(provider, "constrained_decoding", False))
        self.constrain_names = constrain_names

    async def select(
        self,
        query: str,
        headers: Sequence[MemoryHeader],
        *,
        recent_tools: Sequence[str] = (),
        limit: int = MAX_SELECTED,
        context: RecallContext | None = None,
    ) -> list[Selection]:
        if not headers or not query.strip() or limit <= 0:
            return []
        filenames = [h.filename for h in headers]
        schema = constrained_schema(filenames, limit) if self.constrain_names else SELECTION_SCHEMA
        request = CompletionRequest(
            system=SYSTEM_PROMPT.format(limit=limit),
            messages=[
                Message(
                    "user",
                    build_user_message(
                        query, format_manifest(list(headers)), recent_tools, context
                    ),
                )
            ],
            max_tokens=SELECTION_MAX_TOKENS,
            json_schema=schema,
            timeout=self.timeout,
        )
        try:
            async with asyncio.timeout(self.timeout):
                completion = await self.provider.complete(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # advisory: any failure means "nothing selected"
            log.debug("memory selection failed: %s: %s", type(exc).__name__, exc)
            return []
        names = pick_filenames(completion.parsed_json, filenames, limit)
        return [Selection(filename=name) for name in names]


def _is_human_turn(message: Message) -> bool:
    return message.role == "user" and not any(
        isinstance(b, ToolResultBlock) for b in message.blocks
    )


def recent_successful_tools(messages: Sequence[Message]) -> list[str]:
    """Tools used since the previous human turn that succeeded at least once and never failed.

    A trailing human message (the prompt being answered) is skipped first, so at the start of a
    turn this reports the tools of the turn before. Calls with no result yet are left out: they
    have not succeeded. Names come back in order of first use.
    """
    end = len(messages)
    if end and _is_human_turn(messages[end - 1]):
        end -= 1
    start = end
    while start and not _is_human_turn(messages[start - 1]):
        start -= 1
    names: dict[str, str] = {}
    uses: list[str] = []
    outcomes: dict[str, bool] = {}  # tool_use_id -> is_error
    for message in messages[start:end]:
        for block in message.blocks:
            if isinstance(block, ToolUseBlock):
                names[block.id] = block.name
                uses.append(block.id)
            elif isinstance(block, ToolResultBlock):
                outcomes[block.tool_use_id] = block.is_error
    succeeded: list[str] = []
    failed: set[str] = set()
    for use_id in uses:
        if use_id not in outcomes:
            continue
        name = names[use_id]
        if outcomes[use_id]:
            failed.add(name)
        elif name not in succeeded:
            succeeded.append(name)
    return [name for name in succeeded if name not in failed]


__all__ = [
    "SELECTION_MAX_TOKENS",
    "SELECTION_SCHEMA",
    "SYSTEM_PROMPT",
    "LLMSelector",
    "build_user_message",
    "constrained_schema",
    "pick_filenames",
    "recent_successful_tools",
]
