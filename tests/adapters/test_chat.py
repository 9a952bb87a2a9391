"""ChatSession in-process: slash commands, tools, provider failures, the reactive compaction."""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

from memdir.adapters.chat import ChatOptions, ChatSession, ReadLine
from memdir.errors import PromptTooLongError, ProviderUnavailableError
from memdir.llm.base import Completion
from memdir.llm.scripted import ScriptedProvider
from memdir.runtime import RuntimeOptions
from tests.runtime.conftest import Project, project, seed

__all__ = ["project"]  # the fixture, shared with the runtime tests


def lines(*typed: str) -> ReadLine:
    queue: list[str] = list(typed)

    async def read(prompt: str) -> str | None:
        return queue.pop(0) if queue else None

    return read


async def run(project: Project, provider: ScriptedProvider, typed: Iterable[str]) -> str:
    out = io.StringIO()
    rt = project.runtime(options=RuntimeOptions(extraction="off", session_memory=False))
    session = ChatSession(rt, provider, out, options=ChatOptions(recall_wait=5))
    assert await session.run(lines(*typed)) == 0
    return out.getvalue()


async def test_memory_commands(project: Project) -> None:
    seed(project.store())
    text = await run(
        project,
        ScriptedProvider(),
        [
            "/memory",
            "/memory show release_freeze.md",
            "/forget release_freeze.md",
            "/memory list",
            "/forget ../../etc/passwd",
            "/memory show",
            "/bogus",
        ],
    )
    assert "database_tests.md  [feedback]  integration tests must hit" in text
    assert "No merges." in text
    assert "forgot release_freeze.md" in text
    listing = text.split("forgot release_freeze.md", 1)[1]
    assert "release_freeze.md" not in listing.split("error:")[0]
    assert "error:" in listing  # the traversal is refused with a message, the session goes on
    assert "usage: /memory [list] | /memory show <file>" in text
    assert "unknown command /bogus" in text
    assert not (project.paths().memory_dir / "release_freeze.md").exists()


async def test_status_recall_toggle_compact_and_dream(project: Project) -> None:
    seed(project.store())
    provider = ScriptedProvider([Completion.from_text("Use the fixture.")] * 2)
    text = await run(
        project,
        provider,
        [
            "/recall off",
            "how do I write database tests?",
            "/recall on",
            "when is the merge freeze?",
            "/status",
            "/compact",
            "/dream",
        ],
    )
    assert "recalled memories are hidden" in text
    before, after = text.split("recalled memories are shown", 1)
    assert "↳ recalled" not in before
    assert "↳ recalled: release_freeze.md" in after
    assert "recall" in after and "runs 2" in after
    assert "not compacted:" in after  # nothing to compact with: no notes, and a fake model
    # the offline dream (it fills applies_when into the seeded memories, so it also says so
    # as a notice)
    dream = after.split("not compacted:", 1)[1].splitlines()
    assert any(line.startswith(("Improved", "ran")) for line in dream)
    # the attachment reached the model with the user's message
    assert "No merges." in provider.requests[1].messages[-1].blocks[-1].text  # type: ignore[union-attr]


async def test_tools_run_in_the_sandbox(project: Project, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    steps = [
        Completion.from_tool_calls(
            [
                ("Read", {"file_path": str(project.root / "README")}),
                ("Write", {"file_path": str(outside), "content": "x"}),
            ]
        ),
        Completion.from_text("Done."),
    ]
    (project.root / "README").write_text("hello from the project\n", "utf-8")
    text = await run(project, ScriptedProvider(steps), ["read the readme please"])
    assert "[Read] " in text and "[Write] error: Permission denied" in text
    assert "Done." in text
    assert not outside.exists()


async def test_a_provider_failure_keeps_the_conversation_usable(project: Project) -> None:
    provider = ScriptedProvider(
        [ProviderUnavailableError("overloaded"), Completion.from_text("Second try works.")]
    )
    text = await run(project, provider, ["first question here", "second question here"])
    assert "model error: overloaded" in text
    assert "Second try works." in text
    second = provider.requests[1].messages
    assert [m.role for m in second] == ["user"]  # the failed turn was rolled back
    assert second[0].text == "second question here"


async def test_prompt_too_long_compacts_once_and_retries(project: Project) -> None:
    summary = "<summary>1. Primary request: questions about widgets.</summary>"
    provider = ScriptedProvider(
        [
            Completion.from_text("one"),
            PromptTooLongError("prompt is too long"),
            Completion.from_text(summary),  # the compaction's summary side query
            Completion.from_text("after compaction"),
        ]
    )
    out = io.StringIO()
    rt = project.runtime(
        provider=provider, options=RuntimeOptions(extraction="off", session_memory=False)
    )
    session = ChatSession(rt, provider, out)
    await session.run(lines("a question about widgets", "another question about widgets"))
    text = out.getvalue()
    assert "Compacted the conversation with a summary" in text
    assert "after compaction" in text
    assert "questions about widgets" in provider.requests[-1].messages[0].text
    provider.assert_exhausted()
