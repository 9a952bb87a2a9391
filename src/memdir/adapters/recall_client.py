"""Talk to the per-user recall daemon over its Unix socket (standard library only).

A hook is a new process on every prompt; loading the ONNX model and the search index costs
seconds, asking a warm daemon costs milliseconds. This module is what the hook imports on that
path, so it imports nothing heavy. Invariants:

- Every failure — no socket, a refused or timed-out connection, a bad answer, a daemon of another
  memdir build ("stale") — is a :class:`~memdir.errors.DaemonError`; the caller then recalls
  in-process. A stale daemon is asked to stop so the next start is current.
- The socket lives in a 0700 directory owned by the user (the daemon makes the socket 0600 and
  checks the peer's uid); a directory owned by someone else is refused.
- :func:`spawn` starts at most one daemon per few seconds per socket (a stamp file), detached
  from the hook so the host never waits for it; a second daemon that loses the start race exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time

from memdir.errors import DaemonError, DaemonTimeoutError

# typing, pathlib, subprocess, tempfile: imported only where used (the per-prompt path needs
# none of them: ``os.path`` and plain strings there)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

PROTOCOL = 1
DEFAULT_TIMEOUT = 5.0  # seconds for one recall; the hook gives up (injects nothing) after it
DEFAULT_IDLE_SECONDS = 900.0
SPAWN_INTERVAL = 10.0
START_WAIT = 3.0  # how long a hook waits for a daemon spawned moments ago to listen
MAX_MESSAGE_BYTES = 8 * 1024 * 1024
_SPAWNED: list[Any] = []  # daemons this process started (``spawn``)
_MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux, 104 on macOS
_SERVED_CODE = (
    "recall_daemon.py",
    "claude_code/forwarded.py",
    "claude_code/runner.py",
    "claude_code/handlers.py",
    "claude_code/lifecycle.py",
    "claude_code/extraction.py",
    "../recall/warm.py",
)


def fingerprint() -> str:
    """Identifies this memdir build: a daemon with another fingerprint is stale."""
    from memdir import __version__

    here = os.path.dirname(__file__)
    stamp = 0
    for name in _SERVED_CODE:  # what the daemon runs for a request: edited code makes it stale
        with contextlib.suppress(OSError):
            stamp = max(stamp, os.stat(os.path.join(here, name)).st_mtime_ns)
    return f"{PROTOCOL}:{__version__}:{stamp}"


def socket_file(memdir_home: str) -> str:
    """``<memdir home>/run/recall.sock``, or a short per-user path when that is too long."""
    preferred = os.path.join(memdir_home, "run", "recall.sock")
    if len(os.fsencode(preferred)) <= _MAX_SOCKET_PATH:
        return preferred
    import hashlib
    import tempfile

    digest = hashlib.sha256(os.fsencode(memdir_home)).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"memdir-{os.getuid()}", f"{digest}.sock")


def socket_path(memdir_home: Path) -> Path:
    """:func:`socket_file` as a path."""
    from pathlib import Path

    return Path(socket_file(os.fspath(memdir_home)))


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` 0700; refuse one owned by another user or open to others."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.stat()
    if st.st_uid != os.getuid():
        raise DaemonError(f"{path} belongs to another user; not using it for the recall socket")
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)


def request(
    sock_path: Path | str, payload: dict[str, Any], *, timeout: float = DEFAULT_TIMEOUT
) -> Any:
    """Send one JSON request, return the decoded answer; DaemonError on any failure."""
    data = json.dumps({"v": PROTOCOL, **payload}, ensure_ascii=False).encode("utf-8") + b"\n"
    sent = False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(os.fspath(sock_path))
            conn.sendall(data)
            sent = True
            conn.shutdown(socket.SHUT_WR)
            chunks: list[bytes] = []
            size = 0
            while chunk := conn.recv(65536):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_MESSAGE_BYTES:
                    raise DaemonError("recall daemon answer too large")
    except (FileNotFoundError, ConnectionRefusedError) as exc:
        raise DaemonError(f"no recall daemon at {sock_path} ({exc.strerror})") from None
    except TimeoutError:
        error = DaemonTimeoutError if sent else DaemonError
        raise error(f"recall daemon at {sock_path} did not answer in {timeout}s") from None
    except OSError as exc:
        raise DaemonError(f"recall daemon at {sock_path}: {exc}") from None
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        raise DaemonError("recall daemon sent a malformed answer") from None
    if not isinstance(answer, dict):
        raise DaemonError("recall daemon sent a malformed answer")
    if answer.get("stale"):
        with contextlib.suppress(DaemonError):
            request(sock_path, {"op": "stop"}, timeout=1.0)
        raise DaemonError("the recall daemon runs another memdir build (stale); stopped it")
    if not answer.get("ok"):
        raise DaemonError(f"recall daemon: {answer.get('error', 'unknown error')}")
    return answer


def recall(
    sock_path: Path,
    *,
    memory_dir: Path,
    cache_dir: Path,
    query: str,
    exclude: list[str],
    limit: int = 5,
    timeout: float = DEFAULT_TIMEOUT,
    context: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The attachments the daemon recalls for ``query`` (dicts, see ``Injected.from_json``)."""
    answer = request(
        sock_path,
        {
            "op": "recall",
            "fingerprint": fingerprint(),
            "memory_dir": str(memory_dir),
            "cache_dir": str(cache_dir),
            "query": query,
            "exclude": exclude,
            "limit": limit,
            "context": context or {},
        },
        timeout=timeout,
    )
    found = answer.get("attachments")
    if not isinstance(found, list):
        raise DaemonError("recall daemon sent a malformed answer")
    return found


