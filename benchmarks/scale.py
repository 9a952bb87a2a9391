"""How memdir's scan and offline recall cost grows with the number of memories.

    .venv/bin/python benchmarks/scale.py [--sizes 200,2000,20000,100000] [--queries 50]

For each N, a child process (so peak RSS is per N) writes N synthetic memory files (Zipf-sampled
English words: a 3–6 word name, a 10–16 word description, a 30–90 word body), then measures:
- scan: ``scan_headers(limit=None)`` without and with the header cache (second run = warm);
- index build: ``SearchIndex.refresh()`` from an empty cache (embedding + BM25 + save);
- index load: a fresh ``LocalSelector`` over the saved cache (a new process's first refresh);
- recall: ``LocalSelector.select_sync`` latency p50/p95 — cold (first query of a new selector,
  including index load and ONNX start) and warm, over all N memories, with and without passing
  all N headers (the header freshness check is O(N));
- peak RSS (``ru_maxrss``) of the child.

Documents are embedded with real MiniLM up to ``--minilm-max`` memories (default 2,000). Above
that, to keep two shared cores usable, documents get a 384-dimension hashing stand-in (same shape,
same search cost) while queries still run through real MiniLM; the build time printed for those N
is then the measured build plus the MiniLM embedding time extrapolated from the measured rate.
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
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, memory_text, percentile, table, update_docs_section
from memdir.recall.embed import VOCAB_PATH, HashingEmbedder, MiniLMEmbedder, Vectors
from memdir.recall.local import LocalSelector
from memdir.scan import HeaderCache, scan_headers

VOCAB_SIZE = 20000


class QueryMiniLMEmbedder:
    """Real MiniLM for single texts (queries); a 384-d hashing stand-in for document batches."""

    def __init__(self) -> None:
        self._real = MiniLMEmbedder()
        self._fake = HashingEmbedder(dim=384)

    @property
    def name(self) -> str:
        return "scale-standin-384"

    @property
    def dim(self) -> int:
        return 384

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._real.embed(texts) if len(texts) == 1 else self._fake.embed(texts)


def vocabulary(rng: random.Random) -> list[str]:
    """Real English words, most frequent first: the whole words of the vendored BERT vocab."""
    del rng  # the vocabulary is fixed; kept in the signature so callers seed one generator
    words = [
        w
        for w in VOCAB_PATH.read_text(encoding="utf-8").splitlines()[1996:]
        if w.isalpha() and w.isascii() and len(w) >= 3
    ]
    return words[:VOCAB_SIZE]


def generate(root: Path, n: int, seed: int = 7) -> list[str]:
    """Write n memory files (plain writes: fixture data, fsync per file would dominate)."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = [1.0 / (i + 1) for i in range(len(words))]  # Zipf-like, as in real text

    def phrase(lo: int, hi: int) -> str:
        return " ".join(rng.choices(words, weights, k=rng.randint(lo, hi)))

    root.mkdir(parents=True, exist_ok=True)
    descriptions = []
    for i in range(n):
        name, description = phrase(3, 6), phrase(10, 16)
        body = "\n".join(phrase(10, 30) for _ in range(3))
        folder = root / f"d{i // 1000:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{i:06d}.md").write_text(memory_text(name, description, body))
        descriptions.append(description)
    return descriptions


