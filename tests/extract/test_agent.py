"""LLM extraction end to end: the scripted model issues real tool calls through runner + policy."""

from __future__ import annotations

from pathlib import Path

from memdir.extract.agent import AgentExtractor
from memdir.llm.base import Completion, Message, ToolResultBlock
from memdir.llm.scripted import ScriptedProvider
from memdir.store import MemoryStore
from tests.extract.support import FIXED_NOW

FEEDBACK = """---
name: Package manager
description: use pnpm, never npm, in this repo
type: feedback
---
Use pnpm for every install.
**Why:** the lockfile is pnpm's; npm rewrote it twice.
**How to apply:** any dependency change.
"""
ROLE = """---
name: User role
description: user is a data scientist new to the frontend
type: user
---
Data scientist; explain frontend concepts from first principles.
"""


def _results(message: Message) -> list[ToolResultBlock]:
    return [b for b in message.blocks if isinstance(b, ToolResultBlock)]


async def test_reads_then_writes_inside_and_is_refused_outside(
    store: MemoryStore, memory_dir: Path, tmp_path: Path
) -> None:
    store.create("Old note", "an older memory", "project", "Launch is 2026-12-01.\n")
    outside = tmp_path / "elsewhere.md"
    provider = ScriptedProvider(
        [
            Completion.from_tool_calls(
                [
                    ("Read", {"file_path": str(memory_dir / "old_note.md")}),
                    ("Bash", {"command": "rm " + str(memory_dir / "old_note.md")}),
                ]
            ),
            Completion.from_tool_calls(
                [
                    (
                        "Write",
                        {"file_path": str(memory_dir / "feedback_pnpm.md"), "content": FEEDBACK},
                    ),
                    ("Write", {"file_path": str(memory_dir / "team" / "role.md"), "content": ROLE}),
                    ("Write", {"file_path": str(outside), "content": FEEDBACK}),
                ]
            ),
            Completion.from_text("Saved two memories."),
        ]
    )
    extractor = AgentExtractor(provider, store, clock=lambda: FIXED_NOW)
    talk = [
        Message("user", "No, use pnpm not npm. I'm a data scientist by the way."),
        Message("assistant", "Understood."),
    ]
    result = await extractor.extract(talk, new_messages=2)

    assert result.ok and result.run is not None and result.run.stop_reason == "end_turn"
    assert result.written == [memory_dir / "feedback_pnpm.md", memory_dir / "team" / "role.md"]
    assert result.notice == "Saved 1 memory · 1 team memory"
    assert (memory_dir / "feedback_pnpm.md").read_text() == FEEDBACK
    assert "(feedback_pnpm.md) — use pnpm, never npm" in (memory_dir / "MEMORY.md").read_text()
    assert "(role.md)" in (memory_dir / "team" / "MEMORY.md").read_text()
    assert (memory_dir / "old_note.md").exists() and not outside.exists()

    first, second, third = provider.requests
    assert first.messages[:2] == talk and first.cache_prefix
    instruction = first.messages[2].text
    assert "- [project] old_note.md (" in instruction and "an older memory" in instruction
    assert "~2 messages" in instruction and "Today is 2026-11-29" in instruction
    read, bash = _results(second.messages[-1])
    assert "Launch is 2026-12-01." in read.content and not read.is_error
    assert bash.is_error and "read-only-shell" in bash.content
    *ok, denied = _results(third.messages[-1])
    assert [r.is_error for r in ok] == [False, False]
    assert denied.is_error and "memory-dir-jail" in denied.content
    assert [d.name for d in result.run.denials] == ["Bash", "Write"]


async def test_nothing_to_save_is_a_success_with_no_notice(store: MemoryStore) -> None:
    provider = ScriptedProvider([Completion.from_text("Nothing to save.")])
    result = await AgentExtractor(provider, store).extract([Message("user", "hi")], new_messages=1)
    assert result.ok and result.written == [] and result.notice == ""
    assert "Existing memories\n(none yet)" in provider.requests[0].messages[0].text


async def test_writing_only_the_index_is_not_counted(store: MemoryStore, memory_dir: Path) -> None:
    provider = ScriptedProvider(
        [
            Completion.from_tool_call(
                "Write", {"file_path": str(memory_dir / "MEMORY.md"), "content": "- note\n"}
            ),
            Completion.from_text("done"),
        ]
    )
    result = await AgentExtractor(provider, store).extract([Message("user", "x")], new_messages=1)
    assert result.written == [] and result.notice == ""
