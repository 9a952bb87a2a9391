"""``memdir ui`` at scale: server time of the pages over N memories (default 10,000).

    .venv/bin/python benchmarks/ui_bench.py [--memories 10000] [--repeat 30]

Writes N synthetic memories (the same generator as ``benchmarks/scale.py``: Zipf-sampled English
words, in folders of 1,000), builds the app in-process and times each request through
Starlette's TestClient (server time: routing, the guard, the library call, the template; no
browser, no socket). The baseline in the same run is the library call the Memories page is
built on — ``MemoryStore.scan`` from the header cache, which ``memdir list`` also makes — so
the table shows what the page adds on top. Recall's index embeds documents with the 384-d
hashing stand-in of ``scale.py`` (queries through real MiniLM) to keep two shared cores usable.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from starlette.testclient import TestClient
from tests.ui.conftest import TOKEN, Ui

from common import machine, percentile, table, update_docs_section
from memdir.recall.local import LocalSelector
from memdir.ui.app import create_app
from scale import QueryMiniLMEmbedder, generate

BUDGET_MS = 200.0


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    fn()  # warm
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ui = Ui(Path(tmp))
        descriptions = generate(ui.mem, args.memories)
        selector = LocalSelector(ui.mem, ui.ctx.cache_dir, embedder=QueryMiniLMEmbedder())
        started = time.perf_counter()
        selector.refresh()
        print(f"recall index over {args.memories:,}: {time.perf_counter() - started:.1f} s")
        ui.ctx._selector = selector
        client = TestClient(create_app(ui.ctx, host="127.0.0.1", port=8765))
        client.base_url = "http://127.0.0.1:8765"  # type: ignore[assignment]
        assert client.get(f"/?token={TOKEN}").status_code == 200
        word = descriptions[0].split()[0]
        query = " ".join(descriptions[1].split()[:6])
        store = ui.store

        def get(url: str) -> Callable[[], object]:
            def run() -> object:
                response = client.get(url)
                assert response.status_code == 200, (url, response.status_code)
                return response

            return run

        cases = [
            ("baseline: store.scan (what `memdir list` reads)", lambda: store.scan(limit=None)),
            ("Memories, first page (newest)", get("/memories")),
            (f"Memories, text filter ({word!r})", get(f"/memories?q={word}")),
            ("Memories, sorted by name, page 50", get("/memories?sort=name&page=50")),
            ("one memory", get("/memory/d003/m003456.md")),
            ("Why it surfaced (explain, warm)", get(f"/recall?q={query}")),
            ("live poll (/api/version)", get("/api/version")),
        ]
        rows = []
        for label, fn in cases:
            ms = timed(fn, args.repeat)
            p50, p95 = percentile(ms, 50), percentile(ms, 95)
            ok = "" if label.startswith("baseline") else ("yes" if p95 <= BUDGET_MS else "NO")
            rows.append([label, f"{p50:.1f}", f"{p95:.1f}", ok])
    header = ["request", "p50 ms", "p95 ms", f"p95 ≤ {BUDGET_MS:.0f} ms"]
    out = table(rows, header)
    print(out)
    if not args.no_docs:
        command = f"`.venv/bin/python benchmarks/ui_bench.py --memories {args.memories}`"
        text = (
            f"{args.memories:,} memories, {args.repeat} requests each after one warm-up, "
            f"server time through Starlette's TestClient. {machine()}. Command: {command}\n\n" + out
        )
        update_docs_section("ui", text, title="memdir ui at 10,000 memories")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
