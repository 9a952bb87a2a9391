"""Compaction through the runtime: it fires past the window and the conversation stays valid."""

from __future__ import annotations

from memdir.llm.base import Completion, Message, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.llm.scripted import ScriptedProvider
from memdir.runtime import MemoryRuntime, RuntimeOptions
from memdir.runtime.conversation import chat_messages
from memdir.session import api_shape_problems, load_transcript, to_api
from memdir.session.messages import to_llm_messages
from memdir.transcripts import read_transcript
from tests.runtime.conftest import Project

WINDOW = 4_000  # threshold ≈ 2,800 estimated tokens
WORDS = "the parser keeps a table of tokens and offsets for every file it reads " * 12


def valid(rt: MemoryRuntime, messages: list[Message]) -> list[str]:
    return api_shape_problems(to_api(chat_messages(rt.log.assign(messages))))


async def long_session(rt: MemoryRuntime, turns: int) -> tuple[list[Message], list[int]]:
    """Turns with a tool call each; returns the messages and their count after every call."""
    messages: list[Message] = []
    sizes: list[int] = []
    for i in range(turns):
        text = f"step {i}: please look at src/parser_{i}.py and explain it"
        rt.on_user_message(text)
        messages = rt.attach([*messages, Message("user", text)], await rt.attachments())
        messages = await rt.before_model_call(messages, context_window=WINDOW)
        call = ToolUseBlock(f"toolu_{i}", "Read", {"file_path": f"/src/parser_{i}.py"})
        messages.append(Message("assistant", [TextBlock("Reading it."), call]))
        messages.append(Message("user", [ToolResultBlock(call.id, WORDS)]))
        messages = await rt.before_model_call(messages, context_window=WINDOW)
        messages.append(Message("assistant", f"Parser {i} keeps a token table. {WORDS}"))
        await rt.on_turn_end(messages)
        sizes.append(len(messages))
    return messages, sizes


async def test_offline_compaction_with_session_notes_keeps_the_conversation_valid(
    project: Project,
) -> None:
    rt = project.runtime(options=RuntimeOptions(extraction="off"))
    await rt.start()
    messages, sizes = await long_session(rt, 12)
    assert max(sizes) > sizes[-1], sizes  # it shrank at least once
    assert valid(rt, messages) == []
    compaction = rt.status()[3]
    assert compaction.runs >= 1 and "session_memory" in compaction.detail
    assert any(n.startswith("Compacted the conversation with session notes") for n in rt.notices())
    first = messages[0]
    assert first.role == "user" and "continues an earlier conversation" in first.text
    await rt.end()

    # the transcript replays exactly what the model was last shown
    path = project.paths().transcript_path(rt.session_id)
    kinds = [e.get("subtype") for e in read_transcript(path).entries]
    assert "compact_boundary" in kinds
    resumed, issues = load_transcript(path)
    assert issues == []
    assert [m.text for m in to_llm_messages(resumed)] == [m.text for m in messages]


async def test_full_compaction_with_a_model_when_there_are_no_notes(project: Project) -> None:
    summary = "<analysis>x</analysis>\n<summary>1. Primary request: explain parsers.</summary>"
    provider = ScriptedProvider.always(Completion.from_text(summary))
    rt = project.runtime(
        provider=provider, options=RuntimeOptions(extraction="off", session_memory=False)
    )
    await rt.start()
    messages, sizes = await long_session(rt, 10)
    assert max(sizes) > sizes[-1]
    assert valid(rt, messages) == []
    assert "Primary request: explain parsers." in messages[0].text
    assert "full" in rt.status()[3].detail
    await rt.end()


async def test_manual_compaction_and_a_failure_that_changes_nothing(project: Project) -> None:
    rt = project.runtime(options=RuntimeOptions(extraction="off", session_memory=False))
    await rt.start()
    messages = [Message("user", "hello there friend"), Message("assistant", "hi")]
    same, note = await rt.compact_now(messages)
    assert same == messages  # no notes and no model: nothing to compact with
    assert note.startswith("not compacted:") and "no model" in note
    assert rt.status()[3].state == "failed"
    await rt.end()
