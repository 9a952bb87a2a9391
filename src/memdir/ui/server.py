"""Run the app: bind (127.0.0.1 unless told otherwise), print the token URL, open a browser.

The socket is bound here, before uvicorn starts, so the port in the URL (and in the Host check)
is the one actually listened on, even with ``--port 0`` (any free port).
"""

from __future__ import annotations

import socket
import webbrowser
from collections.abc import Callable

from memdir.ui.app import create_app
from memdir.ui.context import UiContext

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_for(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={token}"


def serve(
    ctx: UiContext,
    *,
    host: str,
    port: int,
    open_browser: bool,
    announce: Callable[[str], None],
) -> None:
    """Serve until interrupted; ``announce`` gets the URL to print."""
    import uvicorn

    sock = bind(host, port)
    port = sock.getsockname()[1]
    app = create_app(ctx, host=host, port=port)
    url = url_for(host, port, ctx.token)
    announce(url)
    if open_browser:
        webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
