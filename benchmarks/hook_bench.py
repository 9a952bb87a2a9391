"""Latency of the ``user-prompt-submit`` hook as a whole process, next to ``memdir recall``.

    nice .venv/bin/python benchmarks/hook_bench.py [--sizes 200,2000] [--runs 12] [--warm-runs 40]

What the host pays per prompt is a new process: interpreter start, imports, settings, recall,
output. For each N (synthetic memories, as in ``benchmarks/scale.py``) this measures, wall clock
around ``subprocess.run`` of the real console script:
- ``memdir recall "<q>"``: the way to wire recall into a hook before this change (the baseline);
- the hook, cold: ``MEMDIR_HOOK_DAEMON=0``, recall in-process (ONNX model + index load each time);
- the hook, warm: the per-user recall daemon is up (started once, not timed);
- the floor: the hook with a single-word prompt (start, imports, settings, state; no recall).
Every hook call uses a new session id, so recall is never short-circuited by the surfaced set;
queries are the first words of random memories' descriptions, so memories are found and
surfaced. Also the daemon's resident memory after the runs and after idling with 1 memory dir.
The search index is built once per N before timing (``memdir recall`` builds it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, percentile, table, update_docs_section
from scale import generate

MEMDIR = [str(Path(sys.executable).parent / "memdir")]


def timed(argv: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = (time.perf_counter() - started) * 1000
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        raise RuntimeError(f"{argv} failed: {proc.stderr[-2000:]}")
    return elapsed


def hook_input(project: Path, prompt: str) -> str:
    return json.dumps(
        {
            "session_id": str(uuid.uuid4()),
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    )


def measure(n: int, runs: int, warm_runs: int, workdir: Path) -> list[dict[str, Any]]:
    home, project, memory = workdir / "home", workdir / "project", workdir / "memory"
    for d in (home, project / ".git"):
        d.mkdir(parents=True, exist_ok=True)
    descriptions = generate(memory, n)
    rng = random.Random(n)
    queries = [" ".join(rng.choice(descriptions).split()[:6]) for _ in range(runs + warm_runs)]
    env = {**os.environ, "HOME": str(home), "MEMDIR_DIR": str(memory)}
    env = {k: v for k, v in env.items() if not k.startswith(("CLAUDE_",))}
    base = [*MEMDIR, "--dir", str(memory)]
    build = timed([*base, "recall", "warm up the index"], env, project)  # builds the index
    rows: list[dict[str, Any]] = [{"case": "search index build (first recall)", "ms": [build]}]

    rows.append(
        {
            "case": "`memdir recall` (before)",
            "ms": [timed([*base, "recall", q], env, project) for q in queries[:runs]],
        }
    )
    cold_env = {**env, "MEMDIR_HOOK_DAEMON": "0"}
    hook = [*base, "hook", "user-prompt-submit"]
    rows.append(
        {
            "case": "hook, cold (no daemon)",
            "ms": [timed(hook, cold_env, project, hook_input(project, q)) for q in queries[:runs]],
        }
    )
    floor = [timed(hook, cold_env, project, hook_input(project, "yes")) for _ in range(runs)]
    rows.append({"case": "hook, single-word prompt (floor)", "ms": floor})
    subprocess.run([*base, "hook", "daemon", "start"], env=env, cwd=project, capture_output=True)
    timed(hook, env, project, hook_input(project, queries[0]))  # the daemon loads the index
    warm = [timed(hook, env, project, hook_input(project, q)) for q in queries[runs:]]
    rows.append({"case": "hook, warm (daemon)", "ms": warm})
    status = json.loads(
        subprocess.run(
            [*base, "--json", "hook", "daemon", "status"],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
        ).stdout
    )
    subprocess.run([*base, "hook", "daemon", "stop"], env=env, cwd=project, capture_output=True)
    for row in rows:
        row["n"] = n
        row["rss_mib"] = None
    rows[-1]["rss_mib"] = round(status.get("rss_kib", 0) / 1024, 1)
    return rows


def idle_rss(workdir: Path) -> float:
    """RSS of a daemon that has loaded nothing (started, one status request)."""
    home = workdir / "idle-home"
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home)}
    subprocess.run([*MEMDIR, "hook", "daemon", "start"], env=env, capture_output=True)
    out = subprocess.run(
        [*MEMDIR, "--json", "hook", "daemon", "status"], env=env, capture_output=True, text=True
    )
    subprocess.run([*MEMDIR, "hook", "daemon", "stop"], env=env, capture_output=True)
    return round(json.loads(out.stdout).get("rss_kib", 0) / 1024, 1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="200,2000")
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--warm-runs", type=int, default=40)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="memdir-hook-bench-"))
    try:
        results = []
        for n in (int(s) for s in args.sizes.split(",")):
            results += measure(n, args.runs, args.warm_runs, workdir / f"n{n}")
        idle = idle_rss(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    body = [
        [
            r["n"],
            r["case"],
            len(r["ms"]),
            percentile(r["ms"], 50),
            percentile(r["ms"], 95),
            max(r["ms"]),
            "" if r["rss_mib"] is None else r["rss_mib"],
        ]
        for r in results
    ]
    header = ["memories", "what (one process per call)", "n", "p50 ms", "p95 ms", "max ms"]
    text = table(body, [*header, "daemon RSS MiB"])
    load = os.getloadavg()
    summary = (
        f"Command: `nice .venv/bin/python benchmarks/hook_bench.py --sizes {args.sizes} "
        f"--runs {args.runs} --warm-runs {args.warm_runs}`  \n"
        f"Machine: {machine()}; load average at the end {load[0]:.1f}.\n\n{text}\n\n"
        f"Idle daemon (started, nothing loaded): {idle} MiB RSS. Targets (issue #13) for the "
        "warm hook at 2,000 memories: p50 ≤ 150 ms, p95 ≤ 300 ms."
    )
    print(summary)
    if not args.no_docs:
        update_docs_section("hooks", summary, title="Claude Code hooks (issue #13)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
