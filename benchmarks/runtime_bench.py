"""What MemoryRuntime adds to an agent loop, per turn, at 200 and 2,000 memories (offline).

    nice .venv/bin/python benchmarks/runtime_bench.py [--sizes 200,2000] [--turns 60]

For each N a scratch project gets N synthetic memories (real English words, Zipf-sampled, as in
``scale.py``); a runtime with no model (local recall: BM25 + MiniLM; rule extraction; offline
session notes; the compaction check against a 200k window) then runs ``--turns`` user turns.
Each query is a few words of a random memory's description, so recall finds and attaches files.

Per turn, the time from the user's message to the model call (the model itself excluded):
- ``recall awaited``: on_user_message → attachments(wait=∞) → attach → before_model_call; the
  whole recall runs on the turn's critical path (the worst case: the loop waits for recall);
- ``non-blocking``: the same with attachments(wait=0), what a loop that never waits pays.
End of turn:
- ``on_turn_end``: the call itself (transcript append, scheduling the background work);
- ``background``: until rule extraction and the offline notes update (forced every turn) finish.
Baselines in the same run: the bare loop without memdir (build the request), and the recall
engine alone (``MemoryRecall.recall`` awaited on the loop with a plain ``RecallSession``) on the
same queries. Every turn starts with nothing surfaced and the session budget unspent, so each
one pays for a full recall. The CPU-time row (all threads of the process) is the work done,
independent of how busy the machine is; the wall-clock rows include waiting for a core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, percentile, table
from memdir.config import load_settings
from memdir.llm.base import CompletionRequest, Message
from memdir.paths import resolve_paths
from memdir.recall.session import RecallSession
from memdir.runtime import MemoryRuntime, RuntimeOptions
from memdir.session import OfflineUpdater, SessionMemory, SessionMemoryConfig
from scale import generate

WINDOW = 200_000
REPLY = "Here is what I found. " * 20


def ms(values: Sequence[float]) -> tuple[float, float]:
    return percentile(values, 50) * 1000, percentile(values, 95) * 1000


async def idle(rt: MemoryRuntime) -> None:
    while any(s.state == "running" for s in rt.status()[1:3]):
        await asyncio.sleep(0.001)


async def run_size(n: int, turns: int, workdir: Path) -> list[list[object]]:
    home, project = workdir / f"home{n}", workdir / f"project{n}"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {"HOME": str(home)}
    settings = load_settings(
        env, cwd=project, flag_settings=None, claude_mode=False, memory_dir_flag=None,
        policy_dir=workdir / "no-policy",
    )  # fmt: skip
    paths = resolve_paths(settings, cwd=project)
    descriptions = generate(paths.memory_dir, n)
    rng = random.Random(n)
    queries = []
    for i in range(turns + 5):
        words = rng.choice(descriptions).split()
        start = rng.randint(0, max(0, len(words) - 4))
        queries.append(f"turn {i}: what about " + " ".join(words[start : start + 4]))

    notes = SessionMemory(
        paths.session_memory_path("bench"),
        OfflineUpdater(),
        config=SessionMemoryConfig(init_tokens=0, update_tokens=0),  # update after every turn
    )
    rt = MemoryRuntime(
        settings, paths, session_id="bench", session_memory=notes,
        options=RuntimeOptions(extraction="rules"),
    )  # fmt: skip
    started = time.perf_counter()
    await rt.start()
    await rt.board.wait("recall-warmup", 1800)  # index build + model load, once per memory dir
    rt.on_user_message("warm up the recall path please")
    await rt.attachments(wait=600)
    startup = time.perf_counter() - started

    awaited, nonblocking, turn_end, background, bare, engine = [], [], [], [], [], []
    cpu: list[float] = []
    messages: list[Message] = []
    for i, query in enumerate(queries):
        # Every turn does the full recall: nothing already surfaced, budget not spent (a long
        # session would otherwise stop recalling once its 60 KiB budget is used up).
        rt.recall_session.surfaced.clear()
        rt.recall_session.reset_budget()
        c0, t0 = time.process_time(), time.perf_counter()
        rt.on_user_message(query)
        got = await rt.attachments(wait=600)
        sent = rt.attach([*messages, Message("user", query)], got)
        sent = await rt.before_model_call(sent, context_window=WINDOW)
        c1, t1 = time.process_time(), time.perf_counter()
        rt.on_user_message(query + " again")
        quick = await rt.attachments(wait=0)
        quick_sent = rt.attach([*sent, Message("user", query)], quick)
        await rt.before_model_call(quick_sent, context_window=WINDOW)
        t2 = time.perf_counter()
        CompletionRequest(system="x", messages=tuple([*messages, Message("user", query)]))
        t3 = time.perf_counter()
        assert rt.recall_engine is not None
        await rt.recall_engine.recall(query, RecallSession())
        t4 = time.perf_counter()
        sent.append(Message("assistant", REPLY))
        await rt.on_turn_end(sent)
        t5 = time.perf_counter()
        await idle(rt)
        t6 = time.perf_counter()
        messages = sent
        if i >= 5:  # the first turns warm caches; they are not counted
            awaited.append(t1 - t0)
            cpu.append(c1 - c0)
            nonblocking.append(t2 - t1)
            bare.append(t3 - t2)
            engine.append(t4 - t3)
            turn_end.append(t5 - t4)
            background.append(t6 - t5)
    await rt.end()
    rows: list[list[object]] = []
    for label, values in (
        ("bare loop, no memdir (baseline)", bare),
        ("recall engine alone, on the loop (baseline)", engine),
        ("runtime: user message → model call, recall awaited", awaited),
        ("  the same, CPU time of the process (all threads)", cpu),
        ("runtime: user message → model call, non-blocking", nonblocking),
        ("runtime: on_turn_end()", turn_end),
        ("background: rule extraction + offline notes", background),
    ):
        p50, p95 = ms(values)
        rows.append([n, label, round(p50, 2), round(p95, 2)])
    rows.append([n, f"start() incl. index build + model load: {startup:.1f} s", "", ""])
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,2000")
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args(argv)
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="memdir-runtime-bench-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            rows += asyncio.run(run_size(n, args.turns, Path(tmp)))
    print(machine(), "· load average", " / ".join(f"{x:.1f}" for x in os.getloadavg()))
    print(table(rows, ["memories", "what", "p50 ms", "p95 ms"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
