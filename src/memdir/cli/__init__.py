"""The ``memdir`` command line (``main(argv) -> int`` in :mod:`memdir.cli.main`)."""

from __future__ import annotations


def run() -> None:
    """Console-script entry point.

    ``memdir hook user-prompt-submit`` runs on every prompt: it is first offered to the warm
    recall daemon by a standard-library-only client, before the CLI itself is even imported.
    """
    import sys

    if "hook" in sys.argv[1:]:
        from memdir.adapters.hooks.fastpath import try_forward

        code = try_forward(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    if "mcp" in sys.argv[1:]:  # a host waits for this server's handshake: answer it first
        import os

        from memdir.adapters.mcp_early import start_before_cli

        start_before_cli(sys.argv[1:], dict(os.environ))
    from memdir.cli.main import run as run_cli

    run_cli()
