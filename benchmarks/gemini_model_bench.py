"""What the ``gemini`` provider adds per call: its ``gemini -p`` child next to a bare one.

    nice .venv/bin/python benchmarks/gemini_model_bench.py [--runs 5]

The pinned Gemini CLI of tests/realhost against the fake Gemini API on 127.0.0.1 (isolated
HOME), so the numbers are process start, the CLI's start-up and the relay, not a model's think
time. Rows, each the median of ``--runs`` after one untimed warm-up:
- bare: ``gemini -p`` as a user's CLI runs it (one plain text answer);
- memdir plain: ``HostCliProvider.complete`` (private home, no tools, one answer);
- memdir tool loop: ``run_tool_loop`` with one relayed Write into a memory dir, then an answer.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the harness in tests/realhost
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, table
from memdir.llm.base import CompletionRequest, Message, ToolResultBlock, ToolSpec, ToolUseBlock
from memdir.llm.gemini_cli import HostCliProvider

REQUEST = CompletionRequest(system="be brief", messages=[Message("user", "hello")])
WRITE = ToolSpec("Write", "write a memory file", {"type": "object", "properties": {}})


def median_of(runs: int, once: Callable[[int], Any]) -> tuple[float, float]:
    once(-1)  # untimed: the CLI's first-run files, the page cache
    times = []
    for i in range(runs):
        started = time.perf_counter()
        once(i)
        times.append(time.perf_counter() - started)
    return statistics.median(times), min(times)


def measure(runs: int, workdir: Path) -> list[list[Any]]:
    from tests.realhost.fake_gemini import FakeGemini, FunctionCall, Reply
    from tests.realhost.gemini_host import MISSING_CLI, GeminiHost, find_cli

    cli = find_cli()
    if cli is None:
        raise SystemExit(MISSING_CLI)
    rows: list[list[Any]] = []
    with FakeGemini() as api:
        host = GeminiHost(cli=cli, api=api, root=workdir)
        provider = HostCliProvider("haiku", env=dict(host.env, MEMDIR_GEMINI_CLI=str(cli)))
        memory = workdir / "memory"
        memory.mkdir()

        async def execute(call: ToolUseBlock) -> ToolResultBlock:
            (memory / "note.md").write_text(str(call.input.get("content", "")))
            return ToolResultBlock(call.id, "saved note.md")

        def loop(i: int) -> None:
            write = FunctionCall("mcp_memdir_Write", {"file_path": "note.md", "content": f"{i}"})
            api.script(Reply(function_calls=(write,)), "Saved.")
            request = CompletionRequest(system="extract", messages=REQUEST.messages, tools=[WRITE])
            asyncio.run(provider.run_tool_loop(request, execute, max_turns=3))

        cases: list[tuple[str, Callable[[int], Any]]] = [
            ("bare `gemini -p`", lambda i: host.prompt(f"hello ({i})")),
            ("memdir plain call", lambda i: asyncio.run(provider.complete(REQUEST))),
            ("memdir tool loop (1 relayed call)", loop),
        ]
        bare = 0.0
        for label, once in cases:
            median, fastest = median_of(runs, once)
            bare = bare or median
            rows.append([label, runs, f"{median:.2f}", f"{fastest:.2f}", f"{median - bare:+.2f}"])
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="memdir-gemini-bench-"))
    try:
        rows = measure(args.runs, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    load = os.getloadavg()
    print(
        f"Command: `nice .venv/bin/python benchmarks/gemini_model_bench.py --runs {args.runs}`  \n"
        f"Machine: {machine()}; load average at the end {load[0]:.1f}.\n\n"
        + table(rows, ["child", "runs", "median s", "min s", "added over bare s"])
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
