"""MemoryRuntime through whole sessions, offline and with the scripted provider."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import pytest

from memdir.agents import agent_memory
from memdir.agents.snapshots import SNAPSHOT_JSON
from memdir.extract.transcript import turns_from_entries
from memdir.llm.base import Completion, Message, TextBlock
from memdir.llm.scripted import ScriptedProvider
from memdir.recall.engine import MemoryRecall
from memdir.recall.keyword import KeywordSelector
from memdir.runtime import MemoryRuntime, RuntimeOptions
from memdir.transcripts import read_transcript
from tests.runtime.conftest import Project, seed


async def turn(
    rt: MemoryRuntime, messages: list[Message], text: str, reply: str, *, wait: float = 5.0
) -> tuple[list[Message], list[str]]:
    """One user turn as an agent loop runs it; returns the messages and the attached files."""
    rt.on_user_message(text)
    attachments = await rt.attachments(wait=wait)
    messages = rt.attach([*messages, Message("user", text)], attachments)
    messages = await rt.before_model_call(messages, context_window=200_000)
    messages.append(Message("assistant", reply))
    await rt.on_turn_end(messages)
    return messages, [a.filename for a in attachments]


async def test_attachments_appear_for_the_right_turn_and_never_twice(project: Project) -> None:
    seed(project.store())
    rt = project.runtime()
    await rt.start()
    messages: list[Message] = []
    messages, got = await turn(rt, messages, "how do I write database tests here?", "ok")
    assert got == ["database_tests.md"]
    assert "<system-reminder>" in messages[0].blocks[-1].text  # type: ignore[union-attr]
    assert "Use the postgres fixture." in messages[0].blocks[-1].text  # type: ignore[union-attr]
    messages, got = await turn(rt, messages, "and the database tests for migrations?", "ok")
    assert got == []  # already surfaced this session
    messages, got = await turn(rt, messages, "when is the merge freeze?", "ok")
    assert got == ["release_freeze.md"]
    messages, got = await turn(rt, messages, "thanks", "ok")  # one word: no recall
    assert got == []
    assert rt.status()[0].runs == 3
    await rt.end()


async def test_a_newer_message_replaces_an_unfinished_recall(project: Project) -> None:
    seed(project.store())
    rt = project.runtime()
    await rt.start()
    rt.on_user_message("latency dashboard please now")
    rt.on_user_message("when is the merge freeze?")
    got = await rt.attachments(wait=5)
    assert [a.filename for a in got] == ["release_freeze.md"]
    assert await rt.attachments(wait=0) == []  # consumed
    await rt.end()


class SlowSelector:
    """A selector that takes ``delay`` seconds (awaited on the loop, like an LLM side query)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.inner = KeywordSelector()

    async def select(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        await asyncio.sleep(self.delay)
        return await self.inner.select(*args, **kwargs)


async def test_recall_never_blocks_the_turn(project: Project) -> None:
    seed(project.store())
    paths = project.paths()
    rt = project.runtime(recall=MemoryRecall(paths.memory_dir, SlowSelector(0.5)))
    await rt.start()
    rt.on_user_message("how do I write database tests here?")
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await rt.attachments() == []  # default wait 0: not ready, not waited for
    assert loop.time() - started < 0.2
    assert rt.status()[0].state == "running"
    # the memory was not marked surfaced, so a later turn can still get it
    got = await rt.attachments(wait=5)
    assert [a.filename for a in got] == ["database_tests.md"]
    await rt.end()


async def test_recall_over_its_time_limit_is_reported(project: Project) -> None:
    seed(project.store())
    paths = project.paths()
    rt = project.runtime(
        recall=MemoryRecall(paths.memory_dir, SlowSelector(5)),
        options=RuntimeOptions(recall_timeout=0.1),
    )
    await rt.start()
    rt.on_user_message("how do I write database tests here?")
    assert await rt.attachments(wait=2) == []
    recall = rt.status()[0]
    assert recall.state == "failed" and recall.last_error
    await rt.end()


async def test_offline_extraction_saves_mid_session_and_next_session_sees_it(
    project: Project,
) -> None:
    rt = project.runtime()
    first = await rt.start()
    assert "Python 3.12" not in first.system_prompt
    messages: list[Message] = []
    messages, _ = await turn(
        rt, messages, "Remember that the deploy target is Python 3.12 on Debian.", "Noted."
    )
    await asyncio.wait_for(_until(lambda: rt.status()[1].state == "ok"), 5)
    assert rt.notices() == ["Saved 1 memory"]
    assert any("3.12" in h.description for h in project.store().list() if h.description)
    await rt.end()

    second = project.runtime()
    report = await second.start()
    assert "Python 3.12" in report.system_prompt  # MEMORY.md line in the new prompt
    await second.end()


async def test_private_secrets_refuse_holds_for_the_runtimes_background_extraction(
    project: Project,
) -> None:
    """Issue #21.1: every writer, background workers included, goes through the same guard."""
    token = "ghp_R8kq2ZfLw0Tn5YbV3cXa9PdM1sHj7UeG4oQi"
    rt = project.runtime(env={"MEMDIR_PRIVATE_SECRETS": "refuse"})
    await rt.start()
    await turn(rt, [], f"Remember that my GitHub token is {token} for the bot.", "Not kept.")
    await asyncio.wait_for(_until(lambda: rt.status()[1].state == "ok"), 5)
    await rt.end()
    texts = [p.read_text() for p in project.paths().memory_dir.rglob("*.md")]
    assert not any(token in t for t in texts)


async def _until(check) -> None:  # type: ignore[no-untyped-def]
    while not check():
        await asyncio.sleep(0.01)


def write_call(memory_dir: Path, name: str, body: str) -> Completion:
    text = f"---\nname: {name}\ndescription: {body}\ntype: user\n---\n{body}\n"
    return Completion.from_tool_call(
        "Write", {"file_path": str(memory_dir / f"{name}.md"), "content": text}
    )


async def test_llm_extraction_through_the_scripted_provider(project: Project) -> None:
    memory_dir = project.paths().memory_dir
    extraction = ScriptedProvider(
        [write_call(memory_dir, "editor", "prefers helix"), Completion.from_text("done")]
    )
    rt = project.runtime(provider=extraction)
    await rt.start()
    await turn(rt, [], "I use helix as my editor, keep it in mind", "ok")
    report = await rt.end(timeout=10)
    assert "extraction" in report.drained and report.timed_out == []
    assert report.notices == ["Saved 1 memory"]
    assert (memory_dir / "editor.md").is_file()
    # the extraction agent saw the conversation and the instruction, with the memory tools
    assert "helix" in extraction.requests[0].messages[0].text
    assert {t.name for t in extraction.requests[0].tools} >= {"Read", "Write", "Edit"}


async def test_end_drains_a_slow_extraction_within_the_timeout(project: Project) -> None:
    memory_dir = project.paths().memory_dir
    slow = ScriptedProvider(
        [write_call(memory_dir, "slow", "slow but fine"), Completion.from_text("done")],
        delay=0.3,
    )
    rt = project.runtime(provider=slow)
    await rt.start()
    await turn(rt, [], "I like slow food, remember", "ok")
    report = await rt.end(timeout=10)
    assert "extraction" in report.drained and report.timed_out == []
    assert (memory_dir / "slow.md").is_file()


async def test_end_reports_an_extraction_that_timed_out(project: Project) -> None:
    memory_dir = project.paths().memory_dir
    stuck = ScriptedProvider([write_call(memory_dir, "never", "never written")], delay=30)
    rt = project.runtime(provider=stuck)
    await rt.start()
    await turn(rt, [], "I like slow food, remember", "ok")
    loop = asyncio.get_running_loop()
    started = loop.time()
    report = await rt.end(timeout=0.3)
    assert loop.time() - started < 3
    assert report.timed_out == ["extraction"]
    extraction = rt.status()[1]
    assert extraction.state == "timed_out" and "0.3" in (extraction.last_error or "")
    assert not (memory_dir / "never.md").exists()


async def test_a_failing_extraction_never_breaks_the_turn(project: Project) -> None:
    broken = ScriptedProvider.always(RuntimeError("boom"))
    rt = project.runtime(provider=broken)
    await rt.start()
    messages, _ = await turn(rt, [], "I like tea, remember that", "ok")
    messages, _ = await turn(rt, messages, "and coffee too", "ok")  # the loop goes on
    await rt.end(timeout=5)
    extraction = rt.status()[1]
    assert extraction.state == "failed" and "boom" in (extraction.last_error or "")


async def test_transcript_is_in_the_reference_layout(project: Project) -> None:
    rt = project.runtime(options=RuntimeOptions(extraction="off"))
    await rt.start()
    messages, _ = await turn(rt, [], "first question here", "first answer")
    await turn(rt, messages, "second question here", "second answer")
    await rt.end()
    path = project.paths().transcript_path(rt.session_id)
    entries = read_transcript(path).entries
    assert [e["type"] for e in entries] == ["user", "assistant", "user", "assistant"]
    assert entries[0]["parentUuid"] is None
    assert all(e["parentUuid"] == p["uuid"] for p, e in itertools.pairwise(entries))
    assert entries[1]["message"]["content"] == [{"type": "text", "text": "first answer"}]
    assert {e["sessionId"] for e in entries} == {rt.session_id}
    turns = turns_from_entries(entries)  # what `memdir extract` reads
    assert [t.message.text for t in turns][-1] == "second answer"
    assert path.stat().st_mode & 0o777 == 0o600


async def test_disabled_memory_keeps_only_the_transcript(project: Project) -> None:
    seed(project.store())
    rt = project.runtime(env={"MEMDIR_DISABLE": "1"})
    report = await rt.start()
    assert report.system_prompt == ""
    _, got = await turn(rt, [], "remember that database tests are slow", "ok")
    assert got == []
    assert {s.state for s in rt.status()} == {"off"}
    await rt.end()
    assert project.paths().transcript_path(rt.session_id).is_file()
    assert len(project.store().list()) == 3


async def test_agent_snapshot_initialises_a_fresh_dir(project: Project) -> None:
    paths = project.paths()
    snap = paths.agent_snapshot_dir("reviewer")
    snap.mkdir(parents=True)
    (snap / "style.md").write_text(
        "---\nname: Style\ndescription: terse review comments\ntype: feedback\n---\nBe terse.\n",
        "utf-8",
    )
    (snap / "MEMORY.md").write_text("- [Style](style.md) — terse review comments\n", "utf-8")
    (snap / SNAPSHOT_JSON).write_text(json.dumps({"updatedAt": "2026-11-01T00:00:00Z"}), "utf-8")
    agent = agent_memory(paths, "reviewer", "local")
    rt = project.runtime(agent=agent, recall=MemoryRecall(agent.memory_dir, KeywordSelector()))
    report = await rt.start()
    assert report.snapshot == "initialize"
    assert "terse review comments" in report.system_prompt
    assert "not checked in" in report.system_prompt  # the local scope note
    rt.on_user_message("how terse should review comments be?")
    assert [a.filename for a in await rt.attachments(wait=5)] == ["style.md"]
    await rt.end()

    (snap / SNAPSHOT_JSON).write_text(json.dumps({"updatedAt": "2026-11-20T00:00:00Z"}), "utf-8")
    again = project.runtime(agent=agent, recall=MemoryRecall(agent.memory_dir, KeywordSelector()))
    report = await again.start()
    assert report.snapshot == "prompt-update"
    assert any("memdir agent sync reviewer --scope local" in n for n in report.notices)
    await again.end()


async def test_start_twice_is_an_error_and_end_twice_is_harmless(project: Project) -> None:
    rt = project.runtime()
    await rt.start()
    with pytest.raises(Exception, match="already"):
        await rt.start()
    await rt.end()
    assert (await rt.end()).drained == []


async def test_cancel_stops_a_running_extraction(project: Project) -> None:
    memory_dir = project.paths().memory_dir
    stuck = ScriptedProvider([write_call(memory_dir, "x", "y")], delay=30)
    rt = project.runtime(provider=stuck)
    await rt.start()
    await turn(rt, [], "remember the x thing", "ok")
    assert rt.status()[1].state == "running"
    assert await rt.cancel("extraction") is True
    assert rt.status()[1].state == "cancelled"
    assert (await rt.end(timeout=1)).timed_out == []


def test_attach_joins_the_last_user_message() -> None:
    from memdir.recall.surface import Attachment

    att = Attachment(Path("/m/a.md"), "a.md", "Memory (saved today): /m/a.md:", "body\n", False)
    out = MemoryRuntime.attach([Message("user", "hi there")], [att])
    assert len(out) == 1 and isinstance(out[0].blocks[1], TextBlock)
    assert out[0].blocks[1].text.startswith("<system-reminder>\nMemory (saved today)")
    assert MemoryRuntime.attach([Message("assistant", "x")], [att])[-1].role == "user"


async def test_default_recall_is_the_offline_local_selector(project: Project) -> None:
    seed(project.store())
    rt = project.runtime(recall=None)  # built by start(): no provider -> local (BM25 + MiniLM)
    await rt.start()
    _, got = await turn(rt, [], "which grafana dashboard shows api latency?", "ok", wait=30)
    assert got == ["dashboard.md"]
    await rt.end()
