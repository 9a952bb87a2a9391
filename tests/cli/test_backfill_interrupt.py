"""An interrupted ``memdir backfill`` (a real process, a real signal) resumes where it stopped,
and nothing is learnt twice: SIGTERM stops it after the transcript in hand; even SIGKILL, which
no handler sees, leaves a cursor the next run trusts (the one transcript in flight is read again
and adds nothing it already added)."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.backfill.sessions import DAY0, claude_session

N = 120
_SYLLABLES = ["ka", "lo", "mi", "nu", "pe", "ri", "so", "tu", "va", "ze", "bo", "fi"]


def names(n: int) -> list[str]:
    return ["".join(p) for p in itertools.islice(itertools.product(_SYLLABLES, repeat=3), n)]


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    home, project, memory = tmp_path / "home", tmp_path / "proj", tmp_path / "memory"
    project.mkdir()
    for n, word in enumerate(names(N)):
        said = f"Remember that the {word} dashboard is at https://grafana.example.com/d/{word}."
        claude_session(home, project, [("user", said)], when=DAY0 + dt.timedelta(hours=n))
    return home, project, memory


def start(home: Path, project: Path, memory: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "HOME": str(home), "PATH": "/nonexistent"}
    env = {k: v for k, v in env.items() if not k.startswith(("MEMDIR_", "CLAUDE_"))}
    return subprocess.Popen(
        [sys.executable, "-m", "memdir", "--json", "--dir", str(memory), "backfill"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def interrupt_after(proc: subprocess.Popen[str], count: int, sig: int) -> tuple[str, str]:
    assert proc.stderr is not None
    for line in proc.stderr:
        m = re.search(r"backfill (\d+)/", line)
        if m and int(m.group(1)) >= count:
            proc.send_signal(sig)
            break
    out, err = proc.communicate(timeout=120)
    return out, err


def finish(home: Path, project: Path, memory: Path) -> Any:
    proc = start(home, project, memory)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out)


def evidence(memory: Path) -> dict[str, int]:
    return {
        p.name: sum(1 for ln in p.read_text().splitlines() if re.match(r"- \d{4}-\d\d-\d\d: ", ln))
        for p in memory.glob("*.md")
        if p.name != "MEMORY.md"
    }


def test_sigterm_stops_after_the_transcript_in_hand_and_a_rerun_does_the_rest(
    setup: tuple[Path, Path, Path],
) -> None:
    home, project, memory = setup
    proc = start(home, project, memory)
    out, err = interrupt_after(proc, 10, signal.SIGTERM)
    assert proc.returncode == 130, err
    first = json.loads(out)
    assert first["stopped"] == "interrupted" and "stopping after this transcript" in err
    assert 10 <= first["processed"] < N and "Traceback" not in err
    rest = finish(home, project, memory)
    assert rest["done_before"] == first["processed"]
    assert first["processed"] + rest["processed"] == N  # every transcript read exactly once
    assert first["learnt"] + rest["learnt"] == N
    counts = evidence(memory)
    assert len(counts) == N and set(counts.values()) == {1}


def test_sigkill_leaves_a_cursor_the_next_run_resumes_from(
    setup: tuple[Path, Path, Path],
) -> None:
    home, project, memory = setup
    proc = start(home, project, memory)
    interrupt_after(proc, 10, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    cursors = list((home / ".memdir" / "cache").glob("*/backfill/cursor.json"))
    assert len(cursors) == 1
    done = len(json.loads(cursors[0].read_text())["done"])  # a whole file, never torn
    assert done >= 9
    rest = finish(home, project, memory)
    assert rest["done_before"] == done and rest["processed"] == N - done
    counts = evidence(memory)
    assert len(counts) == N and set(counts.values()) == {1}  # the one in flight added nothing
