"""Agent-type memory: each agent type (``code-reviewer``, ``plugin:tester``) has its own memory dir.

Three scopes, with the reference's layout (``:`` in a type becomes ``-``):

* ``user``    -> ``<memory base>/agent-memory/<type>/``           the agent's general knowledge
* ``project`` -> ``<project config>/agent-memory/<type>/``        shared through version control
* ``local``   -> ``<project config>/agent-memory-local/<type>/``  this project, this machine only

Each scope dir is a complete memory dir (its own ``MEMORY.md``, the same store, scan and recall);
the system prompt names the scope so the agent knows who will read what it saves. Nothing here
creates a directory until something is written into it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from memdir.errors import ConfigError
from memdir.index import ENTRYPOINT_NAME, read_entrypoint
from memdir.paths import AgentScope, ResolvedPaths
from memdir.prompts.memory import build_agent_memory_prompt
from memdir.store import MemoryStore

SCOPES: tuple[str, ...] = get_args(AgentScope)


def check_scope(scope: str) -> AgentScope:
    if scope not in SCOPES:
        raise ConfigError(f"unknown agent memory scope {scope!r} (user, project or local)")
    return scope  # type: ignore[return-value]  # narrowed by the membership test above


@dataclass(frozen=True)
class AgentMemory:
    """The memory dir of one agent type in one scope."""

    agent_type: str
    scope: AgentScope
    memory_dir: Path

    @property
    def entrypoint(self) -> Path:
        return self.memory_dir / ENTRYPOINT_NAME

    def store(self, *, header_cache: Path | None = None) -> MemoryStore:
        return MemoryStore(self.memory_dir, header_cache=header_cache)

    def exists(self) -> bool:
        return self.memory_dir.is_dir()

    def memory_files(self) -> list[Path]:
        """Top-level ``*.md`` files other than the index (what a snapshot carries)."""
        return sorted(p for p in _top_level_md(self.memory_dir) if p.name != ENTRYPOINT_NAME)

    def prompt(self, *, extra_guidelines: str | None = None) -> str:
        """The system-prompt section: mechanics, the scope note and the capped ``MEMORY.md``."""
        return build_agent_memory_prompt(
            self.memory_dir,
            scope=self.scope,
            index_text=read_entrypoint(self.memory_dir),
            extra_guidelines=extra_guidelines,
        )


def agent_memory(paths: ResolvedPaths, agent_type: str, scope: str = "user") -> AgentMemory:
    """The memory of ``agent_type`` in ``scope``; UnsafePathError for a malformed type name."""
    checked = check_scope(scope)
    return AgentMemory(agent_type, checked, paths.agent_memory_dir(checked, agent_type))


def scope_roots(paths: ResolvedPaths) -> dict[AgentScope, Path]:
    """The parent directory of every agent's dir, per scope."""
    probe = "x"
    return {scope: paths.agent_memory_dir(scope, probe).parent for scope in get_args(AgentScope)}


def list_agents(paths: ResolvedPaths) -> list[AgentMemory]:
    """Every agent memory dir that exists, by scope then name (dir names: ``:`` already ``-``)."""
    found: list[AgentMemory] = []
    for scope, root in scope_roots(paths).items():
        for child in _subdirs(root):
            found.append(AgentMemory(child.name, scope, child))
    return found


def _subdirs(root: Path) -> Iterator[Path]:
    try:
        children = sorted(root.iterdir())
    except OSError:  # no such dir yet: no agents in this scope
        return
    for child in children:
        if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
            yield child


def _top_level_md(root: Path) -> Iterator[Path]:
    try:
        children = list(root.iterdir())
    except OSError:
        return
    for child in children:
        if child.suffix == ".md" and child.is_file() and not child.name.startswith("."):
            yield child
