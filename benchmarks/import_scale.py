"""``memdir import mcp-memory`` at 10,000 to 400,000 entities, against an older build (issue #39).

    .venv/bin/python benchmarks/import_scale.py [--entities 10000,100000] [--baseline REV]
                                                 [--no-recall] [--no-docs]

A ``memory.jsonl`` in the MCP memory server's format: ``--entities`` entities of one to four
observations each (distinct made-up facts: rare names carry their subjects, as in
``import_bench.py``), half as many relations. For each size, ``memdir import`` runs as a fresh
process of this checkout and, with ``--baseline``, of that git revision (a worktree, imported by
``PYTHONPATH``), one after the other in the same run. Each row: wall time, the process's CPU
(user + system) and its peak resident memory (``wait4``'s ``ru_maxrss``, that process alone).
Then, unless ``--no-recall``, the first ``memdir recall`` of one imported fact, from no index at
all (the daemon off, so the time is the recall's own); and the same as a user runs it, with the
defaults: the import has the recall daemon build the index before it returns (the import's CPU
column is then the import process alone), then the first recall.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

from import_bench import fact, word  # noqa: E402

TYPES = ["service", "project", "person", "component"]


def build_jsonl(path: Path, n: int, seed: int = 5) -> str:
    """The file, and the words of one entity's first observation (the recall's query)."""
    rng = random.Random(seed)
    names: list[str] = []
    query = ""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            name = f"{word(rng)}-{word(rng)}-{i}"
            names.append(name)
            observations = [fact(rng, i * 4 + k)[1] for k in range(rng.randint(1, 4))]
            if i == n // 2:
                query = " ".join(observations[0].split()[:7])
            record = {"type": "entity", "name": name, "entityType": rng.choice(TYPES),
                      "observations": observations}  # fmt: skip
            fh.write(json.dumps(record) + "\n")
        for _ in range(n // 2):
            relation = {"type": "relation", "from": rng.choice(names), "to": rng.choice(names),
                        "relationType": "depends_on"}  # fmt: skip
            fh.write(json.dumps(relation) + "\n")
    return query


def run(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One memdir process: wall seconds, its own CPU seconds and peak RSS (MB), stdout."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # wait4 reports this child's own usage (RUSAGE_CHILDREN would fold in every earlier one)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"memdir {' '.join(args)} failed: {err.strip()[-500:]}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "out": out,
    }


def _as_a_user_runs_it(work: Path, n: int, source: Path, query: str) -> list[list[str]]:
    """This checkout with the defaults: the import has the recall daemon build the index
    before it returns (``memdir.adapters.recall_prepare``); then the first recall."""
    env = {
        **os.environ,
        "HOME": str(work / "home-user"),
        "MEMDIR_HOME": str(work / "home-user" / ".memdir"),
        "PYTHONPATH": str(ROOT / "src"),
    }
    mem = work / f"mem-{n}-user"
    try:
        done = run(["--dir", str(mem), "import", "mcp-memory", str(source)], env)
        built = "index built" if "built the search index" in done["out"] else "index NOT built"
        got = run(["--dir", str(mem), "--json", "recall", query], env)
    finally:
        subprocess.run([sys.executable, "-m", "memdir", "hook", "daemon", "stop"], env=env,
                       capture_output=True, check=False)  # fmt: skip
    found = query.split()[1] in got["out"]
    return [
        ["", "this checkout, defaults", "import + index build", f"{done['wall']:.1f} s",
         f"{done['cpu']:.1f} s", f"{done['rss_mb']:.0f} MB", built],
        ["", "this checkout, defaults", "first recall", f"{got['wall']:.1f} s",
         f"{got['cpu']:.1f} s", f"{got['rss_mb']:.0f} MB", "answered" if found else "NOT FOUND"],
    ]  # fmt: skip


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(where), rev],
        check=True,
        capture_output=True,
    )
    return where / "src"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entities", default="10000,100000")
    parser.add_argument("--baseline", help="a git revision to run the same imports with")
    parser.add_argument("--no-recall", action="store_true")
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    from common import machine, table, update_docs_section

    sizes = [int(s) for s in args.entities.split(",") if s.strip()]
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="memdir-import-scale-") as tmp:
        work = Path(tmp)
        builds = [("this checkout", ROOT / "src")]
        if args.baseline:
            builds.append((f"baseline {args.baseline}", worktree(args.baseline, work / "base")))
        try:
            for n in sizes:
                source = work / f"memory-{n}.jsonl"
                query = build_jsonl(source, n)
                mb = source.stat().st_size / 1e6
                for label, src in builds:
                    env = {
                        **os.environ,
                        "HOME": str(work / "home"),
                        "MEMDIR_HOME": str(work / "home" / ".memdir"),
                        "MEMDIR_PREPARE_RECALL": "0",
                        "MEMDIR_HOOK_DAEMON": "0",
                        "PYTHONPATH": str(src),
                    }
                    mem = work / f"mem-{n}-{len(rows)}"
                    done = run(["--dir", str(mem), "import", "mcp-memory", str(source)], env)
                    written = sum(1 for p in mem.glob("*.md") if p.name != "MEMORY.md")
                    rows.append([f"{n:,} entities ({mb:.0f} MB)", label, "import",
                                 f"{done['wall']:.1f} s", f"{done['cpu']:.1f} s",
                                 f"{done['rss_mb']:.0f} MB", f"{written:,} memories"])  # fmt: skip
                    if not args.no_recall:
                        got = run(["--dir", str(mem), "--json", "recall", query], env)
                        found = query.split()[1] in got["out"]
                        rows.append(["", label, "first recall", f"{got['wall']:.1f} s",
                                     f"{got['cpu']:.1f} s", f"{got['rss_mb']:.0f} MB",
                                     "answered" if found else "NOT FOUND"])  # fmt: skip
                    print(rows[-1] if args.no_recall else rows[-2:], flush=True)
                if not args.no_recall:
                    rows += _as_a_user_runs_it(work, n, source, query)
                    print(rows[-2:], flush=True)
        finally:
            if args.baseline:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(work / "base")], check=False, capture_output=True)  # fmt: skip
    text = table(rows, ["input", "build", "step", "wall", "CPU", "peak RSS", "result"])
    print(text)
    if not args.no_docs:
        cmd = ".venv/bin/python benchmarks/import_scale.py"
        cmd += f" --entities {args.entities}" + (
            f" --baseline {args.baseline}" if args.baseline else ""
        )
        update_docs_section(
            "import-scale",
            f"Command: `{cmd}`  \nMachine: {machine()}. Load average at the end: "
            f"{os.getloadavg()[0]:.1f}. Each step a fresh process; the daemon off.\n\n{text}\n",
            title="Import at scale",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
