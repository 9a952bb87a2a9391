"""Running parsed commands without a shell: pipes, connectors, caps, timeouts, no leftovers."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from memdir.agent.shell import parse, parse_read_only
from memdir.agent.shellexec import execute


@pytest.mark.parametrize(
    ("command", "output", "code"),
    [
        ("echo hello", "hello\n", 0),
        ("printf-missing x", "printf-missing: command not found\n", 127),
        ("cat notes.txt | wc -l", "3\n", 0),
        ("cat notes.txt | sort -r | head -n 1", "gamma\n", 0),
        ("false && echo no", "", 1),
        ("false || echo yes", "yes\n", 0),
        ("true && echo yes", "yes\n", 0),
        ("echo a; echo b", "a\nb\n", 0),
        ("grep -c beta notes.txt", "1\n", 0),
        ("grep zzz notes.txt", "", 1),
        ("echo '$HOME'", "$HOME\n", 0),
    ],
)
async def test_execute_runs_what_was_parsed(
    tmp_path: Path, command: str, output: str, code: int
) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    result = await execute(parse(command), cwd=tmp_path)
    assert (result.output, result.exit_code) == (output, code)


async def test_output_is_capped(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 100_000)
    result = await execute(parse_read_only("cat big.txt"), cwd=tmp_path, max_output=1000)
    assert result.truncated and len(result.output) == 1000


async def test_timeout_kills_the_process(tmp_path: Path) -> None:
    result = await execute(parse("sleep 30"), cwd=tmp_path, timeout=0.3)
    assert result.timed_out and result.exit_code == 124


async def test_cancellation_leaves_no_child(tmp_path: Path) -> None:
    before = _children()  # other tests' helpers (daemons, servers) may be children too
    task = asyncio.create_task(execute(parse("sleep 30"), cwd=tmp_path))
    await asyncio.sleep(0.3)
    children = _children() - before
    assert children, "sleep should be running"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not (_children() & children)


def _children() -> set[int]:
    me = str(os.getpid())
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[1] == me and fields[0] != "Z":
                found.add(int(entry.name))
    return found


async def test_environment_is_not_inherited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A planted program earlier on the caller's PATH must not be what runs.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "echo"
    fake.write_text('#!/bin/sh\n/bin/rm -f "$0"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    result = await execute(parse_read_only("echo safe"), cwd=tmp_path)
    assert result.output == "safe\n"
    assert fake.exists()
