"""``memdir ui``: a local web app to browse, search and edit the memory dir (docs/ui.md)."""

from __future__ import annotations

import argparse
import secrets

from memdir.cli.context import CliContext
from memdir.errors import ConfigError, MissingExtraError
from memdir.evidence.service import enabled as evidence_enabled


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("ui", help="browse, search and edit memories in a local web app")
    p.add_argument("--port", type=int, default=0, help="port to listen on (default: any free)")
    p.add_argument(
        "--host",
        default=None,
        help="listen on this address instead of 127.0.0.1 (anyone who can reach it and has "
        "the printed link can edit your memories)",
    )
    p.add_argument("--read-only", action="store_true", help="serve no route that writes")
    p.add_argument("--no-browser", action="store_true", help="print the link, open no browser")
    p.set_defaults(handler=cmd_ui)


def cmd_ui(ctx: CliContext) -> int:
    try:
        from memdir.ui.context import UiContext
        from memdir.ui.server import LOOPBACK, serve
    except ImportError as exc:
        raise MissingExtraError(exc.name or "jinja2", "ui") from exc
    a = ctx.args
    host = a.host or "127.0.0.1"
    if not 0 <= a.port <= 65535:
        raise ConfigError(f"--port must be 0-65535, not {a.port}")
    if host not in LOOPBACK:
        ctx.out.warn(
            f"listening on {host}: anyone who can reach it and has the link can read and "
            "edit these memories (use 127.0.0.1 unless you mean it)"
        )
    ui = UiContext(
        settings=ctx.settings,
        paths=ctx.paths,
        make_store=ctx.store,
        token=secrets.token_urlsafe(24),
        read_only=bool(a.read_only),
        evidence=evidence_enabled(ctx.env),
    )

    def announce(url: str) -> None:
        mode = " (read-only)" if a.read_only else ""
        ctx.out.stdout.write(f"memdir ui{mode} for {ctx.memory_dir}\n  {url}\nCtrl-C stops it.\n")
        ctx.out.stdout.flush()

    try:
        serve(ui, host=host, port=a.port, open_browser=not a.no_browser, announce=announce)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{a.port}: {exc.strerror or exc}") from exc
    return 0
