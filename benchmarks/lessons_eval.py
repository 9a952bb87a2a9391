"""Offline lessons over a user's week: many real sessions of one repository, one memory dir.

Each session (a "Claude Session Export", see ``benchmarks/real_session_export.py``) is extracted
with the offline rules two ways, as issue #30 asks:

* **hook** — the way the Stop hook's worker does it: after every turn, over the session so far,
  with the cursor, into the week's one memory dir (sessions in the order they started);
* **cli** — ``memdir extract`` over the whole transcript, once, in a fresh dir per session.

Reported: memories the week leaves, against the sum of what each session saves alone (the same
lesson from several sessions must stay one memory); whether the hook path saved what the CLI
path saved (per session, fresh dirs, same clock: file for file); names and descriptions holding
one session's specifics (:mod:`memdir.extract.specific`); duplicates dream would still merge;
and each memory's hand judgment (``benchmarks/data/lessons_week.json``: useful / noise /
harmful, the rubric of ``benchmarks/data/real_sessions/README.md``; unjudged counts as not
useful).

Run: ``python -m benchmarks.lessons_eval EXPORT_DIR`` where EXPORT_DIR holds the exports named
in the judgments file (``git -C <clone of goodsch/brain_explore> archive 5f00654 claude-prompts |
tar -x``). ``PYTHONPATH=<other checkout>/src`` scores another version; the checker is loaded from
this checkout either way, so both versions are held to the same rule.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib.util
import json
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.real_session_export import parse_export

from memdir.consolidate.plan import plan_offline
from memdir.extract.base import Turn
from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.transcript import turns_from_entries
from memdir.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.store import MemoryStore

HERE = Path(__file__).resolve().parent
JUDGED = HERE / "data" / "lessons_week.json"
NOON = dt.datetime(2025, 12, 1, 12, 0, tzinfo=dt.UTC)


def _checker() -> ModuleType:
    """This checkout's :mod:`memdir.extract.specific`, whichever memdir is being scored."""
    path = HERE.parent / "src" / "memdir" / "extract" / "specific.py"
    spec = importlib.util.spec_from_file_location("_specific", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(path: Path) -> tuple[list[Turn], str]:
    """The session's main-thread turns (harness text left out, as the rules read it) and its
    first timestamp."""
    _session, entries = parse_export(path.read_text("utf-8"))
    first = next((str(e["timestamp"]) for e in entries if e.get("timestamp")), "")
    return turns_from_entries(entries, include_meta=False), first


def stops(turns: Sequence[Turn]) -> list[int]:
    """Where the host's Stop fires: before each typed user message, and at the end."""
    starts = [i for i, t in enumerate(turns) if t.message.role == "user" and t.message.text]
    return [*starts[1:], len(turns)]


def hook_path(store: MemoryStore, turns: list[Turn], clock: Callable[[], dt.datetime]) -> None:
    extractor = RuleExtractor(store, clock=clock)
    cursor: int = 0
    for end in stops(turns):
        if end > cursor:
            asyncio.run(
                extractor.extract([t.message for t in turns[:end]], new_messages=end - cursor)
            )
            cursor = end


def cli_path(store: MemoryStore, turns: list[Turn], clock: Callable[[], dt.datetime]) -> None:
    messages = [t.message for t in turns]
    asyncio.run(RuleExtractor(store, clock=clock).extract(messages, new_messages=len(messages)))


def files(root: Path) -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(root.glob("*.md"))}


def _header(text: str, key: str) -> str:
    m = re.search(rf"^{key}:\s*(.*)$", text, re.MULTILINE)
    return m.group(1).strip().strip("'\"") if m else ""


def run(source: Path) -> dict[str, Any]:
    spec = json.loads(JUDGED.read_text("utf-8"))
    check = _checker()
    sessions = []
    for name in spec["sessions"]:
        path = next(source.rglob(f"{name}*-full.md"), None)
        if path is None:
            raise SystemExit(f"{name}: no export under {source}")
        turns, first = load(path)
        sessions.append((first, name, turns))
    sessions.sort()
    rows = []
    specifics: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        week = MemoryStore(Path(tmp) / "week")
        for day, (_first, name, turns) in enumerate(sessions):
            clock = lambda day=day: NOON + dt.timedelta(days=day)  # noqa: E731
            alone_hook = MemoryStore(Path(tmp) / name / "hook")
            alone_cli = MemoryStore(Path(tmp) / name / "cli")
            hook_path(alone_hook, turns, clock)
            cli_path(alone_cli, turns, clock)
            hook_path(week, turns, clock)
            saved = {k: v for k, v in files(alone_cli.root).items() if k != "MEMORY.md"}
            specifics |= check.session_specifics([t.message for t in turns])
            rows.append(
                {
                    "session": name,
                    "turns": len(stops(turns)),
                    "cli": len(saved),
                    "hook": len([k for k in files(alone_hook.root) if k != "MEMORY.md"]),
                    "same": files(alone_hook.root) == files(alone_cli.root),
                }
            )
        memories = []
        for rel, text in files(week.root).items():
            if rel == "MEMORY.md":
                continue
            name, description = _header(text, "name"), _header(text, "description")
            flagged = check.specific_tokens(f"{name}\n{description}", specifics)
            verdict = spec["judgments"].get(description, "unjudged")
            memories.append(
                {
                    "file": rel,
                    "name": name,
                    "description": description,
                    "specific": flagged,
                    "judgment": verdict,
                }
            )
        duplicates = len(plan_offline(week, today=NOON.date()).duplicates)
    return {"rows": rows, "memories": memories, "dream_duplicates": duplicates}


