"""Team memory through the runtime, against a real sync server: pull at start, push at end."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.llm.base import Completion, Message
from memdir.llm.scripted import ScriptedProvider
from memdir.team.client import TeamSyncClient
from memdir.team.client_state import state_path
from tests.runtime.conftest import Project
from tests.team.conftest import make_token, run_sync
from tests.team.services import ServerProcess

REPO = "acme/runtime"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('srv') / 'team.db'}"
    proc = ServerProcess(url, max_entries=100).start()
    try:
        yield proc
    finally:
        proc.stop()


def member(tmp_path: Path, name: str) -> Project:
    root = tmp_path / name / "project"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = tmp_path / name / "home"
    home.mkdir()
    return Project(root, home, {"HOME": str(home)})


def client(project: Project, url: str, token: str) -> TeamSyncClient:
    paths = project.paths(project.settings(MEMDIR_TEAM_SYNC_URL=url))
    return TeamSyncClient(
        url=url,
        token=token,
        repo=REPO,
        team_dir=paths.team_dir,
        state_path=state_path(paths.cache_dir, url, REPO, paths.team_dir),
    )


async def test_a_team_memory_saved_in_one_session_reaches_the_next_teammate(
    server: ServerProcess, tmp_path: Path
) -> None:
    token = run_sync(make_token(server.db_url, REPO))
    env = {"MEMDIR_TEAM_SYNC_URL": server.url}
    alice, bob = member(tmp_path, "alice"), member(tmp_path, "bob")
    team_dir = alice.paths(alice.settings(**env)).team_dir
    text = "---\nname: Releases\ndescription: releases go out on tuesdays\ntype: project\n---\nx\n"
    extraction = ScriptedProvider(
        [
            Completion.from_tool_call(
                "Write", {"file_path": str(team_dir / "releases.md"), "content": text}
            ),
            Completion.from_text("done"),
        ]
    )
    rt = alice.runtime(env=env, provider=extraction, team_client=client(alice, server.url, token))
    report = await rt.start()
    assert "## MEMORY.md (team)" in report.system_prompt  # combined mode
    rt.on_user_message("our releases go out on tuesdays")
    messages = [Message("user", "our releases go out on tuesdays"), Message("assistant", "ok")]
    await rt.on_turn_end(messages)
    done = await rt.end(timeout=20)
    assert {"extraction", "team"} <= set(done.drained) and done.timed_out == [], done
    assert "Saved 1 team memory" in done.notices

    other = bob.runtime(env=env, team_client=client(bob, server.url, token))
    report = await other.start()
    assert "releases go out on tuesdays" in report.system_prompt
    assert (bob.paths(bob.settings(**env)).team_dir / "releases.md").read_text("utf-8") == text
    team = other.status()[4]
    assert team.name == "team" and team.state in ("ok", "running")
    await other.end(timeout=10)


async def test_an_unreachable_server_is_reported_and_the_session_goes_on(tmp_path: Path) -> None:
    alice = member(tmp_path, "alice")
    env = {"MEMDIR_TEAM_SYNC_URL": "http://127.0.0.1:9"}
    team = TeamSyncClient(
        url="http://127.0.0.1:9",
        token="t",
        repo=REPO,
        team_dir=alice.paths(alice.settings(**env)).team_dir,
        state_path=tmp_path / "state.json",
        sleep=_no_sleep,
    )
    rt = alice.runtime(env=env, team_client=team)
    report = await rt.start()
    assert report.system_prompt  # the prompt is still built
    status = rt.status()[4]
    assert status.state == "failed" and status.last_error
    await rt.end(timeout=5)


async def _no_sleep(_: float) -> None:
    return None
