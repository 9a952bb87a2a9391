"""Agent scopes: a full memory dir per agent type and scope, with the scope note in its prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.agents import agent_memory, check_scope, list_agents
from memdir.config import load_settings
from memdir.errors import ConfigError, UnsafePathError
from memdir.paths import ResolvedPaths, resolve_paths
from memdir.prompts.templates import render


@pytest.fixture
def paths(tmp_path: Path) -> ResolvedPaths:
    project = tmp_path / "project"
    project.mkdir()
    settings = load_settings(
        {"HOME": str(tmp_path / "home")}, cwd=project, flag_settings=None, claude_mode=True,
        memory_dir_flag=None, policy_dir=tmp_path / "no-policy",
    )  # fmt: skip
    return resolve_paths(settings, cwd=project)


@pytest.mark.parametrize("scope", ["user", "project", "local"])
def test_prompt_names_the_scope_and_embeds_the_index(paths: ResolvedPaths, scope: str) -> None:
    agent = agent_memory(paths, "code-reviewer", scope)
    store = agent.store()
    store.create("Naming", "snake_case everywhere", "feedback", "Use snake_case.")
    prompt = agent.prompt()
    assert render("modes.md", f"agent_scope_{scope}") in prompt
    assert str(agent.memory_dir) in prompt
    assert "snake_case everywhere" in prompt  # MEMORY.md line embedded


def test_claude_mode_uses_the_reference_dirs(paths: ResolvedPaths) -> None:
    assert agent_memory(paths, "a:b", "project").memory_dir == (
        paths.cwd / ".claude" / "agent-memory" / "a-b"
    )
    assert agent_memory(paths, "a:b", "user").memory_dir == (
        paths.memory_base / "agent-memory" / "a-b"
    )


def test_list_agents_finds_every_scope(paths: ResolvedPaths) -> None:
    for scope in ("local", "user"):
        agent_memory(paths, "tester", scope).store().create("X", "y", "user", "z")
    (paths.cwd / ".claude" / "agent-memory" / ".git").mkdir(parents=True)
    found = [(a.scope, a.agent_type, len(a.memory_files())) for a in list_agents(paths)]
    assert found == [("user", "tester", 1), ("local", "tester", 1)]


def test_bad_scope_and_type_are_refused(paths: ResolvedPaths) -> None:
    with pytest.raises(ConfigError):
        check_scope("global")
    with pytest.raises(UnsafePathError):
        agent_memory(paths, "../escape")
