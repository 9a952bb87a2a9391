"""Agent-type memory scopes (user / project / local) and project snapshots of them."""

from memdir.agents.scopes import SCOPES, AgentMemory, agent_memory, check_scope, list_agents
from memdir.agents.snapshots import (
    SnapshotCheck,
    SnapshotCopy,
    check_snapshot,
    initialize,
    replace,
    write_snapshot,
)

__all__ = [
    "SCOPES",
    "AgentMemory",
    "SnapshotCheck",
    "SnapshotCopy",
    "agent_memory",
    "check_scope",
    "check_snapshot",
    "initialize",
    "list_agents",
    "replace",
    "write_snapshot",
]
