"""The issue's user story through the real hook processes: a memory about `src/db.py` using
psycopg2 is recalled on a cold daemon's first prompt; after the switch to asyncpg the next
prompt carries a one-line note instead of the stale fact, `memdir stale` lists it, and once the
memory is fixed and confirmed it is served again."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adapters.hooks.fakehost import FakeHost
from tests.evidence.conftest import DB_V1, DB_V2, Repo

FACT = "src/db.py connects to PostgreSQL with psycopg2"


@pytest.fixture(params=["claude-code", "gemini"])
def host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[FakeHost, Repo]]:
    # the check's own budget made roomy: on a busy machine git alone may take the 0.15 s a prompt
    # gives it (a check cut short: tests/evidence/test_hostile.py)
    fake = FakeHost(tmp_path, host=request.param, env={"MEMDIR_EVIDENCE_SECONDS": "20"})
    shutil.rmtree(fake.project / ".git")
    repo = Repo(fake.project)
    repo.commit("db layer", {"src/db.py": DB_V1})
    yield fake, repo
    fake.stop_daemon()


def prompt(fake: FakeHost, text: str) -> str:
    session = str(uuid.uuid4())
    names = {"claude-code": "UserPromptSubmit", "gemini": "BeforeAgent"}
    body = {
        "session_id": session,
        "transcript_path": str(fake.root / f"{session}.jsonl"),
        "cwd": str(fake.project),
        "hook_event_name": names[fake.host],
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
        "prompt": text,
    }
    run = fake.run("user-prompt-submit", body)
    assert run.code == 0 and "Traceback" not in run.stderr, run.stderr
    return run.context


def test_a_stale_memory_is_held_back_listed_fixed_and_served_again(
    host: tuple[FakeHost, Repo],
) -> None:
    fake, repo = host
    added = fake.memdir(
        "add", "DB driver", "-t", "project", "-d", "how the app talks to PostgreSQL",
        "-b", f"`src/db.py` connects to PostgreSQL with `psycopg2` ({FACT}).",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    [memory] = list(fake.memory_dir.glob("db_driver*.md"))
    repo.written_now(memory)

    fake.stop_daemon()  # the next morning: a cold daemon
    first = prompt(fake, "add a query to the orders table in the db layer")
    assert FACT in first and "held back" not in first

    repo.commit("switch src/db.py to asyncpg", {"src/db.py": DB_V2})
    after = prompt(fake, "add a query to the orders table in the db layer")
    assert FACT not in after
    [note] = [line for line in after.splitlines() if "held back" in line]
    assert "psycopg2" in note and memory.name in note

    listed = fake.memdir("--json", "stale")
    assert listed.returncode == 1
    [row] = json.loads(listed.stdout)
    assert row["path"] == memory.name and row["state"] == "held back"
    checked = fake.memdir("--json", "recall", "add a query to the orders table in the db layer")
    [hit] = json.loads(checked.stdout)
    assert hit["held_back"] is True
    assert {"anchor": "psycopg2", "state": "gone"}.items() <= hit["evidence"][1].items()

    # the agent fixes the memory and confirms it against the code as it is now
    memory.write_text(memory.read_text().replace("`psycopg2`", "`asyncpg`").replace(FACT, "pool"))
    assert fake.memdir("stale", "--confirm", memory.name).returncode == 0
    assert "verified:" in memory.read_text()
    assert fake.memdir("stale").returncode == 0
    again = prompt(fake, "add a query to the orders table in the db layer")
    assert "connects to PostgreSQL with `asyncpg`" in again and "held back" not in again


def test_the_check_budget_is_a_setting_with_a_clear_error() -> None:
    from memdir.errors import ConfigError
    from memdir.evidence.service import budget

    assert budget({}, 0.15) == 0.15
    assert budget({"MEMDIR_EVIDENCE_SECONDS": "2.5"}, 0.15) == 2.5
    for bad in ("soon", "0", "-1", "31", "nan"):
        with pytest.raises(ConfigError, match="MEMDIR_EVIDENCE_SECONDS"):
            budget({"MEMDIR_EVIDENCE_SECONDS": bad}, 0.15)
