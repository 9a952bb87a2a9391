"""Recall off the event loop: the same answers as the engine, and the loop stays free."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from memdir.recall.engine import MemoryRecall
from memdir.recall.keyword import KeywordSelector
from memdir.recall.session import RecallSession
from memdir.runtime.recall_step import MemoRecallSession, find, inline
from tests.runtime.conftest import Project, seed
from tests.runtime.test_lifecycle import SlowSelector


async def test_inline_twin_gives_the_engines_answer_on_a_worker_thread(project: Project) -> None:
    seed(project.store())
    memory_dir = project.paths().memory_dir
    recall = MemoryRecall(memory_dir, KeywordSelector())
    twin = inline(recall)
    assert twin is not None
    query = "how do I write database tests?"
    expected = await recall.find(query, RecallSession())
    threads: list[str] = []
    original = twin.candidates

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    twin.candidates = spy  # type: ignore[method-assign]
    got = await find(recall, query, MemoRecallSession(), (), local=twin)
    assert [m.filename for m in got] == [m.filename for m in expected] == ["database_tests.md"]
    assert threads and threads[0] != threading.current_thread().name


def test_selectors_that_await_are_not_run_in_place(project: Project) -> None:
    memory_dir = project.paths().memory_dir
    assert inline(MemoryRecall(memory_dir, SlowSelector(0.1))) is None  # type: ignore[arg-type]


def test_memo_session_still_sees_through_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("x", "utf-8")
    link = tmp_path / "link.md"
    os.symlink(real, link)
    session = MemoRecallSession()
    session.mark_read([link])
    assert session.seen(real) and session.seen(link) and session.seen(str(real))
    assert not session.seen(tmp_path / "other.md")
