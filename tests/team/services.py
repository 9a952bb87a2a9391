"""Real services for tests and the sync benchmark: a private PostgreSQL cluster, a sync server.

The system cluster wants a password over TCP, so we ``initdb -A trust`` our own as the
unprivileged ``postgres`` user (when run as root) on a free port with a private socket dir, and
hand out fresh databases created with autocommit.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def find_bin_dir() -> Path:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if not candidates:
        found = shutil.which("initdb")
        if found is None:
            raise RuntimeError("PostgreSQL server binaries not found (apt-get install postgresql)")
        return Path(found).parent
    return Path(candidates[0]).parent


class PgCluster:
    def __init__(self) -> None:
        self.bin = find_bin_dir()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="memdir-pg-"))
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.sock.mkdir()
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self._as: dict[str, Any] = {}
        if os.geteuid() == 0:  # postgres refuses to run as root
            user = pwd.getpwnam("postgres")
            for path in (self.root, self.sock):
                os.chown(path, user.pw_uid, user.pw_gid)
            self._as = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        self.counter = 0

    def start(self) -> PgCluster:
        env = {"PATH": os.environ.get("PATH", ""), "LC_ALL": "C", "LANG": "C"}
        subprocess.run(
            [str(self.bin / "initdb"), "-A", "trust", "-U", "postgres", "-E", "UTF8",
             "--no-sync", "-D", str(self.data)],
            check=True, capture_output=True, env=env, cwd=self.root, **self._as,
        )  # fmt: skip
        self._log = open(self.root / "server.log", "wb")  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen(
            [str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-k", str(self.sock), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
             "-c", "max_connections=200"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=self.root, **self._as,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.execute("SELECT 1")
                return self
            except Exception:
                if self._proc.poll() is not None:
                    raise RuntimeError((self.root / "server.log").read_text()) from None
                time.sleep(0.1)
        raise RuntimeError("PostgreSQL did not start in 30 s")

    def execute(self, sql: str, dbname: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="postgres", dbname=dbname, autocommit=True
        ) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def create_database(self) -> str:
        """A fresh empty database; returns its SQLAlchemy URL."""
        self.counter += 1
        name = f"memdir_{os.getpid()}_{self.counter}"
        self.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._log is not None:
            self._log.close()
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root)


class ServerProcess:
    """``python -m memdir.team.server`` as a child process on a free loopback port."""

    def __init__(self, db_url: str, *, max_entries: int = 100, port: int | None = None):
        self.db_url = db_url
        self.max_entries = max_entries
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    def start(self) -> ServerProcess:
        """Start (or restart, on the same port) and wait until ``/healthz`` answers."""
        self._close_log()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()/restart
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memdir.team.server", "--port", str(self.port),
             "--db", self.db_url, "--max-entries", str(self.max_entries)],
            stdout=subprocess.DEVNULL, stderr=self._log, env=dict(os.environ),
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._log.seek(0)
                raise RuntimeError(self._log.read().decode(errors="replace"))
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("team server did not start")

    def kill(self) -> None:
        """SIGKILL: no graceful shutdown, as in a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
