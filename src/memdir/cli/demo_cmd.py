"""``memdir demo``: the quick-start tour, offline, on a scratch memory dir.

It exercises the real paths a user relies on — the store and its index, the manifest, local
recall with the packaged embedding model, and the MCP server as a real stdio subprocess driven by
the official MCP client — so a green demo means the install works end to end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from memdir.cli.context import CliContext
from memdir.index import read_entrypoint
from memdir.recall.factory import build_recall
from memdir.recall.session import RecallSession
from memdir.scan import format_manifest
from memdir.store import MemoryStore
from memdir.team.guard import team_secret_guard

SAMPLES = [
    (
        "User role",
        "Senior Go engineer, new to the React side of the codebase",
        "user",
        "The user has written Go services for ten years and is new to React.\n\n"
        "How to apply: explain frontend ideas by analogy to backend concepts.",
    ),
    (
        "Database tests",
        "Integration tests must hit a real PostgreSQL, never mocks",
        "feedback",
        "Integration tests run against a real PostgreSQL started by the test fixtures.\n\n"
        "Why: mocked tests passed while a broken migration reached production.\n"
        "How to apply: any test under tests/integration/ gets the `postgres` fixture.",
    ),
    (
        "Release freeze",
        "Merge freeze for the mobile release starts 2026-12-10",
        "project",
        "No non-critical merges after 2026-12-10; the mobile team cuts the release branch.\n\n"
        "Why: release stabilisation. How to apply: flag risky PRs scheduled after that date.",
    ),
    (
        "Latency dashboard",
        "API latency dashboard lives at grafana.internal/d/api-latency",
        "reference",
        "Check grafana.internal/d/api-latency when touching request handling; on-call watches it.",
    ),
]
QUESTION = "how should I write the tests for the new database migration?"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="the quick-start tour on a scratch memory dir (offline)")
    p.add_argument("--no-mcp", action="store_true", help="skip the MCP server part")
    p.set_defaults(handler=cmd_demo)


def _say(ctx: CliContext, text: str = "") -> None:
    if not ctx.out.json_mode:
        ctx.out.stdout.write(text + "\n")
        ctx.out.stdout.flush()


def cmd_demo(ctx: CliContext) -> int:
    explicit = getattr(ctx.args, "dir", None)
    root = Path(explicit) if explicit else Path(tempfile.mkdtemp(prefix="memdir-demo-")) / "memory"
    cache = root.parent / ".memdir-demo-cache" if not explicit else ctx.paths.cache_dir
    store = MemoryStore(root, guards=[team_secret_guard(root=root)])
    report: dict[str, Any] = {"memory_dir": str(root)}

    _say(ctx, f"== memory dir: {root}")
    for name, description, mtype, body in SAMPLES:
        memory = store.create(name, description, mtype, body, overwrite=True)
        _say(ctx, f"saved {memory.path}")
    report["index"] = read_entrypoint(root)
    _say(ctx, "\n== MEMORY.md (loaded into the system prompt)\n" + report["index"].rstrip())
    report["manifest"] = format_manifest(store.list())
    _say(ctx, "\n== manifest (what a recall selector sees)\n" + report["manifest"])

    started = time.perf_counter()
    recall = build_recall(root, cache, kind="local")
    attachments = asyncio.run(recall.recall(QUESTION, RecallSession()))
    elapsed = time.perf_counter() - started
    report["recall"] = {"query": QUESTION, "picked": [a.filename for a in attachments]}
    _say(ctx, f"\n== recall (offline, {elapsed:.1f}s incl. model load): {QUESTION!r}")
    for att in attachments:
        _say(ctx, f"  -> {att.filename}  ({att.header.splitlines()[0]})")

    if not ctx.args.no_mcp:
        report["mcp"] = asyncio.run(_mcp_round_trip(root, ctx.env))
        _say(ctx, "\n== MCP server (`memdir mcp`) over stdio, driven by the official MCP client")
        _say(ctx, "tools: " + ", ".join(report["mcp"]["tools"]))
        _say(ctx, "memory_recall -> " + ", ".join(report["mcp"]["recalled"]))
    _say(ctx, "\nNext: attach `memdir mcp` to your MCP client (docs/mcp.md).")
    if ctx.out.json_mode:
        ctx.out.data(report)
    return 0


async def _mcp_round_trip(root: Path, env: Any) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    child_env = {k: v for k, v in dict(env).items() if k in ("HOME", "PATH", "LANG", "TMPDIR")}
    child_env.setdefault("PATH", os.defpath)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memdir", "--dir", str(root), "mcp"], env=child_env
    )
    async with Client(params) as client:
        tools = await client.list_tools()
        result = await client.call_tool("memory_recall", {"query": QUESTION})
    data = result.structured_content or {}
    memories = data.get("memories", []) if isinstance(data, dict) else []
    return {
        "tools": sorted(t.name for t in tools.tools),
        "recalled": [m.get("path", "?") for m in memories if isinstance(m, dict)],
        "is_error": bool(result.is_error),
    }
