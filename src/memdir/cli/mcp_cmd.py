"""``memdir mcp``: serve the resolved memory dir to MCP clients (stdio, or HTTP on loopback).

The memory and cache dirs come from the CLI context (flags, settings, injected env), never from
the server itself. On stdio, stdout belongs to the protocol: nothing else is printed there.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.cli.context import CliContext
from memdir.evidence.service import enabled as evidence_enabled

if TYPE_CHECKING:
    from memdir.adapters.mcp_early import EarlyAnswers

# With --preload: seconds after start before the SDK loads unasked. The handshake is answered by
# then and the host is busy with its own start and first model request, not with us.
PRELOAD_AFTER = 0.5


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp",
        help="run an MCP server over the memory dir (for Claude Desktop, Cursor, agent SDKs)",
        description="Serve memory tools (recall, read, list, save, edit, delete, rename, index), "
        "MEMORY.md and the memory instructions to any MCP client.",
    )
    # Also accepted after "mcp" (client configs read better that way); SUPPRESS keeps a global
    # ``memdir --dir X mcp`` from being reset to None by the subcommand's default.
    p.add_argument("--dir", type=Path, default=argparse.SUPPRESS, help="the memory dir (absolute)")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (loopback only)")
    # mcp_server.DEFAULT_HTTP_PORT, not imported so that parsing never loads the mcp SDK
    p.add_argument("--port", type=int, default=8766, help="HTTP port (default 8766)")
    p.add_argument(
        "--preload",
        action="store_true",
        help="load the MCP SDK and start the recall index a moment after the handshake instead "
        "of at the first tool call (for hosts whose only recall is the agent calling "
        "memory_recall: Cursor, Claude Desktop)",
    )
    p.set_defaults(handler=cmd_mcp)


def _before_stdio_sdk(ctx: CliContext) -> EarlyAnswers | None:
    """What stdio serving sets up before the (slow) SDK import: signals end the process from
    the first moment, and the handshake is answered while the SDK loads — only when the SDK is
    there to take over (else the missing-extra error is all the client gets)."""
    from memdir.adapters import mcp_early
    from memdir.adapters.stdio_exit import exit_on_stop_signals

    if mcp_early.started is not None:  # the console script put them up before the CLI loaded
        return mcp_early.started
    exit_on_stop_signals()
    if ctx.env.get("MEMDIR_MCP_EARLY", "1") in ("0", "off") or not importlib.util.find_spec("mcp"):
        return None
    from memdir import __version__
    from memdir.adapters.mcp_early import start_early_answers

    return start_early_answers(__version__)


def cmd_mcp(ctx: CliContext) -> int:
    args = ctx.args
    early = _before_stdio_sdk(ctx) if args.transport == "stdio" else None
    # a bad setting or memory dir is said now, in one line on stderr, and ends the server: not
    # at the first tool call, and not never (a session that calls no tool ends at stdin's EOF)
    ctx.paths  # noqa: B018 - resolving them reads and checks the settings
    if early is not None:
        # the handshake is answered; load the SDK when a call needs it (or soon, to preload)
        early.sdk_needed.wait(timeout=PRELOAD_AFTER if args.preload else None)
    from memdir.adapters.mcp_server import build_server, check_loopback, serve
    from memdir.prompts import build_prompt_for_paths

    if args.transport == "http":
        check_loopback(args.host)  # refuse before touching anything
    if not ctx.settings.auto_memory_enabled:
        reason = ctx.settings.sources.get("auto_memory_enabled", "settings")
        ctx.out.warn(f"auto memory is disabled ({reason}); serving anyway, as asked")

    def mechanics() -> str:  # settings-aware (team / daily-log mode), read on each request
        return build_prompt_for_paths(
            ctx.paths, ctx.settings, skip_index=True, include_index=False, search_past_context=False
        )

    server = build_server(
        ctx.store(),
        cache_dir=ctx.paths.cache_dir,
        mechanics=mechanics,
        warm=True,
        project_root=ctx.paths.project_root if evidence_enabled(ctx.env) else None,
    )
    if args.transport == "http":
        ctx.out.warn(f"MCP server on http://{args.host}:{args.port}/mcp (Ctrl-C to stop)")
    serve(server, args.transport, host=args.host, port=args.port)
    if early is not None:
        early.close()
    return 0
