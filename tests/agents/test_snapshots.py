"""Snapshots: none / initialize / prompt-update, initialize and replace, and hostile snapshots."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from memdir.agents import (
    AgentMemory,
    agent_memory,
    check_snapshot,
    initialize,
    replace,
    write_snapshot,
)
from memdir.agents.snapshots import MAX_FILE_BYTES, SNAPSHOT_JSON, SYNCED_JSON
from memdir.config import load_settings
from memdir.errors import SecretFoundError
from memdir.paths import ResolvedPaths, resolve_paths
from memdir.store import MemoryStore


@pytest.fixture
def paths(tmp_path: Path) -> ResolvedPaths:
    project = tmp_path / "project"
    project.mkdir()
    env = {"HOME": str(tmp_path / "home")}
    settings = load_settings(
        env, cwd=project, flag_settings=None, claude_mode=False, memory_dir_flag=None,
        policy_dir=tmp_path / "no-policy",
    )  # fmt: skip
    return resolve_paths(settings, cwd=project)


def make_snapshot(snapshot_dir: Path, updated_at: str, files: dict[str, str]) -> None:
    snapshot_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (snapshot_dir / name).write_text(text, "utf-8")
    (snapshot_dir / SNAPSHOT_JSON).write_text(json.dumps({"updatedAt": updated_at}), "utf-8")


MEMO = "---\nname: Style\ndescription: review style\ntype: feedback\n---\nBe terse.\n"


def test_scope_dirs_follow_the_reference_layout(paths: ResolvedPaths) -> None:
    assert agent_memory(paths, "plugin:reviewer", "user").memory_dir == (
        paths.memory_base / "agent-memory" / "plugin-reviewer"
    )
    assert agent_memory(paths, "reviewer", "project").memory_dir == (
        paths.cwd / ".memdir" / "agent-memory" / "reviewer"
    )
    assert agent_memory(paths, "reviewer", "local").memory_dir == (
        paths.cwd / ".memdir" / "agent-memory-local" / "reviewer"
    )


def test_no_snapshot_means_none(paths: ResolvedPaths) -> None:
    agent = agent_memory(paths, "reviewer")
    assert check_snapshot(agent, paths.agent_snapshot_dir("reviewer")).action == "none"


def test_fresh_dir_is_initialised_and_marked(paths: ResolvedPaths) -> None:
    agent = agent_memory(paths, "reviewer", "local")
    snap = paths.agent_snapshot_dir("reviewer")
    index = "- [Style](style.md) — terse\n"
    make_snapshot(snap, "2026-11-01T10:00:00.000Z", {"style.md": MEMO, "MEMORY.md": index})
    check = check_snapshot(agent, snap)
    assert check.action == "initialize"
    copied = initialize(agent, check)
    assert sorted(copied.copied) == ["MEMORY.md", "style.md"]
    assert (agent.memory_dir / "style.md").read_text("utf-8") == MEMO
    assert not (agent.memory_dir / SNAPSHOT_JSON).exists()
    marker = json.loads((agent.memory_dir / SYNCED_JSON).read_text("utf-8"))
    assert marker == {"syncedFrom": "2026-11-01T10:00:00.000Z"}
    assert check_snapshot(agent, snap).action == "none"
    # the store sees the copied memory as a normal one
    assert [h.filename for h in MemoryStore(agent.memory_dir).list()] == ["style.md"]


def test_newer_snapshot_prompts_an_update_and_replace_swaps_the_files(
    paths: ResolvedPaths,
) -> None:
    agent = agent_memory(paths, "reviewer")
    snap = paths.agent_snapshot_dir("reviewer")
    make_snapshot(snap, "2026-11-01T10:00:00Z", {"style.md": MEMO})
    initialize(agent, check_snapshot(agent, snap))
    MemoryStore(agent.memory_dir).create("Local note", "only here", "project", "mine")
    make_snapshot(snap, "2026-11-02T10:00:00+00:00", {"naming.md": MEMO.replace("Style", "Naming")})
    (snap / "style.md").unlink()
    check = check_snapshot(agent, snap)
    assert check.action == "prompt-update"
    assert check.synced_from == "2026-11-01T10:00:00Z"
    result = replace(agent, check)
    assert sorted(result.removed) == ["MEMORY.md", "local_note.md", "style.md"]
    assert sorted(p.name for p in agent.memory_dir.glob("*.md")) == ["naming.md"]
    assert check_snapshot(agent, snap).action == "none"


def test_local_memory_without_marker_prompts_instead_of_overwriting(paths: ResolvedPaths) -> None:
    agent = agent_memory(paths, "reviewer", "project")
    MemoryStore(agent.memory_dir).create("Mine", "hand made", "user", "body")
    snap = paths.agent_snapshot_dir("reviewer")
    make_snapshot(snap, "2020-01-01T00:00:00Z", {"style.md": MEMO})
    assert check_snapshot(agent, snap).action == "prompt-update"


def test_older_snapshot_than_marker_is_none(paths: ResolvedPaths) -> None:
    agent = agent_memory(paths, "reviewer")
    snap = paths.agent_snapshot_dir("reviewer")
    make_snapshot(snap, "2026-11-02T00:00:00Z", {"style.md": MEMO})
    initialize(agent, check_snapshot(agent, snap))
    make_snapshot(snap, "2026-11-01T00:00:00Z", {"style.md": MEMO})
    assert check_snapshot(agent, snap).action == "none"


@pytest.mark.parametrize(
    "meta", ["{not json", '{"updatedAt": 5}', '{"updatedAt": "yesterday"}', "[]"]
)
def test_corrupt_snapshot_json_is_reported_not_used(paths: ResolvedPaths, meta: str) -> None:
    agent = agent_memory(paths, "reviewer")
    snap = paths.agent_snapshot_dir("reviewer")
    snap.mkdir(parents=True)
    (snap / "style.md").write_text(MEMO, "utf-8")
    (snap / SNAPSHOT_JSON).write_text(meta, "utf-8")
    check = check_snapshot(agent, snap)
    assert check.action == "none"
    assert check.note is not None and str(snap / SNAPSHOT_JSON) in check.note


def test_hostile_snapshot_entries_are_skipped(paths: ResolvedPaths, tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE", "utf-8")
    agent = agent_memory(paths, "reviewer")
    snap = paths.agent_snapshot_dir("reviewer")
    make_snapshot(snap, "2026-11-01T00:00:00Z", {"ok.md": MEMO, "日本語メモ.md": MEMO})
    os.symlink(secret, snap / "key.md")
    (snap / "big.md").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    (snap / "sub").mkdir()
    (snap / ".hidden.md").write_text("x", "utf-8")
    result = initialize(agent, check_snapshot(agent, snap))
    assert sorted(result.copied) == ["ok.md", "日本語メモ.md"]
    reasons = dict(result.skipped)
    assert "symlink" in reasons["key.md"]
    assert "limit" in reasons["big.md"]
    assert "regular" in reasons["sub"]
    assert not (agent.memory_dir / "key.md").exists()
    assert not (agent.memory_dir / ".hidden.md").exists()


def test_write_snapshot_publishes_marks_and_prunes(paths: ResolvedPaths) -> None:
    agent = agent_memory(paths, "reviewer")
    store = MemoryStore(agent.memory_dir)
    store.create("Style", "review style", "feedback", "Be terse.")
    snap = paths.agent_snapshot_dir("reviewer")
    make_snapshot(snap, "2020-01-01T00:00:00Z", {"gone.md": MEMO})
    moment = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
    result = write_snapshot(agent, snap, clock=lambda: moment)
    assert result.updated_at == "2026-11-30T12:00:00.000Z"
    assert sorted(result.copied) == ["MEMORY.md", "style.md"]
    assert result.removed == ["gone.md"]
    assert json.loads((snap / SNAPSHOT_JSON).read_text("utf-8"))["updatedAt"] == result.updated_at
    # its own author is not asked to adopt what it just published
    assert check_snapshot(agent, snap).action == "none"
    # a teammate with an empty dir gets it
    teammate = AgentMemory("reviewer", "local", paths.agent_memory_dir("local", "reviewer"))
    assert check_snapshot(teammate, snap).action == "initialize"


def test_write_snapshot_refuses_credentials_and_writes_nothing(paths: ResolvedPaths) -> None:
    agent = agent_memory(paths, "reviewer")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    MemoryStore(agent.memory_dir).create("Token", "ci token", "reference", f"use {token} here")
    snap = paths.agent_snapshot_dir("reviewer")
    with pytest.raises(SecretFoundError) as caught:
        write_snapshot(agent, snap)
    assert token not in str(caught.value)
    assert not snap.exists()
