"""The runtime's recall carries the conversation's context: recent turns, files touched, tools used.

Through the real runtime (and `memdir chat` on it) with the local selector and the scripted model:
the context surfaces a memory the prompt alone would not, and never one for an unrelated prompt.
"""

from __future__ import annotations

import io

import pytest

from memdir.adapters.chat import ChatOptions, ChatSession, ReadLine
from memdir.llm.base import Completion, Message, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.llm.scripted import ScriptedProvider
from memdir.prompt_context import MAX_ITEMS, from_transcript
from memdir.recall.engine import MemoryRecall
from memdir.recall.factory import build_recall
from memdir.recall.llm_select import LLMSelector
from memdir.runtime import MemoryRuntime, RuntimeOptions
from memdir.runtime import recall_turn as turn_mod
from memdir.runtime.recall_turn import context_of
from memdir.transcripts import read_transcript
from tests.runtime.conftest import Project
from tests.test_prompt_context import seed_admin_rule

ADMIN = "admin_ui_package_manager.md"
QUIET = RuntimeOptions(extraction="off", session_memory=False, dream=False)


def _runtime(project: Project) -> MemoryRuntime:
    paths = project.paths()
    recall = build_recall(paths.memory_dir, paths.cache_dir, kind="local")
    return project.runtime(recall=recall, options=QUIET)


def _lines(*typed: str) -> ReadLine:
    queue = list(typed)

    async def read(prompt: str) -> str | None:
        return queue.pop(0) if queue else None

    return read


async def _chat(project: Project, typed: list[str], replies: list[Completion]) -> str:
    """A `memdir chat` session over the real runtime; what the terminal showed."""
    out = io.StringIO()
    session = ChatSession(
        _runtime(project), ScriptedProvider(replies), out, options=ChatOptions(recall_wait=30)
    )
    assert await session.run(_lines(*typed)) == 0
    return out.getvalue()


def _read_manifest(project: Project) -> list[Completion]:
    manifest = project.root / "admin" / "package.json"
    manifest.parent.mkdir()
    manifest.write_text('{"name": "admin", "dependencies": {"react": "^18"}}\n', "utf-8")
    return [
        Completion.from_tool_calls([("Read", {"file_path": str(manifest)})]),
        Completion.from_text("It depends on react 18."),
    ]


def _recalled(text: str, prompt: str) -> str:
    """The recall line shown for ``prompt`` ("" when nothing was recalled)."""
    after = text.split(f"{prompt}", 1)[-1] if prompt in text else text
    for line in after.splitlines():
        if "↳ recalled:" in line:
            return line.split("↳ recalled:", 1)[1].strip()
    return ""


@pytest.fixture
def seeded(project: Project) -> Project:
    seed_admin_rule(project.store())
    return project


PROMPT = "Which date-picker module is best?"  # no intent names it: only context can help


async def test_the_prompt_alone_does_not_surface_the_rule(seeded: Project) -> None:
    text = await _chat(seeded, [PROMPT], [Completion.from_text("Which package?")])
    assert "↳ recalled" not in text


async def test_a_manifest_just_read_surfaces_the_package_manager_rule(seeded: Project) -> None:
    replies = [*_read_manifest(seeded), Completion.from_text("Adding it.")]
    text = await _chat(seeded, ["Open the manifest of the app", PROMPT], replies)
    first, second = text.split("It depends on react 18.", 1)
    assert "↳ recalled" not in first
    assert "↳ recalled: " + ADMIN in second


async def test_context_does_not_outweigh_an_unrelated_prompt(seeded: Project) -> None:
    replies = [*_read_manifest(seeded), Completion.from_text("Leaves fall.")]
    text = await _chat(
        seeded, ["Open the manifest of the app", "Write a haiku about autumn"], replies
    )
    assert "↳ recalled" not in text


async def test_an_explicit_context_replaces_the_conversations(seeded: Project) -> None:
    from memdir.prompt_context import RecallContext

    rt = _runtime(seeded)
    await rt.start()
    rt.on_user_message(PROMPT, context=RecallContext(files=("admin/package.json",)))
    assert [a.filename for a in await rt.attachments(wait=30)] == [ADMIN]
    await rt.end()


# -- the context itself ---------------------------------------------------------------------------
def _conversation() -> list[Message]:
    return [
        Message("user", "Please look at the admin manifest"),
        Message(
            "assistant",
            [
                TextBlock("Reading it."),
                ToolUseBlock("t1", "Read", {"file_path": "admin/package.json"}),
            ],
        ),
        Message("user", [ToolResultBlock("t1", '{"name": "secret-words-in-a-result"}')]),
        Message(
            "user",
            [
                TextBlock("now add a date picker"),
                TextBlock("<system-reminder>\nLunch is at noon\n</system-reminder>"),
            ],
        ),
    ]


def test_context_reads_turns_files_and_tools_but_not_results_or_reminders() -> None:
    found = context_of(_conversation())
    assert found.files == ("admin/package.json",) and found.tools == ("Read",)
    assert "admin manifest" in found.recent and "date picker" in found.recent
    assert "secret-words" not in found.recent  # tool output is not what was said
    assert "noon" not in found.recent  # a memory recalled last turn must not recall itself


def test_context_is_bounded_however_long_the_conversation(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [
        Message("assistant", [ToolUseBlock(f"t{i}", "Edit", {"file_path": f"f{i}.py"})])
        for i in range(500)
    ]
    found = context_of(calls)
    assert found.files == tuple(f"f{i}.py" for i in range(500 - MAX_ITEMS, 500))
    seen: list[int] = []
    real = turn_mod.from_entries
    monkeypatch.setattr(turn_mod, "from_entries", lambda e: seen.append(len(e)) or real(e))
    context_of(calls)
    assert seen == [turn_mod.MAX_MESSAGES]


async def test_same_summary_as_the_hook_reads_from_the_runtimes_transcript(
    project: Project,
) -> None:
    rt = project.runtime(options=QUIET)
    await rt.start()
    messages = _conversation()
    await rt.on_turn_end(messages)
    await rt.end()
    path = project.paths().transcript_path(rt.session_id)
    assert len(read_transcript(path).entries) == len(messages)
    assert from_transcript(path) == context_of(messages)


async def test_a_model_selector_is_shown_the_context(seeded: Project) -> None:
    provider = ScriptedProvider(
        [
            Completion.from_json({"selected_memories": []}),
            Completion.from_json({"selected_memories": [ADMIN]}),
        ]
    )
    # the LLM selector alone: its local ranker only fills the manifest past 200 memories
    recall = MemoryRecall(seeded.paths().memory_dir, LLMSelector(provider))
    rt = seeded.runtime(provider=provider, recall=recall, options=QUIET)
    await rt.start()
    rt.on_user_message("Open the manifest of the app")
    assert await rt.attachments(wait=30) == []
    read = ToolUseBlock("t1", "Read", {"file_path": "admin/package.json"})
    await rt.on_turn_end(
        [
            Message("user", "Open the manifest of the app"),
            Message("assistant", [read]),
            Message("user", [ToolResultBlock("t1", "{}")]),
            Message("assistant", "It depends on react 18."),
        ]
    )
    rt.on_user_message(PROMPT)
    assert [a.filename for a in await rt.attachments(wait=30)] == [ADMIN]
    first, second = (r.messages[0].text for r in provider.requests)
    assert "Recent context" not in first  # nothing happened before the first prompt
    assert "Files just read or edited: admin/package.json" in second
    assert "Last turns: Open the manifest of the app It depends on react 18." in second
    await rt.end()
