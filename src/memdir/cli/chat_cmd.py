"""``memdir chat``: a terminal agent that remembers, on the configured model.

The model comes from ``--model`` or ``MEMDIR_MODEL`` (``anthropic:<model>``, ``openai:<model>``,
``llamacpp:<file.gguf|smollm2>``, ``scripted:<replies.json>``); without one the command explains
how to configure one and exits 2. Team sync runs when ``MEMDIR_TEAM_SYNC_URL``, ``_TOKEN`` and
``_REPO`` are set. The session transcript goes to the reference's layout under memdir's home.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from memdir.cli.context import CliContext

NO_MODEL = """\
memdir chat needs a model. Set MEMDIR_MODEL (or pass --model), for example:

  export MEMDIR_MODEL=anthropic:claude-sonnet-5-5     # and ANTHROPIC_API_KEY
  export MEMDIR_MODEL=openai:gpt-4o-mini              # and OPENAI_API_KEY
  export MEMDIR_MODEL=openai:llama3.2@http://localhost:11434/v1   # Ollama, vLLM, llama.cpp server
  export MEMDIR_MODEL=llamacpp:/path/to/model.gguf    # in-process, pip install 'memdir[llamacpp]'
  export MEMDIR_MODEL=claude-code:haiku               # your Claude Code login (used by default
                                                      # when `claude` is on PATH)
  export MEMDIR_MODEL=scripted:replies.json           # replayed replies, to try it without a model

Memory itself needs no model: `memdir add`, `memdir recall` and `memdir mcp` work offline."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("chat", help="a terminal agent with memory (needs MEMDIR_MODEL)")
    p.add_argument("--model", help="provider spec (default: MEMDIR_MODEL)")
    p.add_argument("--agent", help="use this agent type's memory instead of the project's")
    p.add_argument("--scope", choices=("user", "project", "local"), default="user")
    p.add_argument(
        "--extract",
        choices=("auto", "llm", "rules", "off"),
        default="auto",
        help="how memories are extracted after each turn (auto: the model, if any)",
    )
    p.add_argument("--context-window", type=int, default=None, help="tokens (default by model)")
    p.add_argument("--hide-recall", action="store_true", help="do not print recalled memories")
    p.add_argument(
        "--no-tools",
        action="store_true",
        help="offer the model no tools (for small local models that cannot use them)",
    )
    p.add_argument(
        "--recall-wait",
        type=float,
        default=2.0,
        help="seconds a turn may wait for recall before the model call (default 2)",
    )
    p.set_defaults(handler=cmd_chat)


def _context_window(spec: str, given: int | None) -> int:
    if given is not None:
        return given
    return 4096 if spec.startswith("llamacpp:") else 200_000


def _team_client(ctx: CliContext) -> Any:
    settings = ctx.settings
    if not (settings.team_sync_url and settings.team_token and settings.team_repo):
        if settings.team_sync_url:
            ctx.out.warn("team sync off: set MEMDIR_TEAM_TOKEN and MEMDIR_TEAM_REPO as well")
        return None
    from memdir.team.client import TeamSyncClient
    from memdir.team.client_state import state_path

    paths = ctx.paths
    url, repo = settings.team_sync_url, settings.team_repo
    return TeamSyncClient(
        url=url,
        token=settings.team_token,
        repo=repo,
        team_dir=paths.team_dir,
        state_path=state_path(paths.cache_dir, url, repo, paths.team_dir),
    )


async def _read_line(prompt: str) -> str | None:
    try:
        return await asyncio.to_thread(input, prompt)
    except EOFError:
        return None


def _host_spec(ctx: CliContext) -> str | None:
    """With no model configured, the user's own Claude Code CLI when it is installed."""
    from memdir.adapters.hooks.hostmodel import HOST_SPEC_PREFIX, host_model_on
    from memdir.llm.claude_code import find_cli

    if host_model_on(ctx.settings) and find_cli(ctx.env) is not None:
        return HOST_SPEC_PREFIX + ctx.settings.host_model
    return None


def cmd_chat(ctx: CliContext) -> int:
    spec = ctx.args.model or ctx.settings.model or _host_spec(ctx)
    if not spec:
        ctx.out.stderr.write(NO_MODEL + "\n")
        return 2
    from memdir.adapters.chat import ChatOptions, ChatSession
    from memdir.adapters.hooks.hostmodel import host_ledger
    from memdir.agent.toolset import ToolBox
    from memdir.agents import agent_memory
    from memdir.llm.factory import provider_from_spec
    from memdir.runtime import MemoryRuntime, RuntimeOptions

    # the ledger (costs, daily budget) only matters to claude-code:<model>
    provider = provider_from_spec(spec, ctx.env, ledger=host_ledger(ctx.settings), cwd=ctx.cwd)
    agent = agent_memory(ctx.paths, ctx.args.agent, ctx.args.scope) if ctx.args.agent else None
    runtime = MemoryRuntime(
        ctx.settings,
        ctx.paths,
        provider=provider,
        agent=agent,
        team_client=_team_client(ctx) if agent is None else None,
        options=RuntimeOptions(extraction=ctx.args.extract, model_name=spec),
    )
    options = ChatOptions(
        context_window=_context_window(spec, ctx.args.context_window),
        show_recall=not ctx.args.hide_recall,
        recall_wait=ctx.args.recall_wait,
    )
    toolset = ToolBox([]) if ctx.args.no_tools else None
    session = ChatSession(runtime, provider, ctx.out.stdout, options=options, toolset=toolset)
    for warning in ctx.settings.warnings:
        ctx.out.warn(warning)
    return asyncio.run(session.run(_read_line))