def child(n: int, queries: int, minilm_max: int, workdir: Path) -> dict[str, Any]:
    root, cache = workdir / f"mem-{n}", workdir / f"cache-{n}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    started = time.perf_counter()
    descriptions = generate(root, n)
    out: dict[str, Any] = {"n": n, "generate_s": time.perf_counter() - started}
    rng = random.Random(11)
    qs = [
        " ".join(rng.sample(d.split(), k=min(4, len(d.split()))))
        for d in rng.choices(descriptions, k=queries)
    ]

    cache_file = cache / "headers.json"
    t = time.perf_counter()
    headers = scan_headers(root, limit=None, cache=HeaderCache(cache_file)).headers
    out["scan_cold_ms"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    headers = scan_headers(root, limit=None, cache=HeaderCache(cache_file)).headers
    out["scan_warm_ms"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    scan_headers(root, limit=200)
    out["scan_200_nocache_ms"] = (time.perf_counter() - t) * 1000

    real = n <= minilm_max
    embedder: Any = MiniLMEmbedder() if real else QueryMiniLMEmbedder()
    embedder.embed(["warm up the model"])
    selector = LocalSelector(root, cache / "index", embedder=embedder, refresh_interval=1e9)
    t = time.perf_counter()
    selector.refresh()
    build = time.perf_counter() - t
    out["embedded_with"] = "MiniLM" if real else "stand-in"
    out["build_s"] = build

    cold = LocalSelector(root, cache / "index", embedder=embedder, refresh_interval=1e9)
    t = time.perf_counter()
    cold.select_sync(qs[0], None)
    out["recall_cold_ms"] = (time.perf_counter() - t) * 1000
    warm = []
    for q in qs:
        t = time.perf_counter()
        cold.select_sync(q, None)
        warm.append((time.perf_counter() - t) * 1000)
    with_headers = []
    for q in qs:
        t = time.perf_counter()
        cold.select_sync(q, headers)
        with_headers.append((time.perf_counter() - t) * 1000)
    out["recall_warm_ms"] = (percentile(warm, 50), percentile(warm, 95))
    out["recall_headers_ms"] = (percentile(with_headers, 50), percentile(with_headers, 95))
    t = time.perf_counter()
    LocalSelector(root, cache / "index", embedder=embedder).refresh()
    out["index_load_s"] = time.perf_counter() - t
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return out


def minilm_rate(workdir: Path) -> float:
    """Documents per second MiniLM embeds on this machine (measured on 256 synthetic memories)."""
    rng = random.Random(3)
    words = vocabulary(rng)
    texts = [" ".join(rng.choices(words, k=rng.randint(60, 120))) for _ in range(256)]
    embedder = MiniLMEmbedder()
    embedder.embed(texts[:8])
    t = time.perf_counter()
    embedder.embed(texts)
    return len(texts) / (time.perf_counter() - t)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="memdir scale benchmark")
    parser.add_argument("--sizes", default="200,2000,20000,100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--minilm-max", type=int, default=2000)
    parser.add_argument("--workdir", default="/tmp/memdir-scale")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir)
    if args.child is not None:
        print(json.dumps(child(args.child, args.queries, args.minilm_max, workdir)))
        return 0
    rate = minilm_rate(workdir)
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        cmd = [sys.executable, __file__, "--child", str(n), "--queries", str(args.queries)]
        cmd += ["--minilm-max", str(args.minilm_max), "--workdir", str(workdir)]
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=dict(os.environ), check=False
        )
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"N={n} done", file=sys.stderr)
    rows = []
    for r in results:
        build = r["build_s"] + (0 if r["embedded_with"] == "MiniLM" else r["n"] / rate)
        note = "" if r["embedded_with"] == "MiniLM" else " (extrapolated)"
        rows.append(
            [
                r["n"],
                f"{r['scan_cold_ms']:.0f} / {r['scan_warm_ms']:.0f}",
                f"{r['scan_200_nocache_ms']:.0f}",
                f"{build:.1f}{note}",
                f"{r['index_load_s']:.2f}",
                f"{r['recall_cold_ms']:.0f}",
                "{:.1f} / {:.1f}".format(*r["recall_warm_ms"]),
                "{:.1f} / {:.1f}".format(*r["recall_headers_ms"]),
                f"{r['peak_rss_mb']:.0f}",
            ]
        )
    command = ".venv/bin/python benchmarks/scale.py " + " ".join(argv or sys.argv[1:])
    text = "\n".join(
        [
            f"Command: `{command.strip()}`  ",
            f"Machine: {machine()}. MiniLM embedding rate measured here: {rate:.0f} memories/s.",
            "",
            table(
                rows,
                [
                    "memories",
                    "scan all ms (no cache / header cache)",
                    "scan newest 200 ms",
                    "index build s",
                    "index load s",
                    "recall cold ms",
                    "recall warm ms p50 / p95",
                    "recall warm, N headers passed, p50 / p95",
                    "peak RSS MB",
                ],
            ),
            "",
            f"Documents above {args.minilm_max:,} memories are embedded with a 384-d stand-in (see "
            "benchmarks/scale.py); queries always use real MiniLM. Recall = `select_sync` over all "
            "memories (query embedding, BM25, cosine, fusion, relevance gate).",
        ]
    )
    print(text)
    if not args.no_docs:
        update_docs_section("scale", text, title="Scale (scan and offline recall cost by N)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
