"""Offline lessons on the wide real set (issue #30): whole long sessions, both extraction paths.

Data: the sessions of ``benchmarks/data/notes_wide/facts.json`` (provenance and the tune / held
split in the README beside it), read whole — every compaction — from ``EXPORT_DIR`` (``git
archive``s of the pinned commits, as for :mod:`benchmarks.notes_eval_wide`). Each session is
extracted with the offline rules the two ways a user gets them:

* **cli** — ``memdir extract T.jsonl`` (the real command, in process) over the whole
  transcript, in a fresh memory dir;
* **hook** — the real Stop worker (:func:`memdir.adapters.hooks.extraction.run_worker`, the
  cursor in a real session state) after every turn, over the transcript written so far, in a
  fresh memory dir; and again into one memory dir per repository, its sessions in the order
  they started (a user's week: the same lesson from two sessions must stay one memory).

Reported per part: memories saved, each memory's hand judgment (``lessons_judged.json`` beside
the data, keyed by :func:`key` — a hash of name and description — so a changed memory shows up
as unjudged instead of inheriting a verdict; unjudged counts as not useful), names and
descriptions holding one session's specifics (:mod:`memdir.extract.specific`, loaded from this
checkout), duplicates across sessions (memories of a week's dir judged the same lesson, and what
dream would still merge), and hook = CLI (file for file, per session).

Run: ``python -m benchmarks.lessons_eval_wide EXPORT_DIR --part tune --memories``. The held part
is opened once, with the rules frozen. ``--data benchmarks/data/lessons_entire/sessions.json``
scores the third set instead (raw Claude Code JSONL committed by the Entire CLI; its README says
how to export it), with its own judgments beside it. ``PYTHONPATH=<other checkout>/src`` scores
another
version against the same judgments and the same checker.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib.util
import io
import json
import re
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.conversation_log_export import parse_log
from benchmarks.real_session_export import parse_export

from memdir.adapters.hooks.extraction import run_worker
from memdir.adapters.hooks.state import SessionStore
from memdir.cli.main import main as memdir_main
from memdir.consolidate.plan import plan_offline
from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.transcript import turns_from_entries
from memdir.session.harness import is_harness_entry
from memdir.store import MemoryStore

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "notes_wide" / "facts.json"
JUDGED = HERE / "data" / "notes_wide" / "lessons_judged.json"
VERDICTS = ("useful", "noise", "harmful")


def key(name: str, description: str) -> str:
    """A memory's stable id in the judgments file."""
    return hashlib.sha256(f"{name}\n{description}".encode()).hexdigest()[:16]


