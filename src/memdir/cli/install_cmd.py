"""``memdir install <host>`` / ``memdir uninstall <host>``: wire memdir into an agent host.

Hosts with hooks (``claude-code``, ``codex``, ``gemini``, ``cursor``:
:mod:`memdir.adapters.hosts`) get the hooks (recall per prompt, extraction at stop, ...) and the
MCP server; ``claude-desktop`` gets the MCP server. Global flags given here (``--claude``,
``--dir``, ``--settings``) are written into the installed commands, so the host runs memdir the
way it was installed. ``--dry-run`` prints the diff and writes nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.cli.context import CliContext

if TYPE_CHECKING:
    from memdir.adapters.hooks.dialect import Locations
    from memdir.adapters.hooks.install import FileChange


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from memdir.adapters.hosts import names

    for name, verb in (("install", "add memdir to"), ("uninstall", "remove memdir from")):
        p = sub.add_parser(name, help=f"{verb} an agent host ({', '.join(names())})")
        p.add_argument("host", choices=names())
        scope = p.add_mutually_exclusive_group()
        scope.add_argument("--user", dest="scope", action="store_const", const="user")
        scope.add_argument("--project", dest="scope", action="store_const", const="project")
        p.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
        if name == "install":
            p.add_argument(
                "--llm",
                choices=("host", "key", "off"),
                default="host",
                help="model for background memory work: host = the host's own CLI and login "
                "(default), key = MEMDIR_MODEL with your own API key, off = offline only",
            )
        p.set_defaults(handler=cmd_install if name == "install" else cmd_uninstall, scope="user")


def _command(ctx: CliContext, host: str) -> list[str]:
    from memdir.adapters.hooks.install import memdir_command

    args = ctx.args
    command = memdir_command(ctx.env)
    if host == "claude-desktop" and args.dir is None:
        command += ["--dir", str(ctx.memory_dir)]  # the desktop app has no project directory
    elif args.dir is not None:
        command += ["--dir", str(Path(args.dir).absolute())]
    if args.settings is not None:
        command += ["--settings", str(Path(args.settings).absolute())]
    if ctx.settings.claude_mode:
        command.append("--claude")
    return command


def _locations(ctx: CliContext) -> Locations:
    from memdir.adapters.hooks.dialect import Locations

    home = Path(ctx.env["HOME"]) if ctx.env.get("HOME") else Path.home()
    return Locations.from_env(ctx.env, home=home, project_root=ctx.paths.project_root)


def _report(
    ctx: CliContext,
    changes: list[FileChange],
    backups: list[str],
    *,
    dry_run: bool,
    notes: list[str] | None = None,
) -> int:
    diff = "".join(c.diff() for c in changes)
    payload = {
        "dry_run": dry_run,
        "files": [{"path": str(c.path), "changed": c.changed} for c in changes],
        "backups": backups,
        "diff": diff,
        "model": notes or [],
    }
    if dry_run:
        text = diff or "(no changes: already as wanted)"
    else:
        lines = [f"{'updated' if c.changed else 'unchanged'}: {c.path}" for c in changes]
        lines += [f"backup: {b}" for b in backups]
        text = "\n".join(lines) or "(nothing to do)"
    if notes:
        text += "\n\n" + "\n".join(notes)
    ctx.out.data(payload, text)
    return 0


def _refuse_duplicates(ctx: CliContext, loc: Locations) -> None:
    """Two active forms run every hook twice and inject their context twice: refuse."""
    from memdir.adapters.hosts.claude_code.duplicates import active_plugin, conflicts
    from memdir.errors import InstallError

    found = conflicts(
        ctx.args.scope,
        user_settings=loc.claude_config_dir / "settings.json",
        project_settings=loc.project_root / ".claude" / "settings.json",
        plugin=active_plugin(loc.claude_config_dir, loc.project_root),
    )
    if found:
        raise InstallError(
            "memdir already runs in Claude Code through "
            + "; and ".join(found)
            + " — a second install would run every hook twice and add its context twice"
        )


def cmd_install(ctx: CliContext) -> int:
    from memdir.adapters.hooks import install
    from memdir.adapters.hosts import DIALECTS, installable

    a = ctx.args
    host = installable(a.host)
    loc = _locations(ctx)
    if a.host == "claude-code":
        _refuse_duplicates(ctx, loc)
    # a host's own refusals: OpenCode's plugin API version, a second scope Cursor would run too
    check = getattr(host, "check_install", None)
    if check is not None:
        check(a.scope, loc)
    record = install.InstallRecord(ctx.settings.memdir_home).load()
    # --llm key|off: the hooks must never use the host CLI, pinned in their commands themselves
    prefix = ["env", "MEMDIR_HOST_MODEL=off"] if a.llm != "host" else []
    changes = install.plan_install(
        host, a.scope, loc, _command(ctx, a.host), record, hook_prefix=prefix
    )
    backups = (
        []
        if a.dry_run
        else install.apply(changes, memdir_home=ctx.settings.memdir_home, install=True)
    )
    notes = list(host.install_notes(a.scope, loc))
    if a.host in DIALECTS:  # memdir runs in the host (hooks, a plugin or an extension)
        from memdir.adapters.hooks.hostmodel import describe
        from memdir.adapters.hosts import dialect

        notes = [*describe(ctx.settings, ctx.env, a.llm, dialect(a.host)), *notes]
        if not a.dry_run:
            notes += _prepare_recall(ctx)
    return _report(ctx, changes, backups, dry_run=a.dry_run, notes=notes or None)


def _prepare_recall(ctx: CliContext) -> list[str]:
    """The host's first prompt will recall from this dir: have its index built now."""
    from memdir.adapters.recall_prepare import prepare

    line = prepare(ctx.env, ctx.settings.memdir_home, ctx.memory_dir, ctx.paths.cache_dir)
    return [line] if line else []


def cmd_uninstall(ctx: CliContext) -> int:
    from memdir.adapters.hooks import install
    from memdir.adapters.hosts import installable

    a = ctx.args
    record = install.InstallRecord(ctx.settings.memdir_home).load()
    host = installable(a.host)
    changes = install.plan_uninstall(host, a.scope, _locations(ctx), record)
    backups = (
        []
        if a.dry_run
        else install.apply(changes, memdir_home=ctx.settings.memdir_home, install=False)
    )
    cleanup = getattr(host, "cleanup", None)  # files the hooks keep (Cursor's rules file)
    notes = None
    if cleanup is not None and not a.dry_run:
        notes = [f"removed: {p}" for p in cleanup(ctx.paths.project_root)] or None
    return _report(ctx, changes, backups, dry_run=a.dry_run, notes=notes)
