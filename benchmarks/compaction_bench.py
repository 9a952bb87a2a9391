"""Planted-fact retention after compacting long coding sessions to a small window.

For each seed a long real-shaped session transcript is generated (benchmarks/session_transcripts,
≥ 150k estimated tokens) and compacted to ``--window`` tokens by three methods in the same run:

* offline — session-memory compaction with the offline notes updater (no model);
* llm-fake — the full summarising compaction through a scripted fake whose summary knows nothing
  of the session (plumbing only: it shows the request/retry/re-attach path and its cost, not
  summary quality);
* drop-oldest — the naive baseline: drop the oldest API-round groups until the rest fits.

A fact counts as kept when its key phrase is present anywhere in the post-compaction context
(every text, tool input and tool result the model would be sent).

Usage: ``python -m benchmarks.compaction_bench [--seeds 3] [--turns 90] [--window 40000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import table
from benchmarks.session_transcripts import Planted, write_session

from memdir.llm.base import Completion
from memdir.llm.scripted import ScriptedProvider
from memdir.session.compactor import Compactor
from memdir.session.convert import load_transcript
from memdir.session.full_compact import round_groups
from memdir.session.memory import SessionMemory
from memdir.session.messages import ChatMessage, api_shape_problems, result_text, to_api
from memdir.session.offline import OfflineUpdater
from memdir.session.tokens import Window, estimate_tokens

CANNED = Completion.from_text(
    "<analysis>notes</analysis><summary>1. Primary request and intent: the user is building "
    "features in a shop backend. 8. Current work: continuing the last task.</summary>"
)
KINDS = ("requests", "corrections", "decisions", "files", "errors")


def drop_oldest(messages: Sequence[ChatMessage], window: Window) -> list[ChatMessage]:
    groups = round_groups(messages)
    while len(groups) > 1 and estimate_tokens([m for g in groups for m in g]) >= window.threshold:
        groups.pop(0)
    return [m for g in groups for m in g]


def context_text(messages: Sequence[ChatMessage]) -> str:
    parts: list[str] = []
    for m in to_api(messages):
        for block in m["content"]:
            kind = block.get("type")
            if kind == "text":
                parts.append(str(block["text"]))
            elif kind == "tool_use":
                parts.append(json.dumps(block.get("input"), ensure_ascii=False))
            elif kind == "tool_result":
                parts.append(result_text(block.get("content")))
    return "\n".join(parts)


def kept(planted: Planted, text: str) -> dict[str, tuple[int, int]]:
    facts = planted.as_dict()
    return {k: (sum(1 for f in facts[k] if f in text), len(facts[k])) for k in KINDS}


async def run_seed(
    seed: int, turns: int, window_size: int, tmp: Path
) -> dict[str, dict[str, object]]:
    path = tmp / f"session-{seed}.jsonl"
    planted = write_session(path, seed=seed, turns=turns)
    messages, issues = load_transcript(path)
    assert not issues, issues
    window = Window(window_size)
    before = estimate_tokens(messages)
    rows: dict[str, dict[str, object]] = {}

    async def method(name: str, compactor: Compactor | None) -> None:
        started = time.perf_counter()
        if compactor is None:
            out = drop_oldest(messages, window)
            rung = "drop-oldest"
        else:
            result = await compactor.maybe_compact(messages, window_size, force=True)
            out, rung = result.messages, result.report.rung
        elapsed = time.perf_counter() - started
        problems = api_shape_problems(to_api(out))
        rows[name] = {
            "rung": rung,
            "before": before,
            "after": estimate_tokens(out),
            "ms": elapsed * 1000,
            "valid": not problems,
            "kept": kept(planted, context_text(out)),
        }

    notes = tmp / f"notes-{seed}" / "session-memory" / "summary.md"
    await method("offline", Compactor(session_memory=SessionMemory(notes, OfflineUpdater())))
    await method("llm-fake", Compactor(provider=ScriptedProvider.always(CANNED)))
    await method("drop-oldest", None)
    return rows


def _pct(pairs: Sequence[tuple[int, int]]) -> str:
    found, total = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    return f"{100 * found / total:.0f}% ({found}/{total})" if total else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=90)
    parser.add_argument("--window", type=int, default=40_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [
            asyncio.run(run_seed(s, args.turns, args.window, Path(tmp))) for s in range(args.seeds)
        ]
    methods = list(runs[0])
    rows = []
    for name in methods:
        results = [r[name] for r in runs]
        k = [res["kept"] for res in results]
        rows.append(
            [
                name,
                results[0]["rung"],
                round(sum(int(str(r["before"])) for r in results) / len(results)),
                round(sum(int(str(r["after"])) for r in results) / len(results)),
                f"{sum(float(str(r['ms'])) for r in results) / len(results):.0f}",
                _pct([x["requests"] for x in k] + [x["corrections"] for x in k]),  # type: ignore[index]
                _pct([x["decisions"] for x in k]),  # type: ignore[index]
                _pct([x["files"] for x in k]),  # type: ignore[index]
                _pct([x["errors"] for x in k]),  # type: ignore[index]
                "yes" if all(bool(r["valid"]) for r in results) else "no",
            ]
        )
    header = [
        "method",
        "rung",
        "tokens before",
        "tokens after",
        "ms",
        "requests+corrections",
        "decisions",
        "file paths",
        "errors",
        "valid API shape",
    ]
    print(
        f"{args.seeds} sessions x {args.turns} turns, window {args.window} "
        f"(autocompact threshold {Window(args.window).threshold})"
    )
    print(table(rows, header))


if __name__ == "__main__":
    main()
