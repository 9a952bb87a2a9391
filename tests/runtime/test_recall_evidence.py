"""The runtime's recall checks each memory against the project's code (issue #37): a memory that
relies on something gone reaches the model as a one-line note, never as a fact."""

from __future__ import annotations

import shutil

from memdir.llm.base import Message
from memdir.runtime import RuntimeOptions
from tests.evidence.conftest import DB_V1, DB_V2, Repo
from tests.runtime.conftest import Project
from tests.runtime.test_lifecycle import turn

QUIET = RuntimeOptions(extraction="off", session_memory=False, dream=False)
FACT = "The orders service opens its connections with `psycopg2` in `connect_db`."


def _outgrown(project: Project) -> str:
    """A memory about psycopg2 in a repository that has since moved to asyncpg; its file."""
    shutil.rmtree(project.root / ".git")
    repo = Repo(project.root)
    repo.commit("db", {"src/db.py": DB_V1})
    memory = project.store().create(
        "Orders database driver", "how the orders service connects to PostgreSQL", "project", FACT
    )
    repo.written_now(project.store().path_of(memory.path))
    repo.commit("asyncpg", {"src/db.py": DB_V2})
    return memory.path


async def test_a_gone_anchor_turns_the_memory_into_a_note(project: Project) -> None:
    path = _outgrown(project)
    rt = project.runtime(recall=None, options=QUIET)
    await rt.start()
    messages, got = await turn(rt, [], "how does the orders service connect to postgres?", "ok",
                               wait=30)  # fmt: skip
    await rt.end()
    assert got == [path]
    text = messages[0].blocks[-1].text  # type: ignore[union-attr]
    assert "memdir held back the memory" in text and "psycopg2" in text
    assert "opens its connections" not in text


async def test_without_the_check_the_memory_is_served_as_written(project: Project) -> None:
    _outgrown(project)
    options = RuntimeOptions(extraction="off", session_memory=False, dream=False, evidence=False)
    rt = project.runtime(recall=None, options=options)
    await rt.start()
    messages, _ = await turn(rt, [], "how does the orders service connect to postgres?", "ok",
                             wait=30)  # fmt: skip
    await rt.end()
    assert "opens its connections" in messages[0].blocks[-1].text  # type: ignore[union-attr]
    assert isinstance(messages[0], Message)
