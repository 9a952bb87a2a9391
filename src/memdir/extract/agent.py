"""LLM extraction: a forked, sandboxed agent run over the conversation.

Invariant: the model only ever gets the memory tools wrapped in :func:`memory_agent_policy` —
reads anywhere, read-only shell, Edit/Write jailed to the memory dir — so whatever it decides,
the only files it can change are memory files, and only through the store (atomic, locked,
guarded, indexed). The conversation goes first and unchanged (a cacheable prefix); the
extraction instruction, with the current manifest, is appended after it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path

from memdir.agent.policy import memory_agent_policy
from memdir.agent.runner import AgentRunner
from memdir.agent.tools import memory_tools
from memdir.extract.base import ExtractionResult, unique_written
from memdir.extract.prompt import EXTRACTION_SYSTEM, build_extraction_prompt
from memdir.llm.base import Message, Provider
from memdir.scan import format_manifest
from memdir.store import MemoryStore

SUCCESSFUL_STOPS = frozenset({"end_turn", "max_turns"})


class AgentExtractor:
    """Runs the extraction agent; ``system`` should be the parent's system prompt when forking
    a live conversation (so the provider's prompt cache is shared), else a short default."""

    def __init__(
        self,
        provider: Provider,
        store: MemoryStore,
        *,
        system: str = EXTRACTION_SYSTEM,
        cwd: Path | None = None,
        max_turns: int = 5,
        time_limit: float = 120.0,
        max_tokens: int = 4096,
        clock: Callable[[], dt.datetime] | None = None,
    ) -> None:
        self.provider = provider
        self.store = store
        self.system = system
        self.cwd = cwd
        self.max_turns = max_turns
        self.time_limit = time_limit
        self.max_tokens = max_tokens
        self._clock = clock or (lambda: dt.datetime.now().astimezone())

    def instruction(self, new_messages: int) -> str:
        headers = self.store.scan().headers
        return build_extraction_prompt(
            self.store.root,
            new_messages=new_messages,
            manifest=format_manifest(headers),
            today=self._clock().date().isoformat(),
        )

    async def extract(self, messages: Sequence[Message], *, new_messages: int) -> ExtractionResult:
        toolset = memory_agent_policy(memory_tools(self.store, cwd=self.cwd), self.store.root)
        runner = AgentRunner(
            self.provider,
            toolset,
            system=self.system,
            max_turns=self.max_turns,
            time_limit=self.time_limit,
            max_tokens=self.max_tokens,
        )
        instruction = await asyncio.to_thread(self.instruction, new_messages)  # scans the dir
        run = await runner.run(instruction, prefix=messages)
        return ExtractionResult(
            memory_dir=self.store.root,
            written=unique_written(run.written_paths),
            ok=run.stop_reason in SUCCESSFUL_STOPS,
            error=run.error,
            run=run,
        )
