"""Cost of the hardening (issue #8): bounded frontmatter, hostile files in a scan, write intent.

Run: ``nice .venv/bin/python -m benchmarks.hardening_bench [--memories 2000]``

Each table compares against a baseline measured in the same run:
1. header parse: memdir's bounded parse vs PyYAML's C loader alone on the same header (the
   baseline cannot parse the alias bomb at all: it expands 10^10 nodes);
2. a cold scan of N memories with and without 200 hostile files (links out of the dir, alias
   bombs, binaries, colon descriptions);
3. a store write (create + MEMORY.md line, fsynced) with and without the crash-intent marker.
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--writes", type=int, default=300)
    args = parser.parse_args()
    print(machine(), end="\n\n")
    print(parse_table(), end="\n\n")
    print(scan_table(args.memories), end="\n\n")
    print(write_table(args.writes))


if __name__ == "__main__":
    main()
