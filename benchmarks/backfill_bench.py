"""How fast ``memdir backfill`` learns from past sessions offline (sessions/s, MB/s).

Setup: a fake home holding N Claude Code transcripts of one project — the real public sessions in
``benchmarks/data/real_sessions`` (each copied under a fresh session id) and, for the rest,
long real-shaped sessions from ``benchmarks/session_transcripts.py`` (tool loops, big file reads,
test output, pasted logs, planted corrections and decisions) — then one ``memdir backfill
--offline`` through the CLI entry point in this process (its import and parse included), then a
second run (the cursor: nothing left to do). Times are wall clock; the machine is shared.

Usage: ``python -m benchmarks.backfill_bench [--sizes 10,50,200] [--turns 40] [--no-docs]``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from benchmarks.common import machine, table, update_docs_section
from benchmarks.session_transcripts import write_session

from memdir.cli.main import main
from memdir.paths import sanitize_path

REAL = Path(__file__).resolve().parent / "data" / "real_sessions"


@contextlib.contextmanager
def no_fsync() -> Iterator[None]:
    """Setup only (not measured): the generator appends each entry durably, 50k fsyncs."""
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real


def make_sessions(home: Path, project: Path, count: int, turns: int) -> int:
    """``count`` transcripts (the real ones first), one hour apart; their total bytes."""
    directory = home / ".claude" / "projects" / sanitize_path(str(project))
    directory.mkdir(parents=True, exist_ok=True)
    real = sorted(REAL.glob("*.jsonl"))
    start = dt.datetime(2026, 1, 5, 9, tzinfo=dt.UTC).timestamp()
    total = 0
    for n in range(count):
        path = directory / f"{uuid.uuid4()}.jsonl"
        if n < len(real):
            shutil.copyfile(real[n], path)
        else:
            write_session(path, seed=n, turns=turns)
            text = path.read_text(encoding="utf-8")  # the generator's sessions ran in /work/shop
            path.write_text(
                text.replace('"cwd":"/work/shop"', json.dumps({"cwd": str(project)})[1:-1]),
                encoding="utf-8",
            )
        os.utime(path, (start + 3600 * n, start + 3600 * n))
        total += path.stat().st_size
    return total


def backfill(home: Path, project: Path, memory: Path) -> tuple[float, float, dict[str, object]]:
    out, err = io.StringIO(), io.StringIO()
    started, cpu = time.perf_counter(), time.process_time()
    code = main(
        ["--json", "--dir", str(memory), "backfill", "--offline"],
        env={"HOME": str(home), "PATH": "/nonexistent"},
        cwd=project,
        stdout=out,
        stderr=err,
    )
    elapsed, used = time.perf_counter() - started, time.process_time() - cpu
    if code != 0:
        raise SystemExit(f"backfill failed ({code}): {err.getvalue()[-2000:]}")
    payload: dict[str, object] = json.loads(out.getvalue())
    return elapsed, used, payload


def run(count: int, turns: int) -> list[object]:
    with tempfile.TemporaryDirectory(prefix="memdir-backfill-bench-") as tmp:
        root = Path(tmp)
        home, project, memory = root / "home", root / "project", root / "memory"
        project.mkdir()
        with no_fsync():
            size = make_sessions(home, project, count, turns)
        elapsed, cpu, first = backfill(home, project, memory)
        again, _cpu, second = backfill(home, project, memory)
        memories = len([p for p in memory.glob("*.md") if p.name != "MEMORY.md"])
        assert second["processed"] == 0 and first["learnt"] == count, (first, second)
        return [
            count,
            f"{size / 1e6:.1f}",
            f"{elapsed:.2f}",
            f"{cpu:.2f}",
            f"{count / elapsed:.1f}",
            f"{count / cpu:.1f}",
            f"{size / 1e6 / elapsed:.2f}",
            memories,
            f"{again:.2f}",
        ]


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10,50,200")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    rows = [run(int(n), args.turns) for n in args.sizes.split(",")]
    header = [
        "transcripts",
        "MB",
        "wall s",
        "CPU s",
        "sessions/s (wall)",
        "sessions/s (CPU)",
        "MB/s",
        "memories",
        "re-run s",
    ]
    text = table(rows, header)
    print(text)
    if args.no_docs:
        return
    real = len(list(REAL.glob("*.jsonl")))
    body = (
        "Command: `.venv/bin/python -m benchmarks.backfill_bench`  \n"
        f"Machine: {machine()}. Offline rules (`--offline`), one `memdir backfill` through the "
        "CLI entry point (argument parsing included; the first row also pays the one-time "
        f"import). Transcripts: the {real} real "
        "public Claude Code sessions of `benchmarks/data/real_sessions`, then real-shaped "
        f"{args.turns}-turn sessions from `benchmarks/session_transcripts.py`. `re-run` is a "
        "second backfill over the same transcripts (the cursor: nothing is read again). CPU is "
        "this process's (threads included); on the shared machine the wall clock also waits for "
        "the other jobs and for fsync (every memory write is durable). The generator plants its "
        "corrections and decisions from short lists, so the same lessons recur across sessions "
        "and each ends as one memory (`memories`).\n\n"
        f"{text}\n"
    )
    update_docs_section("backfill", body, title="Backfill (learning from past sessions)")


if __name__ == "__main__":
    main_bench()
