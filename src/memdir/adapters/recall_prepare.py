"""Have a memory dir's recall index built before its first prompt needs it.

A memory dir with no index anywhere (a new memdir home, memories just imported) makes its first
prompt wait while every memory is read and the model loads — about a second for 200 memories,
up to ``forwarded.FIRST_BUILD_BUDGET``, and past it that prompt goes without recall. The
commands that create this state know a first prompt is coming: ``memdir install`` and
``memdir import`` ask the recall daemon to build the index now, in the background, and return at
once. By the time the person has started their agent the prompt finds a loaded engine, or at
least an index on disk.

The commands wait for the build, up to :data:`WAIT_SECONDS` (a person who starts their agent the
moment ``memdir install`` returns would otherwise find the build half done: about a second for
200 memories, measured in docs/benchmarks.md "Cold first prompt"); past that it goes on in the
background and the command says so.

``MEMDIR_PREPARE_RECALL=0`` (or ``MEMDIR_HOOK_DAEMON=0``, no daemon at all) turns it off.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from memdir.adapters import recall_client
from memdir.adapters.hooks.handlers import env_flag
from memdir.adapters.hooks.runner import daemon_idle
from memdir.errors import DaemonError, DaemonTimeoutError
from memdir.recall.index_files import saved

# how long the command waits for an already running daemon to take the request
ASK_SECONDS = 0.5
# how long it waits for the build itself (10,000 memories take about 8 s on a 2-core machine)
WAIT_SECONDS = 30.0


def _holds_memories(memory_dir: Path) -> bool:
    """Any Markdown file besides the index (one is enough: an empty dir builds in no time)."""
    for _dirpath, dirnames, filenames in os.walk(memory_dir):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if any(f.endswith(".md") and f != "MEMORY.md" for f in filenames):
            return True
    return False


def _asked(sock: Path, memory_dir: Path, cache_dir: Path) -> bool:
    """Whether a running daemon of this build took the request to build the index. A timeout is
    a yes: it answers once the build is done, and nobody needs to wait for that."""
    body = {"op": "warm", "memory_dir": str(memory_dir), "cache_dir": str(cache_dir)}
    try:
        recall_client.request(sock, {**body, "fingerprint": recall_client.fingerprint()},
                              timeout=ASK_SECONDS)  # fmt: skip
    except DaemonTimeoutError:
        return True
    except DaemonError:
        return False
    return True


def prepare(
    env: Mapping[str, str],
    memdir_home: Path,
    memory_dir: Path,
    cache_dir: Path,
    *,
    wait: float = WAIT_SECONDS,
) -> str | None:
    """Have the recall daemon build ``memory_dir``'s index when it has none, waiting for it up
    to ``wait`` seconds; a line for the person (what happened), or None when there was nothing
    to do."""
    wanted = env_flag(env, "MEMDIR_PREPARE_RECALL", True)
    if not (wanted and env_flag(env, "MEMDIR_HOOK_DAEMON", True)):
        return None
    if saved(cache_dir) or not _holds_memories(memory_dir):
        return None
    sock = recall_client.socket_path(memdir_home)
    if not _asked(sock, memory_dir, cache_dir):  # none, or another memdir build's: start ours
        log_file = cache_dir / "hooks" / "daemon.log"
        log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        recall_client.spawn(
            sock, idle_seconds=daemon_idle(env), warm=(memory_dir, cache_dir), log_file=log_file
        )
    started = time.monotonic()
    while time.monotonic() - started < wait:
        if saved(cache_dir):
            return f"recall: built the search index of {memory_dir} ({_since(started)})"
        time.sleep(0.05)
    return (
        f"recall: building the search index of {memory_dir} in the background "
        "(the first prompt would otherwise wait for it)"
    )


def _since(started: float) -> str:
    return f"{time.monotonic() - started:.1f} s"


__all__ = ["prepare"]
