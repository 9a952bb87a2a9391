"""Run a parsed :class:`~memdir.agent.shell.CommandLine` without a shell, bounded.

Invariant: every process started here is gone when :func:`execute` returns or is cancelled —
on completion, on timeout, on the output cap and on task cancellation. Programs are looked up
on a fixed PATH and run with a minimal environment, so nothing in the caller's environment
(``LD_PRELOAD``, ``GREP_OPTIONS``, a PATH with a planted ``cat``) changes what the checked
command does. Pipes are real OS pipes between processes; ``&&``, ``||`` and ``;`` are evaluated
here from exit codes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from memdir.agent.shell import CommandLine, Pipeline

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
_ENV = {"PATH": SAFE_PATH, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}


@dataclass(frozen=True, slots=True)
class ShellOutput:
    output: str  # stdout+stderr of the last command of each pipeline (others: stdout), capped
    exit_code: int
    truncated: bool
    timed_out: bool


class _Budget:
    """Shared output budget across the whole command line."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.used = 0
        self.truncated = False

    def add(self, data: bytes) -> bool:
        """Keep what fits; False once the cap is hit (the caller stops reading)."""
        room = self.limit - self.used
        if len(data) > room:
            self.chunks.append(data[: max(room, 0)])
            self.used = self.limit
            self.truncated = True
            return False
        self.chunks.append(data)
        self.used += len(data)
        return True


async def _kill_all(procs: list[asyncio.subprocess.Process]) -> None:
    for proc in procs:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            await proc.wait()


async def _run_pipeline(pipeline: Pipeline, cwd: Path, budget: _Budget) -> int:
    procs: list[asyncio.subprocess.Process] = []
    try:
        stdin: int | None = asyncio.subprocess.DEVNULL
        for index, argv in enumerate(pipeline.commands):
            exe = shutil.which(argv[0], path=SAFE_PATH)
            if exe is None:
                budget.add(f"{argv[0]}: command not found\n".encode())
                return 127
            last = index == len(pipeline.commands) - 1
            read_fd, write_fd = (None, None) if last else os.pipe()
            try:
                proc = await asyncio.create_subprocess_exec(
                    exe,
                    *argv[1:],
                    stdin=stdin,
                    stdout=asyncio.subprocess.PIPE if last else write_fd,
                    stderr=asyncio.subprocess.STDOUT if last else asyncio.subprocess.DEVNULL,
                    cwd=cwd,
                    env=_ENV,
                    start_new_session=True,
                )
            finally:
                # The children hold their own copies; ours must close or EOF never arrives.
                if isinstance(stdin, int) and stdin >= 0:
                    os.close(stdin)
                if write_fd is not None:
                    os.close(write_fd)
            procs.append(proc)
            stdin = read_fd
        reader = procs[-1].stdout
        assert reader is not None
        while chunk := await reader.read(65536):
            if not budget.add(chunk):
                await _kill_all(procs)
                break
        for proc in procs:
            await proc.wait()
        return procs[-1].returncode or 0
    finally:
        await _kill_all(procs)


async def execute(
    line: CommandLine, *, cwd: Path, timeout: float = 30.0, max_output: int = 30_000
) -> ShellOutput:
    """Run ``line`` in ``cwd``; output is capped at ``max_output`` bytes, time at ``timeout``."""
    budget = _Budget(max_output)
    code = 0
    timed_out = False
    deadline = time.monotonic() + timeout
    try:
        for index, pipeline in enumerate(line.pipelines):
            if index > 0:
                connector = line.connectors[index - 1]
                if (connector == "&&" and code != 0) or (connector == "||" and code == 0):
                    continue
            if budget.truncated:
                break
            remaining = max(deadline - time.monotonic(), 0.0)
            async with asyncio.timeout(remaining):
                code = await _run_pipeline(pipeline, cwd, budget)
    except TimeoutError:
        timed_out = True
        code = 124
    text = b"".join(budget.chunks).decode("utf-8", errors="replace")
    return ShellOutput(text, code, budget.truncated, timed_out)
