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
import resource
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


CPU: list[float] = []  # CPU ms (user + sys) of each timed process, in call order


def timed(argv: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> float:
    """Wall ms of one process; its CPU ms is appended to CPU (robust to a loaded machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.append(cpu * 1000)
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        raise RuntimeError(f"{argv} failed: {proc.stderr[-2000:]}")
    return elapsed


def series(calls: list[float]) -> dict[str, list[float]]:
    """The wall times of ``calls`` with the CPU times recorded for them."""
    return {"ms": calls, "cpu": CPU[-len(calls) :]}


def daemon_status(base: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    out = subprocess.run(
        [*base, "--json", "hook", "daemon", "status"], env=env, cwd=cwd, capture_output=True
    )
    value = json.loads(out.stdout)
    assert isinstance(value, dict)
    return value


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


def write_transcript(path: Path, turns: int = 300) -> None:
    """A session's transcript (~150 KB): the hook reads its tail for recall context (#20)."""
    lines = []
    for i in range(turns):
        lines.append(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": f"step {i}: "
                    + "please look at the module and fix the failing check " * 3,
                },
            }
        )
        use = {
            "type": "tool_use",
            "id": f"t{i}",
            "name": "Read",
            "input": {"file_path": f"src/pkg/module_{i}.py"},
        }
        text = {
            "type": "text",
            "text": "I read the module; the check fails because " + "the value is stale " * 5,
        }
        lines.append(
            {"type": "assistant", "message": {"role": "assistant", "content": [text, use]}}
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def measure(n: int, runs: int, warm_runs: int, workdir: Path) -> list[dict[str, Any]]:
    home, project, memory = workdir / "home", workdir / "project", workdir / "memory"
    for d in (home, project / ".git"):
        d.mkdir(parents=True, exist_ok=True)
    write_transcript(project / "t.jsonl")
    listing = workdir / "descriptions.json"
    if listing.exists():  # --keep: the memories and their search index are reused
        descriptions = json.loads(listing.read_text())
    else:
        descriptions = generate(memory, n)
        listing.write_text(json.dumps(descriptions))
    rng = random.Random(n)
    queries = [" ".join(rng.choice(descriptions).split()[:6]) for _ in range(runs + warm_runs)]
    env = {**os.environ, "HOME": str(home), "MEMDIR_DIR": str(memory)}
    env = {k: v for k, v in env.items() if not k.startswith(("CLAUDE_",))}
    base = [*MEMDIR, "--dir", str(memory)]
    build = timed([*base, "recall", "warm up the index"], env, project)  # builds the index
    rows: list[dict[str, Any]] = [
        {"case": "search index build (first recall)", **series([build])},
        {"case": "`python -c pass` (interpreter floor)", **series(
            [timed([sys.executable, "-c", "pass"], env, project) for _ in range(runs)]
        )},
        {"case": "`memdir recall` (before)", **series(
            [timed([*base, "recall", q], env, project) for q in queries[:runs]]
        )},
    ]  # fmt: skip
    cold_env = {**env, "MEMDIR_HOOK_DAEMON": "0"}
    hook = [*base, "hook", "user-prompt-submit"]
    cold = [timed(hook, cold_env, project, hook_input(project, q)) for q in queries[:runs]]
    rows.append({"case": "hook, cold (no daemon, in-process recall)", **series(cold)})
    floor = [timed(hook, cold_env, project, hook_input(project, "yes")) for _ in range(runs)]
    rows.append({"case": "hook, single-word prompt, full CLI (no recall)", **series(floor)})
    subprocess.run([*base, "hook", "daemon", "start"], env=env, cwd=project, capture_output=True)
    timed(hook, env, project, hook_input(project, queries[0]))  # the daemon loads the index
    before = daemon_status(base, env, project)
    warm = [timed(hook, env, project, hook_input(project, q)) for q in queries[runs:]]
    after = daemon_status(base, env, project)
    rows.append({"case": "hook, warm (daemon)", **series(warm)})
    subprocess.run([*base, "hook", "daemon", "stop"], env=env, cwd=project, capture_output=True)
    for row in rows:
        row["n"] = n
        row["rss_mib"] = None
        row["daemon_cpu"] = None
    rows[-1]["rss_mib"] = round(after.get("rss_kib", 0) / 1024, 1)
    rows[-1]["daemon_cpu"] = (after["cpu_s"] - before["cpu_s"]) * 1000 / max(1, len(warm))
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
    parser.add_argument("--keep", type=Path, help="reuse (and keep) memories and indexes here")
    args = parser.parse_args(argv)
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="memdir-hook-bench-"))
    try:
        results = []
        for n in (int(s) for s in args.sizes.split(",")):
            results += measure(n, args.runs, args.warm_runs, workdir / f"n{n}")
        idle = idle_rss(workdir)
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    body = [
        [
            r["n"],
            r["case"],
            len(r["ms"]),
            percentile(r["ms"], 50),
            percentile(r["ms"], 95),
            percentile(r["cpu"], 50),
            "" if r["daemon_cpu"] is None else r["daemon_cpu"],
            "" if r["rss_mib"] is None else r["rss_mib"],
        ]
        for r in results
    ]
    header = ["memories", "what (one process per call)", "n", "wall p50 ms", "wall p95 ms"]
    header += ["CPU p50 ms", "daemon CPU ms/call", "daemon RSS MiB"]
    text = table(body, header)
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
