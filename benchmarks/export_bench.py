"""``memdir export`` → restore at 10,000 memories: time, bundle size, and byte identity.

    .venv/bin/python benchmarks/export_bench.py [--memories 10000] [--runs 3]

Writes N synthetic memories (``benchmarks/scale.py``'s generator: Zipf-sampled words, folders of
1,000) plus a MEMORY.md, then times, median of ``--runs``: the export (read, hash, tar, gzip,
one atomic write), the verification alone (``read_bundle``: every check a restore makes before
writing), a restore into an empty dir (each file one atomic write with fsync), and a second
restore over the result (everything skipped). Every run checks that the restored dir is byte for
byte the original and that a second export is the same bytes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, table, update_docs_section
from memdir.bundle import export_bundle, read_bundle, restore_bundle
from scale import generate

NOW = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.md") if p.is_file()
    }


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def one_run(mem: Path, work: Path, original: dict[str, bytes]) -> dict[str, float]:
    """Seconds per step; asserts the restore is byte for byte and the re-export identical."""
    bundle, again, fresh = work / "b.tar.gz", work / "c.tar.gz", work / "fresh"
    out = {
        "export": _timed(lambda: export_bundle(mem, bundle, now=NOW)),
        "verify": _timed(lambda: read_bundle(bundle)),
        "restore": _timed(lambda: restore_bundle(bundle, fresh, False)),
    }
    started = time.perf_counter()
    rerun = restore_bundle(bundle, fresh, False)
    out["rerun"] = time.perf_counter() - started
    assert rerun.written == () and len(rerun.skipped) == len(original)
    assert _files(fresh) == original, "restored dir differs"
    export_bundle(fresh, again, now=NOW)
    assert again.read_bytes() == bundle.read_bytes(), "second export differs"
    shutil.rmtree(fresh)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    args = parser.parse_args(argv)
    n = args.memories
    times: dict[str, list[float]] = {"export": [], "verify": [], "restore": [], "rerun": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        mem = work / "mem"
        generate(mem, n)
        (mem / "MEMORY.md").write_text(
            "".join(f"- [m{i:06d}](d{i // 1000:03d}/m{i:06d}.md) — memory {i}\n" for i in range(n))
        )
        original = _files(mem)
        payload = sum(len(v) for v in original.values())
        size = 0
        for run in range(args.runs):
            for step, seconds in one_run(mem, work / f"run{run}", original).items():
                times[step].append(seconds)
            size = (work / f"run{run}" / "b.tar.gz").stat().st_size
    rows = [
        [
            f"{n:,}",
            step,
            round(statistics.median(values), 2),
            round(n / statistics.median(values)),
        ]
        for step, values in (
            ("export (read, hash, tar.gz, atomic write)", times["export"]),
            ("verify only (every pre-write check)", times["verify"]),
            ("restore into an empty dir", times["restore"]),
            ("restore again (all skipped)", times["rerun"]),
        )
    ]
    result = table(rows, ["files", "step", "median s", "files/s"])
    note = (
        f"{n:,} memories + MEMORY.md ({payload / 1e6:.1f} MB of Markdown) → a {size / 1e6:.2f} MB "
        f"bundle ({size / payload:.0%}); median of {args.runs} runs; every run restores byte for "
        f"byte and re-exports to the same bytes. {machine()}; load average at the end "
        f"{os.getloadavg()[0]:.1f}. "
        f"Command: `.venv/bin/python benchmarks/export_bench.py --memories {n}`"
    )
    print(note)
    print(result)
    if not args.no_docs:
        update_docs_section("export", f"{note}\n\n{result}", title="Export and restore (issue #29)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
