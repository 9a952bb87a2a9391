"""Offline dream on a messy memory dir: ``nice .venv/bin/python benchmarks/dream_bench.py``.

Builds the dir with ``benchmarks/messy_dir.py`` (planted exact/near duplicates, contradicting
pairs, relative dates, a broken 200+ line index), then runs, each in a fresh process (so peak
RSS is its own):

* ``exact-hash`` — the baseline: files whose body bytes hash the same are duplicates;
* ``offline`` — ``memdir dream --offline --no-embeddings`` (lexical only);
* ``offline+minilm`` — the default when the ``recall`` extra is installed.

Reports duplicate and contradiction precision/recall against the planted truth, whether the
index is within its limits afterwards, that no line of any input was lost, time and peak RSS.
A second table times the dream gate when closed (the common case at every session start/end).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from memdir import frontmatter, index  # noqa: E402
from memdir.consolidate.gate import DreamConfig, DreamGate  # noqa: E402
from memdir.consolidate.lock import ConsolidationLock  # noqa: E402
from memdir.consolidate.snapshot import Snapshots  # noqa: E402
from memdir.sameness import normalise  # noqa: E402
from memdir.store import MemoryStore  # noqa: E402
from memdir.validity import validity_of  # noqa: E402
from messy_dir import build  # noqa: E402

VARIANTS = ("exact-hash", "offline", "offline+minilm")
_ANNOTATION = re.compile(r" \((?:\d{4}(?:-\d{2}){0,2}|week of \d{4}-\d{2}-\d{2})\)")


def _read_all(root: Path) -> dict[str, frontmatter.Parsed]:
    out = {}
    for path in sorted(root.glob("*.md")):
        if path.name != index.ENTRYPOINT_NAME:
            out[path.name] = frontmatter.parse(path.read_text("utf-8"))
    return out


def exact_hash_groups(root: Path) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for rel, parsed in _read_all(root).items():
        groups.setdefault(hashlib.sha256(parsed.body.encode()).hexdigest(), []).append(rel)
    return [g for g in groups.values() if len(g) > 1]


def run_variant(variant: str, root: Path, state: Path) -> dict[str, Any]:
    store = MemoryStore(root)
    started = time.perf_counter()
    if variant == "exact-hash":
        groups = exact_hash_groups(root)
        elapsed = time.perf_counter() - started
        return {"groups": groups, "contradictions": [], "resolved": [], "elapsed": elapsed}
    from memdir.consolidate.offline import OfflineDreamer

    embedder = None
    if variant == "offline+minilm":
        from memdir.recall.embed import MiniLMEmbedder

        embedder = MiniLMEmbedder()
    dreamer = OfflineDreamer(store, Snapshots(store, state / "snaps"), embedder=embedder)
    report = dreamer.run()
    elapsed = time.perf_counter() - started
    plan = report.details["plan"]
    groups = [[g["keep"], *g["merged"]] for g in plan["duplicates"]]
    contra = [[c["older"], c["newer"]] for c in plan["contradictions"]]
    resolved = [[c["older"], c["newer"]] for c in plan["contradictions"] if c["resolved"]]
    return {
        "groups": groups,
        "contradictions": contra,
        "resolved": resolved,
        "elapsed": elapsed,
        "dates_fixed": plan["dates_fixed"],
    }


def child(args: argparse.Namespace) -> None:
    result = run_variant(args.variant, args.dir, args.state)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def _pairs(groups: list[list[str]]) -> set[frozenset[str]]:
    return {frozenset((g[0], m)) for g in groups for m in g[1:]}


def score_duplicates(truth: dict[str, Any], groups: list[list[str]]) -> tuple[float, float]:
    cluster: dict[str, int] = {}
    for i, (a, b) in enumerate(truth["duplicates"]):
        cid = cluster.get(a, cluster.get(b, i))
        cluster[a] = cluster[b] = cid
    predicted = _pairs(groups)
    correct = sum(1 for p in predicted if len({cluster.get(x, -id(x)) for x in p}) == 1)
    group_of = {m: i for i, g in enumerate(groups) for m in g}
    found = sum(
        1 for a, b in truth["duplicates"] if a in group_of and group_of.get(b) == group_of[a]
    )
    precision = correct / len(predicted) if predicted else 1.0
    return precision, found / len(truth["duplicates"])


def score_contradictions(
    truth: dict[str, Any], found: list[list[str]], resolved: list[list[str]]
) -> dict[str, Any]:
    planted = {frozenset((c["older"], c["newer"])): c["explicit"] for c in truth["contradictions"]}
    got = {frozenset(p) for p in found}
    hits = got & set(planted)
    fixed = {frozenset(p) for p in resolved}
    unsafe = [p for p in fixed if not planted.get(p, False)]
    explicit = [p for p, e in planted.items() if e]
    return {
        "precision": len(hits) / len(got) if got else 1.0,
        "recall": len(hits) / len(planted) if planted else 1.0,
        "resolved_explicit": sum(1 for p in explicit if p in fixed) / max(len(explicit), 1),
        "unsafe_resolutions": len(unsafe),
    }


def check_after(before: Path, after: Path) -> dict[str, Any]:
    """Index limits after the run, and that every distinct input line still exists somewhere."""
    text = index.read_entrypoint(after)
    loaded = index.load_for_prompt(text)
    store = MemoryStore(after)
    report = store.check_index()[0]
    outputs = _read_all(after)
    live_lines: set[str] = set()
    all_lines: set[str] = set()
    retired_unindexed = 0
    for rel, parsed in outputs.items():
        current = validity_of(parsed.meta).status(time_today()) == "current"
        lines = [parsed.meta.get("description") or "", *parsed.body.splitlines()]
        keys = {normalise(_ANNOTATION.sub("", str(line))) for line in lines}
        all_lines |= keys
        if current:
            live_lines |= keys
        elif rel in report.unindexed:
            retired_unindexed += 1
    lost = only_retired = 0
    for parsed in _read_all(before).values():
        for line in [parsed.meta.get("description") or "", *parsed.body.splitlines()]:
            key = normalise(str(line))
            if key and key not in all_lines:
                lost += 1
            elif key and key not in live_lines:
                only_retired += 1
    return {
        "index_lines": loaded.line_count,
        "index_within_limits": not loaded.truncated,
        "dead_links": len(report.dead_links),
        "duplicate_entries": len(report.duplicates),
        "long_lines": len(report.long_lines),
        "unindexed_current": len(report.unindexed) - retired_unindexed,
        "lines_lost": lost,
        "lines_only_in_retired": only_retired,
    }


def time_today() -> Any:
    import datetime as dt

    return dt.date.today()


def gate_timing(work: Path, n: int = 2000) -> list[list[Any]]:
    mem, tdir = work / "gate-mem", work / "gate-transcripts"
    mem.mkdir()
    tdir.mkdir()
    for i in range(50):
        (tdir / f"00000000-0000-4000-8000-{i:012d}.jsonl").write_text("{}\n")
    lock = ConsolidationLock(mem, state_dir=work / "gate-state")
    assert lock.try_acquire() is not None
    lock.release()
    rows = []
    closed = DreamGate(lock, tdir, enabled=True)
    scan = DreamGate(lock, tdir, enabled=True, config=DreamConfig(min_hours=0, scan_throttle_s=0))
    for label, gate in (("closed (time gate)", closed), ("open path: scan 50 transcripts", scan)):
        times = []
        for _ in range(n):
            start = time.perf_counter()
            gate.check()
            times.append(time.perf_counter() - start)
        times.sort()
        rows.append(
            [label, f"{times[len(times) // 2] * 1e6:.1f}", f"{times[int(n * 0.99)] * 1e6:.1f}"]
        )
    return rows


def parent(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="dream-bench-"))
    try:
        pristine = work / "pristine"
        truth = build(pristine, args.seed)
        rows = []
        for variant in VARIANTS:
            root = work / variant / "mem"
            shutil.copytree(pristine, root)
            for src in pristine.glob("*.md"):  # copytree keeps mtimes; be explicit anyway
                shutil.copystat(src, root / src.name)
            cmd = [sys.executable, __file__, "--child", "--variant", variant,
                   "--dir", str(root), "--state", str(work / variant / "state")]  # fmt: skip
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            p, r = score_duplicates(truth, result["groups"])
            c = score_contradictions(truth, result["contradictions"], result["resolved"])
            after = check_after(pristine, root) if variant != "exact-hash" else {}
            rows.append(_row(variant, truth, result, (p, r), c, after))
        header = ["variant", "dup precision", "dup recall", "contra P / R",
                  "explicit resolved / unsafe", "dates fixed", "index lines after",
                  "dead/dup/unindexed/long", "lines lost", "lines only in retired",
                  "time s", "peak RSS MB"]  # fmt: skip
        print(f"messy dir: {truth['memories']} memories, {len(truth['duplicates'])} planted "
              f"duplicates, {len(truth['contradictions'])} contradicting pairs, index "
              f"{truth['index_lines']} lines (seed {args.seed})\n")  # fmt: skip
        print(_table(rows, header))
        print()
        print(_table(gate_timing(work), ["dream gate check", "median µs", "p99 µs"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _row(
    variant: str,
    truth: dict[str, Any],
    result: dict[str, Any],
    dup: tuple[float, float],
    c: dict[str, Any],
    after: dict[str, Any],
) -> list[Any]:
    baseline = variant == "exact-hash"
    index_lines = after.get("index_lines", truth["index_lines"])
    within = "ok" if after.get("index_within_limits") else "over"
    keys = ("dead_links", "duplicate_entries", "unindexed_current", "long_lines")
    return [
        variant,
        f"{dup[0]:.3f}",
        f"{dup[1]:.3f}",
        "-" if baseline else f"{c['precision']:.2f} / {c['recall']:.2f}",
        "-" if baseline else f"{c['resolved_explicit']:.2f} / {c['unsafe_resolutions']}",
        f"{result.get('dates_fixed', '-')}/{len(truth['relative_dates'])}",
        f"{index_lines} ({within})",
        "/".join(str(after.get(k, "-")) for k in keys),
        after.get("lines_lost", "-"),
        after.get("lines_only_in_retired", "-"),
        f"{result['elapsed']:.2f}",
        f"{result['peak_rss_mb']:.0f}",
    ]


def _table(rows: list[list[Any]], header: list[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--variant", choices=VARIANTS)
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--state", type=Path)
    args = parser.parse_args()
    child(args) if args.child else parent(args)


if __name__ == "__main__":
    main()
