"""Detached workers: how a hook hands slow work (extraction, notes, a session's end) away.

A hook answers the host at once; the work goes to ``memdir hook [--host X] <worker>`` in its
own session (``start_new_session``), niced, with the hook's environment, its output in
``<cache>/hooks/worker.log``. Also here: the one rule for which transcript a hook may read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.errors import HookInputError

if TYPE_CHECKING:
    from memdir.adapters.hooks.handlers import HookContext
    from memdir.adapters.hooks.hookio import HookInput

WORKER_NICENESS = 10


def background_prefix() -> list[str]:
    """``nice -n 10`` when the system has ``nice``: a worker starts while the host is still
    finishing its turn (Stop) or exiting (SessionEnd), on the same cores; it must not slow the
    host down, and a second later nobody is waiting for it."""
    import shutil

    nice = shutil.which("nice")
    return [nice, "-n", str(WORKER_NICENESS)] if nice else []


def spawn_worker(
    hc: HookContext,
    session_id: str,
    transcript: Path | None,
    worker: str = "extract-worker",
    extra: Sequence[str] = (),
) -> None:
    import subprocess

    base = [*hc.worker_command[:-1], worker] if hc.worker_command else []
    command = [*background_prefix(), *base, "--session", session_id, *extra]
    if transcript is not None:
        command += ["--transcript", str(transcript)]
    log_file = hc.cache_dir / "hooks" / "worker.log"
    log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(log_file, "ab") as err:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            close_fds=True,
            cwd=str(hc.paths.cwd),
            env=dict(hc.env),  # the hook's environment, also when the daemon runs this hook
        )


def transcript_of(inp: HookInput, hc: HookContext) -> tuple[Path | None, str]:
    """The transcript file to read, or None and why not (the rule: ``transcript_file``)."""
    return checked_path(inp.transcript_path, hc)


def checked_path(raw: str | None, hc: HookContext) -> tuple[Path | None, str]:
    from memdir.adapters.hooks.transcript_file import checked_transcript

    try:
        return checked_transcript(raw, hc.dialect.transcript_roots(hc.env)), ""
    except HookInputError as exc:
        return None, str(exc)
