"""An index that keeps up (issue #29, item 4): build rate, 10,000 memories, first recall, big files.

    .venv/bin/python benchmarks/index_build.py [--memories 1000] [--large 10000] [--no-docs]

Every row runs in child processes, "before" against the source tree of ``--before-commit``
(extracted with ``git archive``) and "after" against this tree, in the same run:

- **build rate**: ``--memories`` memories of 40–110 words cut from LoCoMo's dialogue text (real
  English, not sampled words), indexed from an empty cache by ``SearchIndex.refresh`` with the
  packaged MiniLM; model load (and, after, the static table's load) timed apart. After, the
  refresh is the first stage (searchable); the model's reading of every memory
  (``SearchIndex.fill``) is timed apart too.
- **end to end**: ``--large`` memories, a fresh process from import to the first answered
  ``select_sync`` through ``factory.local_selector`` (what every surface builds). Before is
  extrapolated from its measured rate (its build alone would take minutes).
- **odd dir**: 241 files like the issue's (small memories, files without or with broken
  frontmatter, empty ones, and five 2–6 MB memories), ``memdir mcp`` as a stdio child driven by
  the ``mcp`` client; the first ``memory_recall`` timed from the call (server already started).
  After, with the static table already distilled in this home and with a fresh home.
- **big memory**: passages embedded by the model for one 64 KiB memory against a short one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEFORE_COMMIT = "3a06abb"
LOCOMO = Path("/work/shared/bench/locomo/locomo10.json")


def locomo_words() -> list[str]:
    words: list[str] = []
    for conv in json.loads(LOCOMO.read_text(encoding="utf-8")):
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    words.extend(turn["text"].split())
    return words


def generate(root: Path, n: int, seed: int = 1) -> None:
    """``n`` memories of 40–110 words (5-word name, 15-word description, the rest body)."""
    sys.path.insert(0, str(HERE))
    from common import memory_text

    if root.is_dir() and len(list(root.glob("*.md"))) == n:
        return
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    words, rng, pos = locomo_words(), random.Random(seed), 0
    for i in range(n):
        k = rng.randint(40, 110)
        if pos + k > len(words):
            pos = 0
        chunk, pos = words[pos : pos + k], pos + k
        text = memory_text(" ".join(chunk[:5]), " ".join(chunk[5:20]), " ".join(chunk[20:]))
        sub = root / f"d{i // 1000:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"m{i:05d}.md").write_text(text, encoding="utf-8")


def odd_dir(root: Path) -> None:
    """241 files: 200 small memories, 36 odd ones, five multi-MB memories."""
    if root.is_dir():
        return
    generate(root / "notes", 200, seed=3)
    rng = random.Random(4)
    words = locomo_words()
    for i in range(12):  # no frontmatter at all
        (root / f"plain-{i}.md").write_text(" ".join(rng.choices(words, k=80)), encoding="utf-8")
    for i in range(12):  # broken frontmatter
        body = " ".join(rng.choices(words, k=60))
        (root / f"broken-{i}.md").write_text(f"---\nname: [oops\n---\n{body}\n", encoding="utf-8")
    for i in range(12):  # empty
        (root / f"empty-{i}.md").write_text("", encoding="utf-8")
    for i, mb in enumerate((2, 3, 4, 5, 6)):  # pasted logs and transcripts
        size, parts, length = mb * 1024 * 1024, [], 0
        while length < size:
            parts.append(" ".join(rng.choices(words, k=200)))
            length += len(parts[-1]) + 1
        head = f"---\nname: pasted log {i}\ndescription: a large pasted log\ntype: reference\n---\n"
        (root / f"large-{i}.md").write_text(head + "\n".join(parts), encoding="utf-8")


# -- children ----------------------------------------------------------------------------------
def child_rate(work: Path, n: int, tag: str) -> dict[str, Any]:
    from memdir.recall.embed import MiniLMEmbedder
    from memdir.recall.search_index import SearchIndex

    out: dict[str, Any] = {}
    root, cache = work / f"rate-{n}", work / f"rate-cache-{tag}"
    shutil.rmtree(cache, ignore_errors=True)
    started = time.perf_counter()
    model = MiniLMEmbedder()
    model.embed(["warm up"])
    out["model_load_s"] = time.perf_counter() - started
    fast = None
    try:
        from memdir.recall.static_embed import StaticEmbedder
    except ImportError:  # before: one stage
        index = SearchIndex(root, cache, model)
    else:
        fast = StaticEmbedder(model, work / "models")
        started = time.perf_counter()
        fast.build()  # distilled once per home; loaded here when it already exists
        fast.embed(["warm up"])
        out["table_s"] = time.perf_counter() - started
        index = SearchIndex(root, cache, model, fast=fast)
    started = time.perf_counter()
    index.refresh()
    out["build_s"] = time.perf_counter() - started
    out["rate"] = len(index.live_rows()) / out["build_s"]
    if fast is not None:
        started = time.perf_counter()
        passages = index.fill()
        out["fill_s"] = time.perf_counter() - started
        out["fill_rate"] = len(index.live_rows()) / out["fill_s"]
        out["fill_passages"] = passages
    shutil.rmtree(cache, ignore_errors=True)
    return out


def child_e2e(work: Path, n: int, tag: str) -> dict[str, Any]:
    started = time.perf_counter()
    from memdir.recall.factory import local_selector

    root, cache = work / f"large-{n}", work / f"e2e-cache-{tag}" / "c"
    shutil.rmtree(cache.parent, ignore_errors=True)
    (cache.parent / "models").mkdir(parents=True)
    table = work / "models"  # the home's distilled table, as after the first use
    for path in table.glob("static-*.npy"):
        os.link(path, cache.parent / "models" / path.name)
    selector = local_selector(root, cache, background=False)
    picks = selector.select_sync("what did Caroline say about the charity race?", None)
    out: dict[str, Any] = {"e2e_s": time.perf_counter() - started, "picks": len(picks)}
    status = getattr(selector, "status", None)
    if status is not None:
        s = status()
        out["by_model"], out["memories"] = s.by_model, s.memories
    shutil.rmtree(cache.parent, ignore_errors=True)
    return out


def child_big(work: Path) -> dict[str, Any]:
    from memdir.recall.memory_text import MemoryText

    body = " ".join(locomo_words())[: 64 * 1024]
    short = MemoryText("a short memory", "one line", " ".join(body.split()[:80]))
    big = MemoryText("a pasted log", "64 KiB of dialogue", body)
    return {"big": len(big.passages()), "short": len(short.passages())}


# -- the MCP row -------------------------------------------------------------------------------
async def first_mcp_recall(
    src: Path, memory: Path, home: Path, pause: float, preload: bool = False
) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(src)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "--dir", str(memory), "mcp", *(["--preload"] if preload else [])],
        env=env,
    )
    out: dict[str, Any] = {}
    with open(home / "stderr.txt", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await client.list_tools()
            if preload:  # the agent's first call comes a model round trip after the handshake
                await asyncio.sleep(pause)
            elif pause:  # another tool first (the SDK loads at the first tool call), then a pause
                await client.call_tool("memory_list", {})
                await asyncio.sleep(pause)
            started = time.perf_counter()
            result = await client.call_tool(
                "memory_recall", {"query": "what did Caroline say about the charity race?"}
            )
            out["first_s"] = time.perf_counter() - started
            out["found"] = len(result.content)
            started = time.perf_counter()
            await client.call_tool("memory_recall", {"query": "who went swimming with the kids?"})
            out["second_s"] = time.perf_counter() - started
    return out


def run_child(src: Path, extra: list[str], work: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [sys.executable, __file__, "--child", "--workdir", str(work), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def mcp_row(
    src: Path, work: Path, tag: str, *, warm_table: bool, pause: float = 0.0, preload: bool = False
) -> dict[str, Any]:
    memory = work / "odd"
    home = work / f"home-{tag}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    if warm_table:  # this home has run memdir before: its static table exists
        models = home / ".memdir" / "cache" / "models"
        models.mkdir(parents=True)
        for path in (work / "models").glob("static-*.npy"):
            os.link(path, models / path.name)
    return asyncio.run(first_mcp_recall(src, memory, home, pause, preload))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="index build rate and first recall")
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--large", type=int, default=10000)
    parser.add_argument("--before-commit", default=BEFORE_COMMIT)
    parser.add_argument("--workdir", default="/tmp/memdir-index-build")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--what", default="", help=argparse.SUPPRESS)
    parser.add_argument("--tag", default="", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    work = Path(args.workdir)
    if args.child:
        what = {
            "rate": lambda: child_rate(work, args.n, args.tag),
            "e2e": lambda: child_e2e(work, args.n, args.tag),
            "big": lambda: child_big(work),
        }[args.what]
        print(json.dumps(what()))
        return 0
    sys.path.insert(0, str(HERE))
    from common import machine, table, update_docs_section
    from recall_turns import before_tree

    work.mkdir(parents=True, exist_ok=True)
    generate(work / f"rate-{args.memories}", args.memories)
    generate(work / f"large-{args.large}", args.large, seed=2)
    odd_dir(work / "odd")
    versions = {"before": before_tree(args.before_commit, work), "after": ROOT / "src"}
    n = ["--n", str(args.memories)]
    rate = {
        v: run_child(src, ["--what", "rate", "--tag", v, *n], work) for v, src in versions.items()
    }
    print("rate done", rate, file=sys.stderr)
    e2e = run_child(
        versions["after"], ["--what", "e2e", "--tag", "after", "--n", str(args.large)], work
    )
    print("e2e done", e2e, file=sys.stderr)
    big = {v: run_child(src, ["--what", "big"], work) for v, src in versions.items()}
    mcp = {
        "before": mcp_row(versions["before"], work, "before", warm_table=False),
        "after": mcp_row(versions["after"], work, "after", warm_table=True),
        "after, fresh home": mcp_row(versions["after"], work, "fresh", warm_table=False),
    }
    later = {  # the first memory_recall 2 s after another tool call (the SDK is loaded)
        "before": mcp_row(versions["before"], work, "before", warm_table=False, pause=2.0),
        "after": mcp_row(versions["after"], work, "after", warm_table=True, pause=2.0),
        "after, fresh home": mcp_row(versions["after"], work, "fresh", warm_table=False, pause=2.0),
    }
    preloaded = {  # --preload (the MCP-only hosts): the first call 2 s after the handshake
        "after": mcp_row(
            versions["after"], work, "after", warm_table=True, pause=2.0, preload=True
        ),
        "after, fresh home": mcp_row(
            versions["after"], work, "fresh", warm_table=False, pause=2.0, preload=True
        ),
    }
    print("mcp done", mcp, file=sys.stderr)
    b, a = rate["before"], rate["after"]
    fresh = mcp["after, fresh home"]
    rows = [
        ["model load s (apart)", f"{b['model_load_s']:.2f}", f"{a['model_load_s']:.2f}"],
        ["static table load s (apart; distilled once per home)", "–", f"{a['table_s']:.2f}"],
        [
            f"build, {args.memories:,} memories of 40–110 words: memories/s (searchable)",
            f"{b['rate']:.1f}",
            f"{a['rate']:.1f}",
        ],
        [
            "… the model reads them all (background / reindex): memories/s",
            "–",
            f"{a['fill_rate']:.1f}",
        ],
        [
            f"{args.large:,} memories: process start to first answer, s",
            f"≈ {args.large / b['rate'] + b['model_load_s']:.0f} (extrapolated)",
            f"{e2e['e2e_s']:.1f} (the model had read {e2e.get('by_model', 0)})",
        ],
        [
            "odd dir (241 files, five 2–6 MB): memory_recall as the first tool call, s",
            f"{mcp['before']['first_s']:.2f}",
            f"{mcp['after']['first_s']:.2f} (fresh home: {fresh['first_s']:.2f})",
        ],
        [
            "… the first memory_recall 2 s after another tool call, s",
            f"{later['before']['first_s']:.2f}",
            f"{later['after']['first_s']:.2f} (fresh home: "
            f"{later['after, fresh home']['first_s']:.2f})",
        ],
        [
            "… `mcp --preload` (Cursor, Claude Desktop): memory_recall as the first tool call, "
            "2 s after the handshake, s",
            "–",
            f"{preloaded['after']['first_s']:.2f} (fresh home: "
            f"{preloaded['after, fresh home']['first_s']:.2f})",
        ],
        [
            "… second memory_recall (first call's session), s",
            f"{mcp['before']['second_s']:.2f}",
            f"{mcp['after']['second_s']:.2f} (fresh home: {fresh['second_s']:.2f})",
        ],
        [
            "passages the model embeds: 64 KiB memory / 80-word memory",
            f"{big['before']['big']} / {big['before']['short']}",
            f"{big['after']['big']} / {big['after']['short']}",
        ],
    ]
    command = ".venv/bin/python benchmarks/index_build.py " + " ".join(argv or sys.argv[1:])
    text = "\n".join(
        [
            f"Command: `{command.strip()}`  ",
            f"Machine: {machine()}; before = commit {args.before_commit}; load average at start "
            f"{os.getloadavg()[0]:.1f}.",
            "",
            table(rows, ["measure", "before", "after"]),
        ]
    )
    print(text)
    if not args.no_docs:
        update_docs_section("index-build", text, title="An index that keeps up (issue #29)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
