"""``memdir mcp`` over stdio as a real process: it answers ``initialize``, then ends promptly with
status 0 on SIGINT, SIGTERM and stdin EOF (defect 3 of #18: SIGINT was ignored until the host
escalated to SIGTERM). A server that hangs shows up as the bounded wait running out."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import memdir
from tests.integration.mcp_wire import initialize


def started_server(tmp_path: Path, *, ignore_sigint: bool = False) -> subprocess.Popen[bytes]:
    """A server that has answered ``initialize`` (so it is inside its event loop)."""
    home = tmp_path / "home"
    home.mkdir()

    def child_setup() -> None:  # as a parent that ignores SIGINT hands it down
        if ignore_sigint:
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "mcp", "--dir", str(tmp_path / "memory")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={
            "HOME": str(home),
            "PATH": os.environ["PATH"],
            "HF_HUB_OFFLINE": "1",
            # the sources under test, also when memdir is installed from another checkout
            "PYTHONPATH": str(Path(memdir.__file__).resolve().parents[1]),
        },
        preexec_fn=child_setup,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(initialize()).encode() + b"\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"]
    return proc


@pytest.mark.parametrize(
    ("how", "ignore_sigint"),
    [("SIGINT", False), ("SIGINT", True), ("SIGTERM", False), ("EOF", False)],
    ids=["sigint", "sigint-inherited-ignored", "sigterm", "stdin-eof"],
)
def test_mcp_server_stops_promptly_and_cleanly(
    tmp_path: Path, how: str, ignore_sigint: bool
) -> None:
    proc = started_server(tmp_path, ignore_sigint=ignore_sigint)
    assert proc.stdin is not None and proc.stderr is not None
    if how == "EOF":
        proc.stdin.close()
    else:
        proc.send_signal(getattr(signal, how))
    # stdin stays open for a signal: closing it would end the server by EOF instead.
    with proc:
        try:
            code = proc.wait(timeout=20)  # bounds a hang; the server ends in well under a second
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"memdir mcp ignored {how}: still running 20 s later")
        assert code == 0
        assert b"Traceback" not in proc.stderr.read()
