"""An agent loop with memory on any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp).

The loop is yours; memdir's MemoryRuntime supplies the lifecycle around it:

    start()            -> the memory section of the system prompt (MEMORY.md included)
    on_user_message()  -> recall starts in the background
    attachments()      -> the recalled memories, joined to the user's message
    before_model_call()-> the compaction check
    on_turn_end()      -> transcript, memory extraction, session notes (in the background)
    end()              -> background work finished (bounded), nothing lost

Run it (memories land in ~/.memdir/projects/<this project>/memory):

    pip install 'memdir[recall,openai]'
    python examples/openai_agent_loop.py --model llama3.2 --base-url http://localhost:11434/v1 \\
        "Remember that our staging database listens on port 6543."
    python examples/openai_agent_loop.py --model llama3.2 --base-url http://localhost:11434/v1 \\
        "Which port does the staging database use?"
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from memdir.agent.policy import memory_agent_policy
from memdir.agent.tools import memory_tools
from memdir.config import load_settings
from memdir.llm.base import CompletionRequest, Message, Provider, ToolResultBlock
from memdir.llm.factory import provider_from_spec
from memdir.paths import resolve_paths
from memdir.runtime import MemoryRuntime

SYSTEM = "You are a concise assistant. Use the memory tools to save what the user asks you to."
CONTEXT_WINDOW = 32_000


async def run_session(
    provider: Provider, prompts: Sequence[str], *, env: Mapping[str, str], cwd: Path
) -> list[str]:
    """One session: each prompt is a user turn; returns the assistant's final text per turn."""
    settings = load_settings(
        env, cwd=cwd, flag_settings=None, claude_mode=False, memory_dir_flag=None
    )
    runtime = MemoryRuntime(settings, resolve_paths(settings, cwd=cwd), provider=provider)
    started = await runtime.start()
    system = f"{SYSTEM}\n\n{started.system_prompt}"
    # Read/Grep/Glob/read-only shell anywhere; Write/Edit only inside the memory dir.
    tools = memory_agent_policy(memory_tools(runtime.store, cwd=cwd), runtime.memory_dir)
    messages: list[Message] = []
    answers: list[str] = []
    try:
        for prompt in prompts:
            runtime.on_user_message(prompt)
            recalled = await runtime.attachments(wait=2.0)
            messages = runtime.attach([*messages, Message("user", prompt)], recalled)
            for _ in range(8):  # tool rounds per turn
                messages = await runtime.before_model_call(messages, context_window=CONTEXT_WINDOW)
                reply = await provider.complete(
                    CompletionRequest(system=system, messages=tuple(messages), tools=tools.specs())
                )
                messages.append(reply.as_message())
                if not reply.tool_calls:
                    break
                results = [await tools.call(c.name, c.input) for c in reply.tool_calls]
                messages.append(
                    Message(
                        "user",
                        [
                            ToolResultBlock(c.id, r.content, r.is_error)
                            for c, r in zip(reply.tool_calls, results, strict=True)
                        ],
                    )
                )
            answers.append(messages[-1].text)
            await runtime.on_turn_end(messages)
            for notice in runtime.notices():  # "Saved 1 memory", failures of background work
                print(f"· {notice}")
    finally:
        report = await runtime.end(timeout=60)
        for notice in report.notices:
            print(f"· {notice}")
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompts", nargs="+")
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"))
    args = parser.parse_args()
    spec = f"openai:{args.model}" + (f"@{args.base_url}" if args.base_url else "")
    provider = provider_from_spec(spec, os.environ)
    for answer in asyncio.run(run_session(provider, args.prompts, env=os.environ, cwd=Path.cwd())):
        print(answer)


if __name__ == "__main__":
    main()
