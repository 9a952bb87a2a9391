"""Regression: concurrent writers (threads and processes) never lose an update."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from memdir import index_sections
from memdir.store import MemoryStore

WORKER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memdir.store import MemoryStore

    root, worker, writes = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    store = MemoryStore(root, lock_timeout=120)
    for i in range(writes):
        if i % 4 == 0:
            store.create(f"w{worker} item {i}", f"own memory {i} of {worker}", "project", "x")
        else:
            def add(m, token=f"w{worker}-{i}"):
                m.body += token + "\\n"
                return m
            store.update(f"shared_{i % 5}.md", add)
    """
)


def test_four_processes_times_200_writes_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    store = MemoryStore(root)
    for k in range(5):
        store.create(f"shared {k}", f"shared memory {k}", "project", "")
    workers, writes = 4, 200
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(root), str(w), str(writes)])
        for w in range(workers)
    ]
    for p in procs:
        assert p.wait(timeout=300) == 0

    tokens: set[str] = set()
    for k in range(5):
        tokens.update(store.read(f"shared_{k}.md").body.split())
    expected = {f"w{w}-{i}" for w in range(workers) for i in range(writes) if i % 4}
    assert tokens == expected

    headers = store.list()
    assert len(headers) == 5 + workers * writes // 4
    links = index_sections.entries(root)  # MEMORY.md's and its sections' (205 > 150)
    assert sorted(links) == sorted(h.filename for h in headers)
    [report] = store.check_index()
    assert (report.dead_links, report.unindexed, report.duplicates) == ([], [], [])
    assert report.over_limit is None  # 205 memories, an index within its limits


def test_threads_updating_one_memory(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    store.create("counter", "d", "project", "")

    def work(n: int) -> None:
        for i in range(50):

            def add(m, token=f"t{n}-{i}"):  # type: ignore[no-untyped-def]
                m.body += token + "\n"
                return m

            store.update("counter.md", add)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.read("counter.md").body.split()) == 200
