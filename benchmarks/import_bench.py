"""``memdir import`` at scale (issue #29, items 1 and 5).

    .venv/bin/python benchmarks/import_bench.py [--observations 5000] [--memories 10000] [--no-docs]

- **claude-mem**: a database built with claude-mem's own schema and migrations
  (``tests/importers/claude_mem_schema.py``, version 49) holding ``--observations`` observations:
  decisions and discoveries, 10% exact and 10% near duplicates of them, 1% holding credentials,
  30% change records (bugfix, feature, ...). ``memdir import claude-mem`` runs as a fresh process;
  then every written memory is checked: pairs that :mod:`memdir.sameness` calls the same
  (duplicates written) and files the credential scanner flags (credentials kept) must both be 0.
- **10,000 searchable**: a mem0 export of ``--memories`` distinct facts; ``memdir import mem0``
  then ``memdir recall`` of one of them, each a fresh process, from no index at all: the time
  until that memory is answered.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

SYLLABLES = "ka lo mi ra ve tu zen dor pal qui sto bar nel fio gra hex jun wir yol cem".split()  # noqa: SIM905
KINDS = ["service", "queue", "dashboard", "cluster", "library", "pipeline", "bucket", "cron job"]
VERBS = ["runs on", "depends on", "is owned by", "must stay behind", "reads from", "writes to"]
PLACES = ["the VPN", "PgBouncer", "the staging network", "the EU region", "a read replica"]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3))


def fact(rng: random.Random, n: int) -> tuple[str, str]:
    """(title, narrative): one distinct fact, rare made-up names carrying its subject."""
    subject, owner = word(rng), word(rng)
    kind = rng.choice(KINDS)
    title = f"The {subject} {kind} {rng.choice(VERBS)} {owner}"
    narrative = (
        f"The {subject} {kind} {rng.choice(VERBS)} {owner} and needs {rng.choice(PLACES)}; "
        f"the {word(rng)} team decided this in review {n} because {word(rng)} kept failing."
    )
    return title, narrative


def build_claude_mem(path: Path, n: int, seed: int = 7) -> dict[str, int]:
    from tests.importers.claude_mem_schema import add_observation, create_db

    rng = random.Random(seed)
    conn = create_db(path)
    kept: list[tuple[str, str]] = []
    plan = {"facts": 0, "exact": 0, "near": 0, "credentials": 0, "changes": 0}
    key = "AKIA" + "IOSFODNN7EXAMPLQ"
    for i in range(n):
        roll = rng.random()
        if roll < 0.3:
            plan["changes"] += 1
            add_observation(
                conn,
                type=rng.choice(["bugfix", "feature", "refactor", "change"]),
                title=f"Fixed {word(rng)}",
                narrative=f"Fixed {word(rng)} in {word(rng)}.py",
            )
        elif roll < 0.31:
            plan["credentials"] += 1
            add_observation(
                conn,
                type="discovery",
                title=f"Deploy key for {word(rng)}",
                narrative=f"The deploy key for {word(rng)} is {key} in staging.",
            )
        elif roll < 0.41 and kept:
            plan["exact"] += 1
            title, narrative = rng.choice(kept)
            add_observation(conn, type="decision", title=title, narrative=narrative)
        elif roll < 0.51 and kept:
            plan["near"] += 1
            title, narrative = rng.choice(kept)
            add_observation(
                conn,
                type="decision",
                title=title,
                narrative=narrative.replace("decided this", "settled this"),
            )
        else:
            plan["facts"] += 1
            title, narrative = fact(rng, i)
            kept.append((title, narrative))
            add_observation(
                conn,
                type=rng.choice(["decision", "discovery"]),
                title=title,
                narrative=narrative,
                facts=[f"{title} (since review {i})"],
            )
    conn.commit()
    conn.close()
    return plan


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def memdir(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run one memdir process: wall seconds, its CPU seconds (user + system), stdout."""
    started, cpu = time.perf_counter(), _children_cpu()
    proc = subprocess.run(
        [sys.executable, "-m", "memdir", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    cpu = _children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"memdir {' '.join(args)} failed: {proc.stderr.strip()}")
    return elapsed, cpu, proc.stdout


def audit(mem: Path) -> dict[str, int]:
    """Duplicates and credentials among the written memories, judged by memdir's own rules."""
    from memdir.frontmatter import parse_memory
    from memdir.sameness import Comparer, make_doc
    from memdir.team.secrets import scan_file

    docs, credentials = [], 0
    for path in sorted(mem.glob("*.md")):
        if path.name == "MEMORY.md":
            continue
        credentials += bool(scan_file(path))
        m = parse_memory(path.read_text("utf-8"), path.name)
        said = m.body.split("\n\n")[0]
        docs.append(make_doc(path.name, "", m.type, said, name=m.name))
    comparer = Comparer(docs)
    same = sum(
        comparer.compare(a, b).verdict in ("exact", "near") for a, b in comparer.candidate_pairs()
    )
    return {"memories": len(docs), "duplicates": same, "credentials": credentials}


def bench_claude_mem(work: Path, n: int, env: dict[str, str]) -> dict[str, Any]:
    db = work / "claude-mem.db"
    plan = build_claude_mem(db, n)
    mem = work / "mem-claude-mem"
    seconds, cpu, out = memdir(["--dir", str(mem), "--json", "import", "claude-mem", str(db)], env)
    counts = json.loads(out)["counts"]
    rerun, rerun_cpu, out2 = memdir(
        ["--dir", str(mem), "--json", "import", "claude-mem", str(db)], env
    )
    return {
        "seconds": seconds,
        "cpu": cpu,
        "rerun_cpu": rerun_cpu,
        "rerun_seconds": rerun,
        "counts": counts,
        "plan": plan,
        "rerun_writes": json.loads(out2)["counts"].get("write", 0),
        **audit(mem),
    }


def bench_searchable(work: Path, n: int, env: dict[str, str], seed: int = 11) -> dict[str, Any]:
    rng = random.Random(seed)
    records = []
    for i in range(n):
        _, narrative = fact(rng, i)
        records.append({"id": f"m-{i}", "memory": narrative, "created_at": "2026-11-01T10:00:00Z"})
    export = work / "mem0.json"
    export.write_text(json.dumps({"results": records}))
    target = records[n // 2]["memory"]
    query = " ".join(target.split()[:8])
    mem = work / "mem-mem0"
    import_s, import_cpu, out = memdir(
        ["--dir", str(mem), "--json", "import", "mem0", str(export)], env
    )
    written = json.loads(out)["counts"].get("write", 0)
    recall_s, recall_cpu, out = memdir(["--dir", str(mem), "--json", "recall", query], env)
    found = target.split()[1] in out
    return {
        "import_seconds": import_s,
        "import_cpu": import_cpu,
        "recall_cpu": recall_cpu,
        "recall_seconds": recall_s,
        "written": written,
        "total": import_s + recall_s,
        "found": found,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--observations", type=int, default=5000)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    from common import machine, table, update_docs_section

    with tempfile.TemporaryDirectory(prefix="memdir-import-bench-") as tmp:
        work = Path(tmp)
        env = {
            **os.environ,
            "HOME": str(work / "home"),
            "MEMDIR_HOME": str(work / "home" / ".memdir"),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        }
        cm = bench_claude_mem(work, args.observations, env)
        big = bench_searchable(work, args.memories, env)
    c = cm["counts"]

    def cpu(seconds: float) -> str:
        return f"{seconds:.1f} s"

    rows = [
        [
            f"claude-mem import, {args.observations:,} observations",
            f"{cm['seconds']:.1f} s",
            cpu(cm["cpu"]),
            "≤ 30 s",
            f"{c.get('write', 0):,} written, {c.get('merge', 0):,} duplicates merged, "
            f"{c.get('skipped_rules', 0):,} not kept by the rules, "
            f"{c.get('skipped_credential', 0):,} credentials refused",
        ],
        ["  duplicates written (sameness over the result)", str(cm["duplicates"]), "", "0", ""],
        [
            "  credentials kept (secret scanner over the result)",
            str(cm["credentials"]),
            "",
            "0",
            "",
        ],
        [
            "  re-run",
            f"{cm['rerun_seconds']:.1f} s",
            cpu(cm["rerun_cpu"]),
            "",
            f"{cm['rerun_writes']} written",
        ],
        [
            f"{args.memories:,} memories searchable: import",
            f"{big['import_seconds']:.1f} s",
            cpu(big["import_cpu"]),
            "",
            f"{big['written']:,} written",
        ],
        [
            "  first recall (index built from nothing)",
            f"{big['recall_seconds']:.1f} s",
            cpu(big["recall_cpu"]),
            "",
            "answered" if big["found"] else "NOT FOUND",
        ],
        [
            "  end to end",
            f"{big['total']:.1f} s",
            cpu(big["import_cpu"] + big["recall_cpu"]),
            "≤ 60 s",
            "",
        ],
    ]
    load = os.getloadavg()[0]
    text = table(rows, ["step", "wall", "CPU", "target", "detail"])
    print(text)
    plan = cm["plan"]
    if not args.no_docs:
        update_docs_section(
            "import",
            f"Command: `.venv/bin/python benchmarks/import_bench.py`  \nMachine: {machine()}. "
            f"Each step a fresh `memdir` process. The claude-mem database was built with its own "
            f"schema (version 49): {plan['facts']:,} distinct facts, {plan['exact']:,} exact and "
            f"{plan['near']:,} reworded copies of them, {plan['credentials']:,} holding an AWS "
            "key, "
            f"{plan['changes']:,} change records. Load average at the end: {load:.1f} (wall "
            f"times on a shared machine; CPU is the memdir processes' own user + system time)."
            f"\n\n{text}\n",
            title="Import",
        )
    return 0 if cm["duplicates"] == 0 and cm["credentials"] == 0 and big["found"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