def wait_if_starting(sock_path: Path | str) -> bool:
    """Wait (up to :data:`START_WAIT`) for a daemon spawned in the last few seconds, and still
    alive, to create its socket; True when the socket exists (now or already)."""
    sock = os.fspath(sock_path)
    if os.path.exists(sock):
        return True
    stamp = sock + ".spawned"
    try:
        if time.time() - os.stat(stamp).st_mtime >= SPAWN_INTERVAL:
            return False  # nobody is starting one
        with open(stamp) as fh:
            os.kill(int(fh.read().strip()), 0)  # the daemon spawned then is still alive
    except (OSError, ValueError):
        return False
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        time.sleep(0.02)
        if os.path.exists(sock):
            return True
    return False


def spawn(
    sock_path: Path,
    *,
    idle_seconds: float = DEFAULT_IDLE_SECONDS,
    warm: tuple[Path, Path] | None = None,
    log_file: Path | None = None,
) -> bool:
    """Start a detached daemon unless one was started moments ago; True if one was started."""
    import subprocess

    ensure_private_dir(sock_path.parent)
    stamp = sock_path.with_name(sock_path.name + ".spawned")
    try:
        if time.time() - stamp.stat().st_mtime < SPAWN_INTERVAL:
            return False
    except FileNotFoundError:
        pass
    stamp.touch(mode=0o600)
    os.utime(stamp)
    command = [sys.executable, "-m", "memdir.adapters.recall_daemon", "--socket", str(sock_path)]
    command += ["--idle", str(idle_seconds)]
    if warm is not None:
        command += ["--warm", str(warm[0]), str(warm[1])]
    err = open(log_file, "ab") if log_file is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        if not isinstance(err, int):
            err.close()
    with contextlib.suppress(OSError):  # who is starting: a hook waits only while it lives
        stamp.write_text(str(child.pid))
    # the daemon outlives this process by design: keep its handle (dropping a running child's
    # warns), and reap the ones that already ended so a long-lived caller gathers no zombies
    _SPAWNED[:] = [c for c in _SPAWNED if c.poll() is None]
    _SPAWNED.append(child)
    return True
