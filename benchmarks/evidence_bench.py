"""What the evidence check costs: per injected memory on a 5,000-file repository, and the warm
hook at 2,000 memories with the check and without it.

    nice .venv/bin/python benchmarks/evidence_bench.py [--repo DIR] [--runs 40]

Issue #37's targets: checking ≤ 5 ms per injected memory p50 on a repository of 5,000 files
(cached per HEAD and file state), and no slower hook at 2,000 memories.

``--repo`` is a git directory with a long history (default: ansible/ansible's mirror as
``fetch`` puts it, 5,053 files, 54,660 commits; not committed). It is cloned without a checkout
(objects shared), and memories are written about its code at HEAD~200 (``evidence_replay``'s
templates), dated then.

1. ``screen`` of one memory, as the hook calls it, uncached (each memory the first time after a
   commit) and cached (the same HEAD again), p50 / p95 per memory; and five at a time.
2. The warm hook (a process per prompt, the daemon up) in that repository at 2,000 memories
   (1,960 synthetic, 40 anchored, queries that recall the anchored ones), with the check
   (default) and with ``MEMDIR_EVIDENCE=0``, interleaved, p50 / p95: the first 40 prompts see
   each memory for the first time at this HEAD (uncached), the next 40 again (cached).
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
from evidence_replay import cases_at, git
from hook_bench import MEMDIR
from memdir.evidence import screen
from scale import generate

DEFAULT_REPO = Path("/work/.mirror/ansible+ansible/repo")


def memories(repo: Path, memory: Path, count: int) -> list[Path]:
    history = git(repo, "rev-list", "--first-parent", "-n", "400", "HEAD").split()
    at = history[200]
    when = int(git(repo, "log", "-1", "--format=%ct", at).strip())
    rng = random.Random(37)
    cases: list[Any] = []
    while len(cases) < count:
        cases += cases_at(repo, at, rng)
    out = []
    memory.mkdir(parents=True, exist_ok=True)
    for i, case in enumerate(cases[:count]):
        path = memory / f"anchored_{i:03d}.md"
        path.write_text(
            f"---\nname: {case.name or Path(case.path).stem} notes\n"
            f"description: where {case.name or Path(case.path).stem} lives in the code\n"
            f"type: project\n---\n{case.text}\n"
        )
        os.utime(path, (when, when))
        out.append(path)
    return out


def per_memory(repo: Path, paths: list[Path], cache: Path) -> list[list[Any]]:
    shutil.rmtree(cache, ignore_errors=True)
    uncached, cached = [], []
    for path in paths:
        started = time.perf_counter()
        screen([path], repo, cache)
        uncached.append((time.perf_counter() - started) * 1000)
    for path in paths:
        started = time.perf_counter()
        screen([path], repo, cache)
        cached.append((time.perf_counter() - started) * 1000)
    fives = []
    for i in range(0, len(paths) - 4, 5):
        started = time.perf_counter()
        screen(paths[i : i + 5], repo, cache)
        fives.append((time.perf_counter() - started) * 1000 / 5)
    states: dict[str, int] = {}
    for c in screen(paths, repo, cache):
        states[c.evidence.state or "no anchor"] = states.get(c.evidence.state or "no anchor", 0) + 1
    mix = ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
    return [
        [
            "one memory, uncached (first check after a commit)",
            len(uncached),
            percentile(uncached, 50),
            percentile(uncached, 95),
            mix,
        ],
        [
            "one memory, cached (same HEAD, same file)",
            len(cached),
            percentile(cached, 50),
            percentile(cached, 95),
            "",
        ],
        [
            "five memories at once, cached, per memory",
            len(fives),
            percentile(fives, 50),
            percentile(fives, 95),
            "",
        ],
    ]


def hook(repo: Path, anchored: list[Path], memory: Path, home: Path, runs: int) -> list[list[Any]]:
    generate(memory / "synthetic", 2000 - len(anchored))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMDIR_"))}
    env.update(HOME=str(home), MEMDIR_DAEMON_IDLE="600")
    base = [*MEMDIR, "--dir", str(memory)]
    subprocess.run([*base, "reindex"], env=env, cwd=repo, capture_output=True)
    queries = []
    for path in anchored:
        text = path.read_text().split("---\n", 2)[2]
        queries.append(" ".join(text.replace("`", " ").split()[:8]))
    subprocess.run([*base, "hook", "daemon", "start"], env=env, cwd=repo, capture_output=True)
    first, later = "with the check, first sight of each memory", "with the check, cached"
    times: dict[str, list[float]] = {first: [], later: [], "MEMDIR_EVIDENCE=0": []}
    injected = {k: 0 for k in times}
    try:
        for i in range(runs):
            q = queries[i % len(queries)]
            checked = first if i < len(queries) else later
            for label, extra in ((checked, {}), ("MEMDIR_EVIDENCE=0", {"MEMDIR_EVIDENCE": "0"})):
                body = {
                    "session_id": str(uuid.uuid4()),
                    "transcript_path": str(home / "none.jsonl"),
                    "cwd": str(repo),
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": q,
                }
                started = time.perf_counter()
                proc = subprocess.run(
                    [*base, "hook", "user-prompt-submit"],
                    input=json.dumps(body),
                    capture_output=True,
                    text=True,
                    env={**env, **extra},
                    cwd=repo,
                )
                times[label].append((time.perf_counter() - started) * 1000)
                injected[label] += "anchored_" in proc.stdout
    finally:
        subprocess.run([*base, "hook", "daemon", "stop"], env=env, cwd=repo, capture_output=True)
    return [
        [label, len(t), percentile(t, 50), percentile(t, 95), f"{injected[label]}/{len(t)}"]
        for label, t in times.items()
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    parser.add_argument("--runs", type=int, default=80)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="memdir-evidence-"))
    try:
        repo = work / "repo"
        subprocess.run(
            ["git", "clone", "-q", "--no-checkout", "--shared", str(args.repo), str(repo)],
            check=True,
        )
        files = len(git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines())
        anchored = memories(repo, work / "memory", 40)
        first = per_memory(repo, anchored, work / "cache")
        second = hook(repo, anchored, work / "memory", work / "home", args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    fmt = lambda rows: [[r[0], r[1], f"{r[2]:.1f}", f"{r[3]:.1f}", *r[4:]] for r in rows]  # noqa: E731
    text = (
        f"Command: `nice .venv/bin/python benchmarks/evidence_bench.py --runs {args.runs}` "
        f"(repository: {args.repo.parent.name.replace('+', '/')}, {files:,} files)  \n"
        f"Machine: {machine()}; load average at the end {os.getloadavg()[0]:.1f}.\n\n"
        + table(fmt(first), ["evidence check", "n", "ms p50", "ms p95", "verdicts"])
        + "\n\n"
        + table(
            fmt(second),
            [
                "warm hook at 2,000 memories (process per prompt)",
                "n",
                "wall ms p50",
                "wall ms p95",
                "an anchored memory injected",
            ],
        )
        + "\n"
    )
    print(text)
    if not args.no_docs:
        update_docs_section(
            "evidence-cost", text, title="Evidence: what the check costs (issue #37)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
