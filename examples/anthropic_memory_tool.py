"""Claude with durable memory: the SDK tool runner, memdir's memory tool, runtime recall.

* ``MemdirAsyncMemoryTool`` is the SDK's ``memory_20250818`` tool backed by a memdir memory dir:
  Claude views, creates and edits ``/memories/...`` files; every write is atomic, path-checked,
  kept out of team memory when it holds credentials, and indexed in MEMORY.md.
* ``MemoryRuntime`` adds what the tool alone does not: before each turn, recall picks the few
  memories relevant to the message (offline, no extra model call) and they are attached to it;
  after each turn the conversation goes to a transcript and session notes. Extraction is off:
  here Claude curates its memory itself, through the tool.

Run it:

    pip install 'memdir[recall,anthropic]'
    export ANTHROPIC_API_KEY=...
    python examples/anthropic_memory_tool.py "I review PRs on Fridays; keep that in mind."
    python examples/anthropic_memory_tool.py "When do I review PRs?"
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from anthropic import AsyncAnthropic

from memdir.adapters.memory_tool import MemdirAsyncMemoryTool, guarded_store
from memdir.config import load_settings
from memdir.llm.base import Block, Message, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.paths import resolve_paths
from memdir.runtime import MemoryRuntime, RuntimeOptions, attachment_block

MODEL = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-5-5")
SYSTEM = "You are a helpful assistant with a persistent memory directory at /memories."


def _block(raw: Mapping[str, Any]) -> Block | None:
    kind = raw.get("type")
    if kind == "text":
        return TextBlock(str(raw["text"]))
    if kind == "tool_use":
        return ToolUseBlock(str(raw["id"]), str(raw["name"]), dict(raw["input"]))
    if kind == "tool_result":
        content = raw.get("content", "")
        if not isinstance(content, str):
            content = "\n".join(str(b.get("text", "")) for b in content)
        return ToolResultBlock(str(raw["tool_use_id"]), content, bool(raw.get("is_error")))
    return None  # thinking, images: not kept in memdir's transcript


def as_param(reply: Any) -> dict[str, Any]:
    """A reply as a plain message param (JSON data) for the next request and the transcript."""
    blocks = [b.model_dump(mode="json", exclude_none=True) for b in reply.content]
    return {"role": "assistant", "content": blocks}


def to_message(param: Mapping[str, Any]) -> Message:
    """An Anthropic message param as memdir's provider-neutral message (for the transcript)."""
    content = param["content"]
    if isinstance(content, str):
        return Message(param["role"], content)
    blocks = [b for raw in content if (b := _block(raw)) is not None]
    return Message(param["role"], blocks)


async def run_session(
    client: AsyncAnthropic, prompts: Sequence[str], *, env: Mapping[str, str], cwd: Path
) -> list[str]:
    settings = load_settings(
        env, cwd=cwd, flag_settings=None, claude_mode=False, memory_dir_flag=None
    )
    runtime = MemoryRuntime(
        settings,
        resolve_paths(settings, cwd=cwd),
        options=RuntimeOptions(extraction="off", model_name=MODEL),
    )
    await runtime.start()
    tool = MemdirAsyncMemoryTool(guarded_store(runtime.memory_dir))
    history: list[Any] = []  # message params: JSON-shaped dicts
    answers: list[str] = []
    try:
        for prompt in prompts:
            runtime.on_user_message(prompt)
            recalled = await runtime.attachments(wait=2.0)
            content = [{"type": "text", "text": prompt}]
            if recalled:  # the memories recall picked, as a system reminder in the user turn
                content.append({"type": "text", "text": attachment_block(recalled).text})
            history.append({"role": "user", "content": content})
            runner = client.beta.messages.tool_runner(
                model=MODEL, max_tokens=1024, system=SYSTEM, messages=history, tools=[tool]
            )
            async for reply in runner:
                history.append(as_param(reply))
                results = await runner.generate_tool_call_response()
                if results is not None:
                    history.append(dict(results))
            answers.append("".join(b.get("text", "") for b in history[-1]["content"]))
            await runtime.on_turn_end([to_message(m) for m in history])
    finally:
        await runtime.end(timeout=30)
    return answers


def main() -> None:
    client = AsyncAnthropic()
    answers = asyncio.run(run_session(client, sys.argv[1:], env=os.environ, cwd=Path.cwd()))
    print("\n".join(answers))


if __name__ == "__main__":
    main()
