"""Team sync: time and bytes per sync, and how the server holds up under contention.

``.venv/bin/python benchmarks/sync_bench.py [--quick]``

1. One repository of 1,000 memories (~1 KB each): first push, first pull into an empty dir, a
   no-op sync (pull + push with nothing changed), a 10-file change pushed and pulled. Time and
   HTTP body bytes as counted by the client.
2. N concurrent clients pushing to ONE repository (each round: its own new file plus one shared
   file), on SQLite and on PostgreSQL. Every accepted PUT is recorded with its version; at the end
   the server must hold exactly what replaying the accepted PUTs in version order gives, and its
   version must equal the number of accepted PUTs — otherwise an update was lost.

Real parts throughout: a uvicorn server process, HTTP on 127.0.0.1, a private PostgreSQL cluster.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # tests.team.services: the server and PostgreSQL launchers

from benchmarks.common import machine, memory_text, table, update_docs_section  # noqa: E402
from tests.team.services import PgCluster, ServerProcess  # noqa: E402

from memdir.errors import SyncConflictError  # noqa: E402
from memdir.team import auth  # noqa: E402
from memdir.team.client import TeamSyncClient  # noqa: E402
from memdir.team.client_state import state_path  # noqa: E402
from memdir.team.storage import TeamStorage  # noqa: E402
from memdir.team.wire import API_PATH  # noqa: E402

REPO = "bench/memories"


async def make_token(db_url: str, repo: str) -> str:
    storage = await TeamStorage.open(db_url)
    try:
        token, _ = await auth.create_token(storage, [repo])
    finally:
        await storage.close()
    return token


def client_for(
    server: ServerProcess, token: str, root: Path, name: str, **kw: Any
) -> TeamSyncClient:
    team = root / name / "team"
    team.mkdir(parents=True, exist_ok=True)
    return TeamSyncClient(
        url=server.url,
        token=token,
        repo=kw.pop("repo", REPO),
        team_dir=team,
        state_path=state_path(root / name / "cache", server.url, REPO, team),
        **kw,
    )


def write_memories(team: Path, count: int, start: int = 0, tag: str = "v1") -> None:
    for i in range(start, start + count):
        body = f"Fact {i} ({tag}): " + "the deploy pipeline needs the staging gate. " * 18
        text = memory_text(f"memory {i}", f"what memory {i} says", body)
        (team / f"topic-{i % 20:02}").mkdir(exist_ok=True)
        (team / f"topic-{i % 20:02}" / f"m{i:04}.md").write_text(text, encoding="utf-8")


async def measured(client: TeamSyncClient, step: Any) -> tuple[float, int, int, int]:
    before = (client.stats.requests, client.stats.bytes_sent, client.stats.bytes_received)
    start = time.perf_counter()
    await step()
    ms = (time.perf_counter() - start) * 1000
    s = client.stats
    return ms, s.requests - before[0], s.bytes_sent - before[1], s.bytes_received - before[2]


async def sync_scenario(server: ServerProcess, root: Path, n: int) -> list[list[object]]:
    token = await make_token(server.db_url, REPO)
    rows: list[list[object]] = []
    async with client_for(server, token, root, "a") as a, client_for(server, token, root, "b") as b:
        write_memories(a.team_dir, n)

        async def sync_a() -> None:
            await a.pull()
            await a.push()

        steps = [
            (f"first push ({n:,} files)", a, a.push),
            (f"first pull ({n:,} files, empty dir)", b, b.pull),
            ("no-op sync (pull 304 + push)", a, sync_a),
        ]
        for label, client, step in steps:
            rows.append([label, *await measured(client, step)])
        write_memories(a.team_dir, 10, start=0, tag="v2")
        rows.append(["10-file change: push", *await measured(a, a.push)])
        rows.append(["10-file change: pull", *await measured(b, b.pull)])
    return rows


class Ledger:
    def __init__(self) -> None:
        self.accepted: list[tuple[int, dict[str, str]]] = []
        self.conflicts = 0

    async def on_response(self, response: httpx.Response) -> None:
        if response.request.method != "PUT":
            return
        if response.status_code == 412:
            self.conflicts += 1
        elif response.status_code == 200:
            await response.aread()
            entries = json.loads(response.request.content)["entries"]
            self.accepted.append((response.json()["version"], entries))

    def replay(self) -> dict[str, str]:
        final: dict[str, str] = {}
        for _, entries in sorted(self.accepted, key=lambda item: item[0]):
            final.update(entries)
        return final


async def contention(server: ServerProcess, root: Path, clients: int, rounds: int) -> list[object]:
    repo = f"bench/contention-{clients}"
    token = await make_token(server.db_url, repo)
    ledger = Ledger()
    https = [
        httpx.AsyncClient(event_hooks={"response": [ledger.on_response]}) for _ in range(clients)
    ]
    sync_clients = [
        client_for(server, token, root / repo, f"c{i}", repo=repo, http=h)
        for i, h in enumerate(https)
    ]
    gave_up = 0

    async def worker(i: int, client: TeamSyncClient) -> None:
        nonlocal gave_up
        for r in range(rounds):
            (client.team_dir / f"c{i}-{r}.md").write_text(f"client {i} round {r}\n")
            (client.team_dir / "shared.md").write_text(f"last written by {i} in {r}\n")
            try:
                await client.push()
            except SyncConflictError:
                gave_up += 1  # retried by the next round's push, as the watcher would

    start = time.perf_counter()
    await asyncio.gather(*(worker(i, c) for i, c in enumerate(sync_clients)))
    seconds = time.perf_counter() - start
    for h in https:
        await h.aclose()
    storage = await TeamStorage.open(server.db_url)
    try:
        state = await storage.get(repo)
    finally:
        await storage.close()
    assert state is not None and state.entries is not None
    lost = int(state.version != len(ledger.accepted)) + sum(
        1 for k, v in ledger.replay().items() if state.entries.get(k) != v
    )
    return [clients, len(ledger.accepted), round(seconds, 2), len(ledger.accepted) / seconds,
            ledger.conflicts, gave_up, lost]  # fmt: skip


async def raw_throughput(server: ServerProcess, clients: int, puts: int) -> list[object]:
    """Unconditional one-entry PUTs from N concurrent connections: the server's write rate."""
    repo = f"bench/raw-{clients}"
    token = await make_token(server.db_url, repo)
    headers = {"Authorization": f"Bearer {token}"}

    async def worker(i: int) -> int:
        ok = 0
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:
            for j in range(puts):
                response = await http.put(
                    server.url + API_PATH,
                    params={"repo": repo},
                    json={"entries": {f"w{i}/{j}.md": f"write {j}", "hot.md": f"{i}:{j}"}},
                )
                ok += response.status_code == 200
        return ok

    start = time.perf_counter()
    accepted = sum(await asyncio.gather(*(worker(i) for i in range(clients))))
    seconds = time.perf_counter() - start
    storage = await TeamStorage.open(server.db_url)
    try:
        state = await storage.get(repo, with_content=False)
    finally:
        await storage.close()
    assert state is not None
    missing = sum(
        1
        for i in range(clients)
        for j in range(puts)
        if f"w{i}/{j}.md" not in state.entry_checksums
    )
    lost = missing + abs(state.version - accepted)
    return [clients, accepted, round(seconds, 2), accepted / seconds, lost]