def _shell(tid: str, command: str, output: str, error: bool = False) -> list[Message]:
    return [
        Message("assistant", [ToolUseBlock(tid, "Bash", {"command": command})]),
        Message("user", [ToolResultBlock(tid, output, error)]),
    ]


def issue_shapes() -> dict[str, Any]:
    """The shapes issue #30 saw on five sessions nobody tuned on, rebuilt (synthetic): four
    sessions whose new branch needed ``--set-upstream`` on its first push, one whose formatter
    hook rejected the commit until the formatter ran. Same order, one memory dir."""
    sessions = []
    for i, branch in enumerate(["feat/export", "fix-timeouts", "docs/install", "chore/ci"]):
        fail = f"fatal: The current branch {branch} has no upstream branch."
        sessions.append(
            [
                Message("user", [TextBlock("commit and push this")]),
                *_shell(f"a{i}", f'git commit -m "work on {branch}"', f"[{branch} 1a2b3c{i}] x"),
                *_shell(f"b{i}", "git push 2>&1", fail, True),
                *_shell(f"c{i}", f"git push --set-upstream origin {branch} 2>&1", "set up"),
            ]
        )
    hook = "black....Failed\n- hook id: black\n- files were modified by this hook"
    sessions.append(
        [
            Message("user", [TextBlock("commit it")]),
            *_shell("d1", 'git commit -m "tidy the parser"', hook, True),
            *_shell("d2", "black src && git add -u", "reformatted 1 file"),
            *_shell("d3", 'git commit -m "tidy the parser"', "[main 9f8e7d6] tidy"),
        ]
    )
    check = _checker()
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp) / "week")
        specifics: set[str] = set()
        for day, messages in enumerate(sessions):
            clock = lambda day=day: NOON + dt.timedelta(days=day)  # noqa: E731
            specifics |= check.session_specifics(messages)
            asyncio.run(
                RuleExtractor(store, clock=clock).extract(messages, new_messages=len(messages))
            )
        saved = {k: v for k, v in files(store.root).items() if k != "MEMORY.md"}
        heads = [(_header(t, "name"), _header(t, "description")) for t in saved.values()]
        flagged = [h for h in heads if check.specific_tokens(f"{h[0]}\n{h[1]}", specifics)]
        hows = [ln for t in saved.values() for ln in t.splitlines() if "How to apply:" in ln]
    return {
        "sessions": len(sessions),
        "memories": len(saved),
        "specific": len(flagged),
        "distinct_how": len(set(hows)),
        "names": heads,
    }


def render(result: dict[str, Any]) -> str:
    rows, memories = result["rows"], result["memories"]
    marks = Counter(m["judgment"] for m in memories)
    lines = [
        "| sessions | turns | saved alone (sum) | the week's dir | hook = CLI | "
        "names/descriptions with specifics | dream duplicates left | "
        "useful / noise / harmful / unjudged |",
        "|---|---|---|---|---|---|---|---|",
        f"| {len(rows)} | {sum(r['turns'] for r in rows)} | {sum(r['cli'] for r in rows)} | "
        f"{len(memories)} | {sum(r['same'] for r in rows)}/{len(rows)} | "
        f"{sum(bool(m['specific']) for m in memories)} | {result['dream_duplicates']} | "
        f"{marks['useful']} / {marks['noise']} / {marks['harmful']} / {marks['unjudged']} |",
    ]
    with_one = sum(1 for r in rows if r["cli"])
    lines.append("")
    lines.append(f"Sessions with at least one memory: {with_one} of {len(rows)}.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a directory holding the session exports")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--memories", action="store_true", help="list the week's memories")
    args = parser.parse_args(argv)
    result = run(args.source)
    result["issue_shapes"] = issue_shapes()
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    print(render(result))
    shapes = result["issue_shapes"]
    print(
        f"\nIssue #30's shapes (synthetic, {shapes['sessions']} sessions in a row): "
        f"{shapes['memories']} memories, {shapes['specific']} with session specifics in name or "
        f"description, {shapes['distinct_how']} distinct How to apply lines."
    )
    for name, description in shapes["names"]:
        print(f"  - {name} — {description}")
    for r in result["rows"]:
        if not r["same"]:
            print(f"  hook ≠ cli: {r['session']} (hook {r['hook']}, cli {r['cli']})")
    if args.memories:
        for m in result["memories"]:
            flag = f"  ⚑ {m['specific']}" if m["specific"] else ""
            print(f"- [{m['judgment']}] {m['name']} — {m['description']}{flag}")


if __name__ == "__main__":
    sys.exit(main())
