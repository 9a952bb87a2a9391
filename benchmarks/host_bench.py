"""What memdir costs inside the real Claude Code CLI, as the user waits for it.

    .venv/bin/python benchmarks/host_bench.py [--runs 5] [--memories 200] [--no-docs]

Wall time of one ``claude -p`` (the pinned CLI of tests/realhost, against the fake Anthropic API
on 127.0.0.1, isolated HOME) in three set-ups, each in its own fresh project:
- bare: no memdir;
- hooks: ``memdir install claude-code --project`` without the MCP server (``.mcp.json`` removed);
- hooks + MCP: the full project install, the server approved as a user would;
- the same with ``MEMDIR_MCP_EARLY=0`` (the MCP SDK answers the handshake itself).
Each set-up first runs one untimed prompt (it starts the recall daemon, as a user's first
session does), then ``--runs`` timed prompts, each a new session started once the previous
session's detached work (Stop's extraction, SessionEnd's worker) is done; one more row runs
them back to back, with that work still running on the same two cores; the table shows
median and min, and the median
added over bare. The host is told to wait for MCP servers before its first request, so the MCP
row includes the server's start (what a user pays to have the memory tools on the first turn).

Then ``memdir mcp``'s own start: spawn to the answer to ``initialize``, beside the interpreter
alone and the interpreter importing the MCP SDK alone (the floor for an SDK-based server).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the harness in tests/realhost
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tests.integration.mcp_wire import initialize
from tests.realhost.fakeapi import FakeAnthropic
from tests.realhost.host import MISSING_CLI, SRC, VERSION, ClaudeHost, find_cli, wait_for

from common import machine, table, update_docs_section

PROMPT = "Which image do the CI jobs run on, and who owns the deploy pipeline?"
SETUPS = ("bare", "hooks", "hooks + MCP", "hooks + MCP, MEMDIR_MCP_EARLY=0")


def seed(host: ClaudeHost, memories: int) -> None:
    topics = ["ci image", "deploy owner", "coffee", "postgres", "on-call", "frontend", "billing"]
    memory_dir = host.memory_dir()
    memory_dir.mkdir(parents=True, exist_ok=True)
    for i in range(memories):
        topic = topics[i % len(topics)]
        (memory_dir / f"note_{i:04d}.md").write_text(
            f"---\nname: note {i} about {topic}\ndescription: {topic} fact number {i}\n"
            f"type: project\n---\nThe {topic} detail number {i} is recorded here.\n"
        )
    host.memdir("index", "rebuild")


def prepare(setup: str, root: Path, api: FakeAnthropic, cli: Path, memories: int) -> ClaudeHost:
    early_off = {"MEMDIR_MCP_EARLY": "0"} if "EARLY=0" in setup else {}
    host = ClaudeHost(cli=cli, api=api, root=root, extra_env=early_off)
    if setup != "bare":
        seed(host, memories)
        host.install()
        if setup == "hooks":
            (host.project / ".mcp.json").unlink()
        else:
            host.allow_project_mcp()
    return host


def sessions_done(host: ClaudeHost) -> int:
    """Sessions whose end has run to completion: the end worker's row, or (builds before it) the
    row of a ``session-end`` that drained inline — so a checkout of either kind can be timed."""
    return sum(
        r["event"] == "session-end-worker" or (r["event"] == "session-end" and "drained" in r)
        for r in host.hook_log()
    )


def _done(host: ClaudeHost, sessions: int) -> bool:
    return sessions_done(host) >= sessions


def time_prompts(host: ClaudeHost, runs: int, *, settle: bool) -> list[float]:
    """``settle``: before each prompt, wait until the previous session's detached work (Stop's
    extraction, SessionEnd's worker) is done, so a prompt is timed alone; else back to back."""
    host.prompt(PROMPT)  # untimed: starts the recall daemon, as a first session would
    out = []
    for n in range(runs):
        if settle:
            wait_for(partial(_done, host, n + 1), "the last session's detached work")
        start = time.perf_counter()
        host.prompt(PROMPT)
        out.append(time.perf_counter() - start)
    return out


def time_process(argv: Sequence[str], home: Path, *, answer: bool, early: bool = True) -> float:
    """Spawn to exit (``answer=False``) or to the first line on stdout after ``initialize``."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(SRC)}
    if not early:
        env["MEMDIR_MCP_EARLY"] = "0"
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None
    with proc:
        if answer:
            proc.stdin.write(json.dumps(initialize()).encode() + b"\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            elapsed = time.perf_counter() - start
            assert b'"result"' in line, line
            proc.stdin.close()
        else:
            proc.stdin.close()
            proc.wait()
            elapsed = time.perf_counter() - start
    return elapsed


def mcp_start_rows(runs: int, work: Path) -> list[list[object]]:
    home = work / "mcp-home"
    home.mkdir()
    py = sys.executable
    mcp = [py, "-m", "memdir", "mcp", "--dir", str(work / "mcp-memory")]
    sdk = [py, "-c", "import mcp.server.mcpserver"]
    cases = [  # label, argv, wait for the initialize answer, early answers on
        ("python -c pass (interpreter floor)", [py, "-c", "pass"], False, True),
        ("python: import the MCP SDK server", sdk, False, True),
        ("memdir mcp: spawn → initialize answered", mcp, True, True),
        ("... with MEMDIR_MCP_EARLY=0 (the SDK answers)", mcp, True, False),
    ]
    rows: list[list[object]] = []
    for label, argv, answer, early in cases:
        times = [time_process(argv, home, answer=answer, early=early) for _ in range(runs)]
        rows.append([label, f"{statistics.median(times) * 1000:.0f}", f"{min(times) * 1000:.0f}"])
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--no-docs", action="store_true", help="print only")
    args = parser.parse_args(argv)
    cli = find_cli()
    if cli is None:
        print(MISSING_CLI, file=sys.stderr)
        return 2

    load_before = os.getloadavg()[0]
    medians: dict[str, float] = {}
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as api:
        cases = [(setup, True) for setup in SETUPS] + [("hooks + MCP", False)]
        for n, (setup, settle) in enumerate(cases):
            host = prepare(setup, Path(tmp) / f"setup{n}", api, cli, args.memories)
            try:
                times = time_prompts(host, args.runs, settle=settle and setup != "bare")
            finally:
                host.stop_daemon()
            label = setup if settle else f"{setup}, back to back (last session's workers running)"
            medians[label] = statistics.median(times)
            added = medians[label] - medians["bare"]
            rows.append(
                [
                    label,
                    f"{medians[label]:.2f}",
                    f"{min(times):.2f}",
                    "—" if setup == "bare" else f"+{added:.2f}",
                ]
            )
        mcp_rows = mcp_start_rows(args.runs, Path(tmp))

    header = f"claude -p wall time, s (Claude Code {VERSION}, fake API, {args.memories} memories)"
    host_table = table(rows, [header, "median", "min", "added over bare"])
    mcp_table = table(mcp_rows, ["process start", "median ms", "min ms"])
    command = f"python benchmarks/host_bench.py --runs {args.runs} --memories {args.memories}"
    load = f"load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    report = (
        f"`{command}` — {machine()}, {load}; median of {args.runs} after one untimed prompt.\n\n"
        f"{host_table}\n\n{mcp_table}\n"
    )
    print(report)
    if not args.no_docs:
        update_docs_section("host", report, title="In the real Claude Code CLI (issue #18)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