def run(quick: bool) -> str:
    n = 200 if quick else 1000
    rounds = 5 if quick else 15
    counts = (1, 4) if quick else (1, 4, 8)
    root = Path(tempfile.mkdtemp(prefix="memdir-sync-bench-"))
    cluster = PgCluster().start()
    sections = []
    try:
        backends = {
            "SQLite": f"sqlite+aiosqlite:///{root / 'server.db'}",
            "PostgreSQL": cluster.create_database(),
        }
        sync_rows: list[list[object]] = []
        load_rows: list[list[object]] = []
        raw_rows: list[list[object]] = []
        for name, url in backends.items():
            server = ServerProcess(url, max_entries=5000).start()
            try:
                for row in asyncio.run(sync_scenario(server, root / name, n)):
                    sync_rows.append([name, *row])
                for count in counts:
                    load_rows.append(
                        [name, *asyncio.run(contention(server, root / name, count, rounds))]
                    )
                    raw_rows.append([name, *asyncio.run(raw_throughput(server, count, 30))])
            finally:
                server.stop()
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    sections.append(
        table(sync_rows, ["backend", "step", "ms", "requests", "bytes sent", "bytes received"])
    )
    sections.append(
        table(
            load_rows,
            [
                "backend",
                "clients",
                "accepted PUTs",
                "s",
                "PUTs/s",
                "412s",
                "gave up",
                "lost updates",
            ],
        )
    )
    sections.append(
        table(raw_rows, ["backend", "clients", "accepted PUTs", "s", "PUTs/s", "lost updates"])
    )
    return "\n\n".join(sections)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = parser.parse_args()
    result = run(args.quick)
    print(result)
    if args.no_docs or args.quick:
        return
    sync_table, load_table, raw_table = result.split("\n\n")
    update_docs_section(
        "team-sync",
        f"""Command: `.venv/bin/python benchmarks/sync_bench.py`
Machine: {machine()}. Server: one uvicorn process (`python -m memdir.team.server`) on 127.0.0.1;
client: `memdir.team.client.TeamSyncClient` in the benchmark process. Bytes are HTTP bodies as the
client counts them (headers excluded). Memories are ~1 KB Markdown files with frontmatter.

{sync_table}

The no-op sync costs one conditional GET answered `304 Not Modified` (no body) and no PUT: the
push compares SHA-256 checksums locally. A push sends only changed files. The protocol has no
per-file download, so a pull after any change fetches the whole repository (here ~1 MB) and
rewrites only the files whose content differs.

Contention: N clients push to one repository at once, 15 rounds each (a new file of their own
plus one shared file per round). Every PUT carries `If-Match`; a stale one gets 412, the client
pauses a random moment, refetches checksums (`view=hashes`) and retries (at most 2 times per push;
"gave up" counts pushes that exhausted them — their files go out with the next push).
"lost updates" replays the accepted PUTs in version order and compares with the server's final
state, plus a check that the version counter equals the number of accepted PUTs: it must be 0.

{load_table}

Raw server write rate: N connections each send 30 unconditional PUTs (one entry of their own
plus one shared "hot" entry, no `If-Match`), so every PUT is accepted; each is one transaction
under the repository lock (`BEGIN IMMEDIATE` on SQLite, `SELECT … FOR UPDATE` on PostgreSQL).
"lost updates" counts missing entries plus any gap between the version and the accepted PUTs.

{raw_table}
""",
        title="Team sync",
    )


if __name__ == "__main__":
    main()
