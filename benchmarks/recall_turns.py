"""Per-turn recall cost at scale, before and after incremental indexes (issue #9), in one run.

    .venv/bin/python benchmarks/recall_turns.py [--sizes 20000,100000] [--turns 20]

The memory dirs are scale.py's synthetic ones (1,000 files per subdirectory). For each N and for
each code version, a child process keeps one ``MemoryRecall`` over a ``LocalSelector`` alive (as
an agent loop or a hook daemon would) and times ``find(query)``:

- a turn with no change since the previous one;
- a turn after 10 memory files were rewritten (atomic writes, as the store does).

"before" runs the same script against the source tree of the commit this work started from
(``--before-commit``, extracted with ``git archive``): it scanned every header each turn and
rebuilt the BM25 index on any change. Documents are embedded with scale.py's 384-dimension
stand-in (same search cost) so the build stays in minutes; queries use real MiniLM. The index
build rate row embeds 200 synthetic memories with real MiniLM through ``SearchIndex.refresh``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEFORE_COMMIT = "c0bd385"


def child(args: argparse.Namespace) -> dict[str, Any]:
    """Runs inside the measured code version (``memdir`` from PYTHONPATH)."""
    sys.path.insert(0, str(HERE))
    from common import memory_text, percentile
    from memdir.atomic import atomic_write
    from memdir.recall.embed import MiniLMEmbedder
    from memdir.recall.engine import MemoryRecall
    from memdir.recall.local import LocalSelector
    from memdir.recall.search_index import SearchIndex
    from scale import QueryMiniLMEmbedder, vocabulary

    work = Path(args.workdir)
    out: dict[str, Any] = {}
    if args.rate:
        rng = random.Random(5)
        words = vocabulary(rng)
        weights = [1.0 / (i + 1) for i in range(len(words))]
        root = work / f"rate-{args.tag}"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for i in range(200):

            def phrase(lo: int, hi: int) -> str:
                return " ".join(rng.choices(words, weights, k=rng.randint(lo, hi)))

            body = "\n".join(phrase(10, 30) for _ in range(3))
            (root / f"m{i:04d}.md").write_text(memory_text(phrase(3, 6), phrase(10, 16), body))
        embedder = MiniLMEmbedder()
        embedder.embed(["warm up"])
        index = SearchIndex(root, work / f"rate-cache-{args.tag}", embedder)
        started = time.perf_counter()
        index.refresh()
        out["rate"] = 200 / (time.perf_counter() - started)
        shutil.rmtree(work / f"rate-cache-{args.tag}", ignore_errors=True)
        return out
    root = work / f"mem-{args.n}"
    cache = work / f"cache-{args.n}-{args.tag}"
    shutil.rmtree(cache, ignore_errors=True)
    embedder = QueryMiniLMEmbedder()
    embedder.embed(["warm up the model"])
    selector = LocalSelector(root, cache / "index", embedder=embedder)
    recall = MemoryRecall(root, selector, header_cache=cache / "headers.json")
    rng = random.Random(11)
    words = vocabulary(rng)
    queries = [" ".join(rng.sample(words[:3000], 4)) for _ in range(args.turns)]
    started = time.perf_counter()
    asyncio.run(recall.find(queries[0]))
    out["first_turn_s"] = time.perf_counter() - started
    still: list[float] = []
    for q in queries:
        started = time.perf_counter()
        asyncio.run(recall.find(q))
        still.append((time.perf_counter() - started) * 1000)
    changed: list[float] = []
    files = sorted(root.rglob("*.md"))
    for turn in range(args.change_turns):
        for path in rng.sample(files, 10):
            atomic_write(path, memory_text(f"edited {turn}", " ".join(rng.sample(words, 12)), "x"))
        started = time.perf_counter()
        asyncio.run(recall.find(queries[turn % len(queries)]))
        changed.append((time.perf_counter() - started) * 1000)
    out["still_ms"] = (percentile(still, 50), percentile(still, 95))
    out["changed_ms"] = (percentile(changed, 50), percentile(changed, 95))
    shutil.rmtree(cache, ignore_errors=True)
    return out


def before_tree(commit: str, work: Path) -> Path:
    """The source tree of ``commit`` (git archive), for the "before" children."""
    target = work / f"src-{commit}"
    if not (target / "src" / "memdir").is_dir():
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "src"],
            check=True,
            capture_output=True,
        ).stdout
        tar_path = work / f"{commit}.tar"
        tar_path.write_bytes(archive)
        with tarfile.open(tar_path) as tar:
            tar.extractall(target, filter="data")
        tar_path.unlink()
    return target / "src"


def run_child(src: Path, extra: list[str], args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [sys.executable, __file__, "--child", "--workdir", args.workdir, *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="per-turn recall before/after")
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--change-turns", type=int, default=5)
    parser.add_argument("--rate-rounds", type=int, default=2)
    parser.add_argument("--before-commit", default=BEFORE_COMMIT)
    parser.add_argument("--workdir", default="/tmp/memdir-recall-turns")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--tag", default="", help=argparse.SUPPRESS)
    parser.add_argument("--rate", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    sys.path.insert(0, str(HERE))
    from common import machine, table, update_docs_section
    from scale import generate

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    versions = {"before": before_tree(args.before_commit, work), "after": ROOT / "src"}
    common = ["--turns", str(args.turns), "--change-turns", str(args.change_turns)]
    rows: list[list[object]] = []
    rates = {v: 0.0 for v in versions}
    for _ in range(args.rate_rounds):  # interleaved, best of: the machine is shared
        for v, src in versions.items():
            rates[v] = max(rates[v], run_child(src, ["--rate", "--tag", v], args)["rate"])
    for n in (int(s) for s in args.sizes.split(",")):
        root = work / f"mem-{n}"
        if not root.is_dir():
            generate(root, n)
        for version, src in versions.items():
            r = run_child(src, [*common, "--n", str(n), "--tag", version], args)
            rows.append(
                [
                    f"{n:,}",
                    version,
                    f"{r['first_turn_s']:.1f}",
                    "{:.1f} / {:.1f}".format(*r["still_ms"]),
                    "{:.1f} / {:.1f}".format(*r["changed_ms"]),
                ]
            )
            print(f"N={n} {version} done", file=sys.stderr)
    head = [
        "memories",
        "code",
        "first turn s (index build with stand-in)",
        "turn, nothing changed, ms p50 / p95",
        "turn after 10 files changed, ms p50 / p95",
    ]
    command = "nice .venv/bin/python benchmarks/recall_turns.py " + " ".join(argv or sys.argv[1:])
    text = "\n".join(
        [
            f"Command: `{command.strip()}`  ",
            f"Machine: {machine()}; before = commit {args.before_commit}.",
            "",
            table(rows, head),
            "",
            f"Index build rate with real MiniLM (200 synthetic memories of 40–110 words, "
            f"`SearchIndex.refresh`, best of {args.rate_rounds} interleaved runs): "
            f"before {rates['before']:.1f} memories/s, after {rates['after']:.1f} memories/s.",
        ]
    )
    print(text)
    if not args.no_docs:
        update_docs_section("recall-scale", text, title="Per-turn recall at scale")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