def _checker() -> ModuleType:
    """This checkout's :mod:`memdir.extract.specific`, whichever memdir is being scored."""
    path = HERE.parent / "src" / "memdir" / "extract" / "specific.py"
    spec = importlib.util.spec_from_file_location("_specific", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _raw_sessions(spec: dict[str, Any], source: Path, part: str) -> list[dict[str, Any]]:
    """Raw Claude Code JSONL files (``../data/lessons_entire``): every line is an entry."""
    found = []
    for sid, s in spec["sessions"].items():
        if part != "all" and s["part"] != part:
            continue
        path = source / s["repo"].replace("/", "+") / s["path"]
        if not path.is_file():
            raise SystemExit(f"{path}: missing; see the README beside {DATA.name}")
        entries = []
        for line in path.read_text("utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a torn line, as the host may leave one
            if isinstance(entry, dict):
                entries.append(entry)
        first = next((str(e["timestamp"]) for e in entries if e.get("timestamp")), "")
        found.append({"session": sid, "repo": s["repo"], "entries": entries, "first": first})
    return sorted(found, key=lambda s: (s["repo"], s["first"], s["session"]))


def sessions(source: Path, part: str, data: Path = DATA) -> list[dict[str, Any]]:
    """The part's whole sessions: name, repository, entries, first timestamp."""
    spec = json.loads(data.read_text("utf-8"))
    if "sessions" in spec:
        return _raw_sessions(spec, source, part)
    seen: dict[str, dict[str, Any]] = {}
    for name, seg in spec["segments"].items():
        if part != "all" and seg["part"] != part:
            continue
        sid = name.rsplit("-", 1)[0]
        if sid in seen:
            continue
        path = source / seg["repo"].replace("/", "+") / seg["path"]
        if not path.is_file():
            raise SystemExit(f"{path}: missing; see the module docstring for the git archive step")
        text = path.read_text("utf-8")
        fmt = spec["sources"][seg["repo"]]["format"]
        _sid, entries = (
            parse_log(text) if fmt == "conversation-log" else parse_export(text, builtin_meta=False)
        )
        first = next((str(e["timestamp"]) for e in entries if e.get("timestamp")), "")
        seen[sid] = {"session": sid, "repo": seg["repo"], "entries": entries, "first": first}
    return sorted(seen.values(), key=lambda s: (s["repo"], s["first"], s["session"]))


def _write(path: Path, entries: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), "utf-8")


def prompt_starts(entries: list[dict[str, Any]]) -> list[int]:
    """Where each prompt the user typed begins (tool results and the harness's entries aside)."""
    starts = []
    for i, e in enumerate(entries):
        if e.get("type") != "user" or e.get("isCompactSummary") or e.get("isMeta"):
            continue
        content = e.get("message", {}).get("content")
        if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
            continue
        text = content if isinstance(content, str) else ""
        if not is_harness_entry(e, text):
            starts.append(i)
    return starts


def stops(entries: list[dict[str, Any]]) -> list[int]:
    """Where the host's Stop fires: before each prompt the user typed, and at the end."""
    return [*[i for i in prompt_starts(entries) if i > 0], len(entries)]


def cli_path(memory_dir: Path, transcript: Path) -> None:
    out = io.StringIO()
    code = memdir_main(
        ["--dir", str(memory_dir), "--json", "extract", str(transcript), "--rules"],
        env={},
        cwd=memory_dir.parent,
        stdout=out,
        stderr=io.StringIO(),
    )
    if code != 0:
        raise SystemExit(f"memdir extract {transcript.name} failed: {out.getvalue()}")


def hook_path(memory_dir: Path, entries: list[dict[str, Any]], work: Path, sid: str) -> None:
    """The Stop worker after every turn, over the transcript as it stood then."""
    cache = work / f"cache-{memory_dir.name}"
    state = SessionStore(cache)
    transcript = work / f"{sid}.so-far.jsonl"
    store = MemoryStore(memory_dir)
    for end in stops(entries):
        _write(transcript, entries[:end])
        run_worker(
            store=state,
            cache_dir=cache,
            memory_dir=memory_dir,
            session_id=sid,
            transcript=transcript,
            make_extractor=lambda: RuleExtractor(store),
            include_meta=False,
        )


def files(root: Path) -> dict[str, str]:
    if not root.is_dir():
        return {}
    return {
        p.name: p.read_text("utf-8") for p in sorted(root.glob("*.md")) if p.name != "MEMORY.md"
    }


def _header(text: str, name: str) -> str:
    m = re.search(rf"^{name}:\s*(.*)$", text, re.MULTILINE)
    value = m.group(1).strip() if m else ""
    if len(value) > 1 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")  # YAML's single-quoted scalar
    return value.strip('"')


def _shell_words(entries: list[dict[str, Any]]) -> frozenset[str]:
    check = _checker()
    turns = turns_from_entries(entries, include_meta=False)
    return frozenset(check.session_specifics([t.message for t in turns]))


def run(source: Path, part: str, data: Path = DATA) -> dict[str, Any]:
    verdicts = data.with_name(JUDGED.name)
    judged = json.loads(verdicts.read_text("utf-8"))["memories"] if verdicts.is_file() else {}
    check = _checker()
    rows, memories = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        weeks: dict[str, Path] = {}
        specifics: dict[str, set[str]] = {}
        for s in sessions(source, part, data):
            sid, entries = s["session"], s["entries"]
            transcript = work / f"{sid}.jsonl"
            _write(transcript, entries)
            cli_dir, hook_dir = work / sid / "cli", work / sid / "hook"
            cli_dir.mkdir(parents=True)
            cli_path(cli_dir, transcript)
            hook_path(hook_dir, entries, work, sid)
            week = weeks.setdefault(s["repo"], work / "week" / s["repo"].replace("/", "+"))
            hook_path(week, entries, work, f"{sid}-week")
            specifics.setdefault(s["repo"], set()).update(_shell_words(entries))
            saved = files(cli_dir)
            rows.append(
                {
                    "session": sid,
                    "repo": s["repo"],
                    "turns": len(stops(entries)),
                    "cli": len(saved),
                    "hook": len(files(hook_dir)),
                    "same": _same(files(hook_dir), saved),
                    "saved": [
                        _describe(t, judged, check, specifics[s["repo"]]) for t in saved.values()
                    ],
                }
            )
        duplicates = 0
        for repo, week in weeks.items():
            store = MemoryStore(week)
            if files(week):
                duplicates += len(plan_offline(store, today=dt.date.today()).duplicates)
            for rel, text in files(week).items():
                memories.append(
                    {"repo": repo, "file": rel, **_describe(text, judged, check, specifics[repo])}
                )
    lessons = Counter((m["repo"], m["lesson"]) for m in memories if m["lesson"])
    return {
        "part": part,
        "rows": rows,
        "memories": memories,
        "dream_duplicates": duplicates,
        "same_lesson_twice": sum(n - 1 for n in lessons.values() if n > 1),
    }


def _same(a: dict[str, str], b: dict[str, str]) -> bool:
    """File for file, the ``updated``/``created`` stamps aside (the two runs are seconds apart)."""

    def norm(files_: dict[str, str]) -> dict[str, str]:
        stamp = re.compile(r"^(?:created|updated|modified)\S*:.*$", re.M)
        return {k: stamp.sub("", v) for k, v in files_.items()}

    return norm(a) == norm(b)


def _describe(
    text: str, judged: dict[str, Any], check: ModuleType, specifics: set[str]
) -> dict[str, Any]:
    name, description = _header(text, "name"), _header(text, "description")
    k = key(name, description)
    verdict = judged.get(k, {})
    return {
        "key": k,
        "name": name,
        "description": description,
        "specific": check.specific_tokens(f"{name}\n{description}", specifics),
        "judgment": verdict.get("judgment", "unjudged"),
        "lesson": verdict.get("lesson", ""),
    }


def render(result: dict[str, Any]) -> str:
    rows, memories = result["rows"], result["memories"]
    lines = [
        f"**{result['part']}** part",
        "",
        "| session | repository | turns | CLI saved | hook saved | hook = CLI | "
        "useful / noise / harmful / unjudged (CLI) | with specifics |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        marks = Counter(m["judgment"] for m in r["saved"])
        lines.append(
            f"| {r['session']} | {r['repo']} | {r['turns']} | {r['cli']} | {r['hook']} | "
            f"{'yes' if r['same'] else 'no'} | {marks['useful']} / {marks['noise']} / "
            f"{marks['harmful']} / {marks['unjudged']} | "
            f"{sum(bool(m['specific']) for m in r['saved'])} |"
        )
    saved = [m for r in rows for m in r["saved"]]
    marks = Counter(m["judgment"] for m in saved)
    week = Counter(m["judgment"] for m in memories)
    with_useful = sum(1 for r in rows if any(m["judgment"] == "useful" for m in r["saved"]))
    judged = marks["useful"] + marks["noise"] + marks["harmful"] + marks["unjudged"]
    precision = f"{marks['useful'] / judged:.0%}" if judged else "–"
    lines += [
        f"| **all** | {len({r['repo'] for r in rows})} repositories | "
        f"{sum(r['turns'] for r in rows)} | "
        f"{sum(r['cli'] for r in rows)} | {sum(r['hook'] for r in rows)} | "
        f"{sum(r['same'] for r in rows)}/{len(rows)} | {marks['useful']} / {marks['noise']} / "
        f"{marks['harmful']} / {marks['unjudged']} | {sum(bool(m['specific']) for m in saved)} |",
        "",
        f"Sessions with a useful memory: {with_useful} of {len(rows)}; precision {precision} "
        "(unjudged counts as not useful).",
        f"The weeks' dirs (one per repository, hook path): {len(memories)} memories "
        f"({week['useful']} useful / {week['noise']} noise / {week['harmful']} harmful / "
        f"{week['unjudged']} unjudged); the same lesson twice: {result['same_lesson_twice']}; "
        f"duplicates dream would merge: {result['dream_duplicates']}.",
    ]
    across = Counter(m["judgment"] for m in week_only(result))
    if across:
        lines.append(
            f"Saved only across sessions (no single session shows them): "
            f"{sum(across.values())} ({across['useful']} useful / {across['noise']} noise / "
            f"{across['harmful']} harmful / {across['unjudged']} unjudged)."
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="EXPORT_DIR holding the git archives")
    parser.add_argument("--part", choices=("tune", "held", "all"), default="tune")
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the set's spec (its judgments lie beside it)"
    )
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON")
    parser.add_argument("--memories", action="store_true", help="list every saved memory")
    args = parser.parse_args(argv)
    result = run(args.source, args.part, args.data)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    print(render(result))
    if args.memories:
        for r in result["rows"]:
            for m in r["saved"]:
                flag = f"  ⚑ {m['specific']}" if m["specific"] else ""
                head = f"- {r['session']} [{m['judgment']}] {m['key']}"
                print(f"{head} {m['name']} — {m['description']}{flag}")
        for m in week_only(result):
            flag = f"  ⚑ {m['specific']}" if m["specific"] else ""
            head = f"- week {m['repo']} [{m['judgment']}] {m['key']}"
            print(f"{head} {m['name']} — {m['description']}{flag}")


def week_only(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The weeks' memories no single session saved: lessons seen across sessions."""
    alone = {(r["repo"], m["key"]) for r in result["rows"] for m in r["saved"]}
    return [m for m in result["memories"] if (m["repo"], m["key"]) not in alone]


if __name__ == "__main__":
    main()
