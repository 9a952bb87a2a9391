"""The runtime's session-notes step, with the session package's offline updater."""

from __future__ import annotations

from memdir.llm.base import Message
from memdir.runtime import RuntimeOptions
from memdir.session import OfflineUpdater, SessionMemory, SessionMemoryConfig
from tests.runtime.conftest import Project
from tests.runtime.test_lifecycle import turn


async def test_notes_are_kept_in_the_background_and_drained_at_end(project: Project) -> None:
    paths = project.paths()
    rt = project.runtime(options=RuntimeOptions(extraction="off"))
    sid = rt.session_id
    rt.session_memory = SessionMemory(
        paths.session_memory_path(sid), OfflineUpdater(), config=SessionMemoryConfig(init_tokens=5)
    )
    await rt.start()
    messages: list[Message] = []
    messages, _ = await turn(rt, messages, "please refactor the parser in src/parse.py", "Done.")
    report = await rt.end(timeout=10)
    notes = paths.session_memory_path(sid).read_text("utf-8")
    assert "src/parse.py" in notes or "refactor the parser" in notes
    assert "session_memory" in report.drained or rt.status()[2].state == "ok"
    status = rt.status()[2]
    assert status.state == "ok" and status.runs == 1 and "offline" in status.detail


async def test_short_sessions_write_no_notes(project: Project) -> None:
    rt = project.runtime(options=RuntimeOptions(extraction="off"))
    await rt.start()
    await turn(rt, [], "a short question here", "short answer")
    await rt.end()
    assert not project.paths().session_memory_path(rt.session_id).exists()  # under 10k tokens
    assert rt.status()[2].runs == 0


async def test_notes_can_be_turned_off(project: Project) -> None:
    rt = project.runtime(options=RuntimeOptions(session_memory=False))
    await rt.start()
    assert rt.status()[2].state == "off"
    await rt.end()
