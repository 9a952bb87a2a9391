"""``memdir agent list | show TYPE | snapshot TYPE | sync TYPE``: agent-type memory and snapshots.

``--scope`` (user, project or local; default user) picks which of the agent's memory dirs a
command acts on. ``sync`` initialises an empty dir from the project's snapshot without asking;
replacing existing memories needs ``--yes`` (or a "y" at the prompt on a terminal).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memdir.agents import (
    SCOPES,
    AgentMemory,
    agent_memory,
    check_snapshot,
    initialize,
    list_agents,
    replace,
    write_snapshot,
)
from memdir.agents.snapshots import SnapshotCopy
from memdir.cli.context import CliContext
from memdir.cli.output import table
from memdir.errors import MemoryNotFoundError
from memdir.index import load_for_prompt, read_entrypoint


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    agent = sub.add_parser("agent", help="agent-type memory (user/project/local) and snapshots")
    asub = agent.add_subparsers(dest="agent_command", metavar="<command>", required=True)
    asub.add_parser("list", help="every agent memory dir and its snapshot state").set_defaults(
        handler=cmd_list
    )
    for name, handler, text in (
        ("show", cmd_show, "an agent's memory dir, index and snapshot state"),
        ("snapshot", cmd_snapshot, "publish the agent's memory as the project snapshot"),
        ("sync", cmd_sync, "adopt the project snapshot (initialise, or replace with --yes)"),
    ):
        p = asub.add_parser(name, help=text)
        p.add_argument("type", help="agent type, e.g. code-reviewer (':' becomes '-')")
        p.add_argument("--scope", choices=SCOPES, default="user")
        if name == "sync":
            p.add_argument("--yes", action="store_true", help="replace local memories if newer")
        p.set_defaults(handler=handler)


def _agent(ctx: CliContext) -> AgentMemory:
    return agent_memory(ctx.paths, ctx.args.type, ctx.args.scope)


def _state(ctx: CliContext, agent: AgentMemory) -> dict[str, Any]:
    check = check_snapshot(agent, ctx.paths.agent_snapshot_dir(agent.agent_type))
    return {
        "action": check.action,
        "snapshot_dir": str(check.snapshot_dir),
        "updated_at": check.updated_at,
        "synced_from": check.synced_from,
        "note": check.note,
    }


def cmd_list(ctx: CliContext) -> int:
    rows: list[dict[str, Any]] = []
    for agent in list_agents(ctx.paths):
        rows.append(
            {
                "type": agent.agent_type,
                "scope": agent.scope,
                "memories": len(agent.memory_files()),
                "snapshot": _state(ctx, agent)["action"],
                "dir": str(agent.memory_dir),
            }
        )
    snapshots = ctx.paths.agent_snapshot_dir("x").parent
    known = {r["type"] for r in rows}
    for child in sorted(snapshots.iterdir()) if snapshots.is_dir() else []:
        if child.is_dir() and child.name not in known:
            rows.append(
                {"type": child.name, "scope": "-", "memories": 0, "snapshot": "available",
                 "dir": str(child)}
            )  # fmt: skip
    ctx.out.data(rows, table(rows, ["type", "scope", "memories", "snapshot", "dir"]))
    return 0


def cmd_show(ctx: CliContext) -> int:
    agent = _agent(ctx)
    index_text = read_entrypoint(agent.memory_dir)
    snap = _state(ctx, agent)
    payload: dict[str, Any] = {
        "type": agent.agent_type,
        "scope": agent.scope,
        "dir": str(agent.memory_dir),
        "exists": agent.exists(),
        "memories": [p.name for p in agent.memory_files()],
        "index": index_text,
        "snapshot": snap,
    }
    lines = [
        f"{agent.agent_type} ({agent.scope} scope): {agent.memory_dir}",
        f"memories: {len(payload['memories'])}",
        f"snapshot: {snap['action']}"
        + (f" (snapshot of {snap['updated_at']})" if snap["updated_at"] else ""),
    ]
    if snap["note"]:
        lines.append(f"note: {snap['note']}")
    lines += ["", load_for_prompt(index_text).content or "(MEMORY.md is empty)"]
    ctx.out.data(payload, "\n".join(lines))
    return 0


def _copy_payload(agent: AgentMemory, action: str, copy: SnapshotCopy) -> dict[str, Any]:
    return {
        "type": agent.agent_type,
        "scope": agent.scope,
        "action": action,
        "updated_at": copy.updated_at,
        "copied": copy.copied,
        "removed": copy.removed,
        "skipped": [{"file": name, "reason": why} for name, why in copy.skipped],
    }


def _copy_text(verb: str, payload: dict[str, Any]) -> str:
    lines = [f"{verb} {len(payload['copied'])} file(s) ({payload['updated_at']})"]
    lines += [f"  - removed {name}" for name in payload["removed"]]
    lines += [f"  ! skipped {s['file']}: {s['reason']}" for s in payload["skipped"]]
    return "\n".join(lines)


def cmd_snapshot(ctx: CliContext) -> int:
    agent = _agent(ctx)
    if not agent.exists():
        raise MemoryNotFoundError(f"agent {agent.agent_type!r} has no {agent.scope} memory dir")
    target = ctx.paths.agent_snapshot_dir(agent.agent_type)
    payload = _copy_payload(agent, "snapshot", write_snapshot(agent, target))
    payload["snapshot_dir"] = str(target)
    ctx.out.data(payload, _copy_text(f"snapshot {target}:", payload))
    return 0


def _confirm(ctx: CliContext, question: str) -> bool:
    if ctx.out.json_mode or not sys.stdin.isatty():
        return False
    ctx.out.stdout.write(f"{question} [y/N] ")
    ctx.out.stdout.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def cmd_sync(ctx: CliContext) -> int:
    agent = _agent(ctx)
    check = check_snapshot(agent, ctx.paths.agent_snapshot_dir(agent.agent_type))
    if check.note:
        ctx.out.warn(check.note)
    if check.action == "none":
        ctx.out.data({"type": agent.agent_type, "action": "none"}, "nothing to sync")
        return 0
    if check.action == "initialize":
        payload = _copy_payload(agent, "initialize", initialize(agent, check))
        ctx.out.data(payload, _copy_text("initialised from the snapshot:", payload))
        return 0
    question = (
        f"the project snapshot of {agent.agent_type} ({check.updated_at}) is newer than its "
        f"{agent.scope} memory; replace the local memories with it?"
    )
    if not (ctx.args.yes or _confirm(ctx, question)):
        ctx.out.data(
            {"type": agent.agent_type, "action": "prompt-update", "updated_at": check.updated_at},
            f"{question}\nrun again with --yes to replace (local memories are deleted first)",
        )
        return 1
    payload = _copy_payload(agent, "replace", replace(agent, check))
    ctx.out.data(payload, _copy_text("replaced from the snapshot:", payload))
    return 0
