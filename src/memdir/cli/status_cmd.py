"""``memdir status``: what memdir runs on here, and what the host model cost today.

Shows the memory dir, the model the background paths use (``MEMDIR_MODEL``, else the user's own
Claude Code CLI, else none) and where that came from, and the host-model ledger: today's calls,
dollars and tokens, per session, against the daily budget. Reads only; never calls a model.
"""

from __future__ import annotations

import argparse
from typing import Any

from memdir.cli.context import CliContext
from memdir.cli.output import table


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("status", help="memory dir, background model, host-model spend today")
    p.set_defaults(handler=cmd_status)


def status_payload(ctx: CliContext) -> dict[str, Any]:
    from memdir.adapters.hooks.hostmodel import host_ledger, host_model_on
    from memdir.llm.claude_code import find_cli

    settings = ctx.settings
    ledger = host_ledger(settings)
    cli = find_cli(ctx.env)
    hosts = installed_summary(ctx)
    return {
        "memory_dir": str(ctx.memory_dir),
        "hosts": hosts,
        "background_model": headline_model(ctx, hosts),
        "background_model_source": (
            settings.sources.get("model") if settings.model else settings.sources.get("host_model")
        ),
        "recall": settings.recall_selector or "local",
        "search_index": _index_status(ctx),
        "host_model": {
            "on": host_model_on(settings) and not settings.model,
            "model": settings.host_model,
            "cli": cli,
            "budget_usd": settings.host_model_budget_usd,
            "remaining_usd": round(ledger.remaining() or 0.0, 6),
            "today": ledger.spend().as_dict(),
            "ledger": str(ledger.path),
        },
    }


def installed_summary(ctx: CliContext) -> list[dict[str, Any]]:
    """Each host memdir is installed in, its files, and the model its background work uses."""
    from memdir.adapters.hooks.hostmodel import background_spec
    from memdir.adapters.hooks.install import InstallRecord, installed_hosts
    from memdir.adapters.hosts import DIALECTS, dialect
    from memdir.cli.installs_here import split_record
    from memdir.errors import InstallError

    try:
        record = InstallRecord(ctx.settings.memdir_home).load()
    except InstallError:
        return []
    here, other = split_record(record, ctx)
    out = []
    for where, part in (("here", here), ("elsewhere", other)):
        for host, files in installed_hosts(part).items():
            hooks = sum(f["hooks"] for f in files)
            model = None
            untested = None
            if host in DIALECTS:
                untested = getattr(dialect(host), "untested", None)
                if hooks:
                    model = background_spec(ctx.settings, dialect(host).model_provider)
            out.append(
                {
                    "host": host,
                    "files": files,
                    "hooks": hooks,
                    "background_model": model,
                    "where": where,  # "elsewhere": another repository's install
                    "untested": untested,  # why memdir never ran this host's real CLI
                }
            )
    return out


def runs_label(host: dict[str, Any]) -> str:
    """ "5 hooks + MCP server", "5 hooks" (pi, Cline: no MCP), "MCP server" (Claude Desktop)."""
    mcp = any(f.get("mcp_server") for f in host["files"])
    if not host["hooks"]:
        return "MCP server"
    return f"{host['hooks']} hooks" + (" + MCP server" if mcp else "")


def headline_model(ctx: CliContext, hosts: list[dict[str, Any]]) -> str | None:
    """The background model to headline: the default host's (Claude Code), unless memdir's
    hooks run here only in hosts with another (Codex, Gemini CLI) or none."""
    from memdir.adapters.hooks.hostmodel import background_spec

    hooked = [h for h in hosts if h["where"] == "here" and h["hooks"]]
    if not hooked or any(h["host"] == "claude-code" for h in hooked):
        return background_spec(ctx.settings)
    return next((h["background_model"] for h in hooked if h["background_model"]), None)


def _text(p: dict[str, Any]) -> str:
    host = p["host_model"]
    today = host["today"]
    lines = [
        f"memory dir        {p['memory_dir']}",
        f"background model  {p['background_model'] or 'none (offline)'}"
        f"  [{p['background_model_source']}]",
        f"recall            {p['recall']}",
        *(f"search index      {line}" for line in _index_lines(p["search_index"])),
        f"host model        {'on' if host['on'] else 'off'} ({host['model']}; "
        f"claude: {host['cli'] or 'not found'})",
        f"today             ${today['cost_usd']:.4f} of ${host['budget_usd']:.2f} "
        f"in {today['calls']} calls ({today['input_tokens']}+{today['output_tokens']} tokens)",
    ]
    for h in p["hosts"]:
        if h["where"] != "here":
            continue
        runs = runs_label(h)
        model = (
            f"; background model {h['background_model'] or 'none (offline)'}" if h["hooks"] else ""
        )
        where = ", ".join(f["path"] for f in h["files"])
        lines.append(f"installed in      {h['host']}: {runs}{model} ({where})")
        if h["untested"]:
            lines.append(f"                  {h['host']}: {h['untested']}")
    if not any(h["where"] == "here" for h in p["hosts"]):
        lines.append("installed in      no host here (memdir install <host>)")
    others = sorted({h["host"] for h in p["hosts"] if h["where"] != "here"})
    if others:
        lines.append(f"elsewhere         other repositories have {', '.join(others)}")
    sessions = [{"session": s, "cost": f"${c:.4f}"} for s, c in today["by_session"].items()]
    if sessions:
        lines += ["", table(sessions, ["session", "cost"])]
    return "\n".join(lines)


def _index_status(ctx: CliContext) -> dict[str, Any]:
    """Each saved search index: memories, and how many passages the model has read."""
    try:
        from memdir.recall.index_files import read_status
    except ImportError:  # the recall extra (numpy) is missing: keyword recall has no index
        return {}
    return read_status(ctx.paths.cache_dir)


def _index_lines(indexes: dict[str, Any]) -> list[str]:
    if not indexes:
        return ["none yet (built by the first recall or `memdir reindex`)"]
    lines = []
    for name, s in indexes.items():
        if "problem" in s:
            lines.append(f"{name}: unreadable ({s['problem']})")
        elif s["embedded"] >= s["passages"]:
            lines.append(f"{name}: {s['memories']} memories, all read by the model")
        else:
            lines.append(
                f"{name}: {s['memories']} memories searchable; the model has read "
                f"{s['embedded']} of {s['passages']} passages (the rest rank by the fast stage "
                "until a long-lived host or `memdir reindex` finishes)"
            )
    return lines


def cmd_status(ctx: CliContext) -> int:
    payload = status_payload(ctx)
    ctx.out.data(payload, _text(payload))
    return 0
