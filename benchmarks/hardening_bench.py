"""Cost of the hardening (issue #8): bounded frontmatter, hostile files in a scan, write intent.

Run: ``nice .venv/bin/python -m benchmarks.hardening_bench [--memories 2000]``

Each table compares against a baseline measured in the same run:
1. header parse: memdir's bounded parse vs PyYAML's C loader alone on the same header (the
   baseline cannot parse the alias bomb at all: it expands 10^10 nodes);
2. a cold scan of N memories with and without 200 hostile files (links out of the dir, alias
   bombs, binaries, colon descriptions);
3. a store write (create + MEMORY.md line, fsynced) with and without the crash-intent marker;
4. a store write in a dir of N memories with and without the stale-temp sweep that now runs on
   every locked write (issue #22.9);
5. a recall index build over a dir holding one huge memory and one 5 MB single line, with the
   bounded read (issue #18.9) and with the whole file read as before.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import yaml
from benchmarks.common import machine, memory_text, percentile, table

from memdir import frontmatter, recovery
from memdir.recall import memory_text as recall_text
from memdir.recall.embed import HashingEmbedder
from memdir.recall.search_index import SearchIndex
from memdir.scan import scan_headers
from memdir.store import MemoryStore

NORMAL = "---\nname: Deploy freeze\ndescription: no merges on Fridays\ntype: project\n---\nb\n"
COLON = "---\nname: Goal\ndescription: Q2 goal: ship the billing API\ntype: project\n---\nb\n"
BOMB = (
    "---\na0: &a0 [x,x,x,x,x,x,x,x,x,x]\n"
    + "".join(f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10))
    + "---\nbody\n"
)


def per_call_us(fn: Callable[[], object], repeat: int = 2000) -> float:
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeat):
            fn()
        samples.append((time.perf_counter() - started) / repeat * 1e6)
    return statistics.median(samples)


def parse_table() -> str:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    block = NORMAL.split("---\n")[1]
    rows = [
        [
            "normal header",
            per_call_us(lambda: frontmatter.parse(NORMAL, lenient=True)),
            per_call_us(lambda: yaml.load(block, Loader=loader)),
        ],
        [
            "`description: Q2 goal: …` (quoted retry)",
            per_call_us(lambda: frontmatter.parse(COLON, lenient=True)),
            "fails",
        ],
        [
            "alias bomb, 10 levels × 10",
            per_call_us(lambda: frontmatter.parse(BOMB, lenient=True)),
            "> 4 GB / hangs",
        ],
    ]
    return table(rows, ["header", "memdir bounded parse (µs)", "PyYAML C loader alone (µs)"])


def build(root: Path, n: int, hostile: bool) -> None:
    root.mkdir(parents=True)
    for i in range(n):
        (root / f"m{i:05d}.md").write_text(memory_text(f"m{i}", f"memory number {i}", "body\n"))
    if not hostile:
        return
    outside = root.parent / "outside.md"
    outside.write_text("---\ndescription: secret\n---\n")
    for i in range(50):
        (root / f"link{i}.md").symlink_to(outside)
        (root / f"bomb{i}.md").write_text(BOMB)
        (root / f"bin{i}.md").write_bytes(b"\x00\xff" * 512)
        (root / f"colon{i}.md").write_text(COLON)


def scan_table(n: int) -> str:
    """Both dirs measured alternately, so load on a shared machine hits both alike."""
    with tempfile.TemporaryDirectory() as tmp:
        roots = {False: Path(tmp) / "clean", True: Path(tmp) / "hostile"}
        for hostile, root in roots.items():
            build(root, n, hostile)
        times: dict[bool, list[float]] = {False: [], True: []}
        results = {}
        for _ in range(7):
            for hostile, root in roots.items():
                started = time.perf_counter()
                results[hostile] = scan_headers(root, limit=None)
                times[hostile].append(time.perf_counter() - started)
    rows = [
        [
            f"{n:,} memories" + (" + 200 hostile files" if hostile else " (baseline)"),
            statistics.median(times[hostile]) * 1000,
            results[hostile].total,
            len(results[hostile].errors),
            len(results[hostile].notes),
        ]
        for hostile in (False, True)
    ]
    return table(rows, ["dir", "cold scan, median of 7 (ms)", "headers", "errors", "notes"])


class _NoIntent(recovery.WriteIntent):
    """The store as before this work: no crash-intent marker around a write."""

    @contextlib.contextmanager
    def covering(self, rels: Sequence[str], repair: Callable[[list[str]], None]) -> Iterator[None]:
        yield


def write_table(writes: int) -> str:
    """Writes alternate between a store with and one without the marker."""
    import memdir.store as store_module

    times: dict[str, list[float]] = {"without the marker (before)": [], "with the marker": []}
    with tempfile.TemporaryDirectory() as tmp:
        stores = {label: MemoryStore(Path(tmp) / str(i)) for i, label in enumerate(times)}
        for i in range(writes):
            for label, store in stores.items():
                store_module.WriteIntent = _NoIntent if "without" in label else recovery.WriteIntent  # type: ignore[misc]
                started = time.perf_counter()
                store.create(f"note {i % 50}", f"write {i}", "user", "body\n", overwrite=True)
                times[label].append(time.perf_counter() - started)
    store_module.WriteIntent = recovery.WriteIntent  # type: ignore[misc]
    rows = [
        [label, statistics.median(t) * 1000, percentile(t, 95) * 1000] for label, t in times.items()
    ]
    return table(rows, ["store.create, fsynced", "median (ms)", "p95 (ms)"])


def sweep_table(n: int, writes: int) -> str:
    """Writes alternate between two dirs of ``n`` memories, one with the sweep switched off."""
    real = recovery.remove_stale_temp_files
    labels = ("without the sweep (before)", "with the stale-temp sweep")
    times: dict[str, list[float]] = {label: [] for label in labels}
    with tempfile.TemporaryDirectory() as tmp:
        stores = {}
        for i, label in enumerate(labels):
            build(Path(tmp) / str(i), n, hostile=False)
            stores[label] = MemoryStore(Path(tmp) / str(i))
        for i in range(writes):
            for label, store in stores.items():
                sweep = real if "with the" in label else (lambda root, **kw: [])
                recovery.remove_stale_temp_files = sweep  # type: ignore[assignment]
                started = time.perf_counter()
                store.create(f"note {i % 50}", f"write {i}", "user", "body\n", overwrite=True)
                times[label].append(time.perf_counter() - started)
    recovery.remove_stale_temp_files = real
    rows = [
        [label, statistics.median(t) * 1000, percentile(t, 95) * 1000] for label, t in times.items()
    ]
    return table(rows, [f"store.create in {n:,} memories", "median (ms)", "p95 (ms)"])


def recall_read_table(huge_mb: int) -> str:
    """One index build each way over the same hostile dir (hashing embedder: no model cost)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        build(root, 200, hostile=False)
        words = "roadmap hiring budget deploy " * (huge_mb * 1024 * 1024 // 29)
        (root / "huge.md").write_text(memory_text("huge", "a huge memory", words))
        (root / "line.md").write_text(memory_text("line", "one line", "y" * 5_000_000))
        bounded = recall_text.RECALL_READ_BYTES
        for label, limit in (("whole file (before)", -1), ("bounded prefix", bounded)):
            recall_text.RECALL_READ_BYTES = limit
            index = SearchIndex(root, Path(tmp) / label, HashingEmbedder())
            started = time.perf_counter()
            index.refresh()
            seconds = time.perf_counter() - started
            passages = sum(d.passages for d in index.docs)
            rows.append([label, seconds, passages, len(index.docs)])
        recall_text.RECALL_READ_BYTES = bounded
    return table(
        rows,
        [f"index build, 200 memories + {huge_mb} MB + 5 MB line", "seconds", "passages", "docs"],
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--huge-mb", type=int, default=20)
    parser.add_argument("--only", choices=["sweep", "recall"], help="run just one new table")
    args = parser.parse_args()
    print(machine(), end="\n\n")
    if args.only is None:
        print(parse_table(), end="\n\n")
        print(scan_table(args.memories), end="\n\n")
        print(write_table(args.writes), end="\n\n")
    if args.only in (None, "sweep"):
        print(sweep_table(args.memories, args.writes // 3), end="\n\n")
    if args.only in (None, "recall"):
        print(recall_read_table(args.huge_mb))


if __name__ == "__main__":
    main()
