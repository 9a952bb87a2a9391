"""Session notes and offline extraction on real, public Claude Code sessions, scored by hand.

Data: ``benchmarks/data/real_sessions`` (see its README: where each session comes from, its
licence status, what was rebuilt). For every session segment the host compacted once:

* **notes coverage** — the offline notes are built the way the hooks build them (incrementally,
  a few turns at a time), then checked against the key facts listed by hand from the host's own
  compaction summary of the same segment (``facts.json``), by kind of fact;
* **files** — recall of the files the host summary names, and precision of the files the notes
  list (a listed path the session never read, edited or wrote is invented);
* **invented tool results** — changes ``repair`` had to make to pair tool calls with results
  (each one is a "[no result was recorded…]" or a loose "[tool result]" sent to the model);
* **extraction** — what ``memdir extract`` (rules, offline) saves from the segment, each memory
  judged by hand (``judgments.json``: useful / noise / harmful, rubric in the README); a memory
  with no judgment yet is reported as unjudged and counts as not useful;
* **compaction cost** — ``memdir compact`` on a ~3 MB transcript made of the segments in a row:
  wall time and peak memory of the process.

Run: ``python -m benchmarks.notes_eval`` (add ``--write`` to update docs/benchmarks.md).
The same command with ``PYTHONPATH=<other checkout>/src`` scores another version (the
"before" column in the docs comes from main that way).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from memdir.cli.main import main as memdir_main
from memdir.session.convert import load_transcript
from memdir.session.messages import ChatMessage, repair
from memdir.session.notes import builtin_template, parse_notes
from memdir.session.offline import OfflineUpdater

DATA = Path(__file__).resolve().parent / "data" / "real_sessions"
KINDS = ("request", "done", "pending", "error_fix", "test_result", "decision")
TURNS_PER_UPDATE = 4  # the hooks update the notes every few turns, not once at the end
_PATH = re.compile(r"`([^`\s]*[\w-]+\.[A-Za-z]{1,5})`")
_NOTE_PATH = re.compile(r"^- `([^`]+)`", re.MULTILINE)


def notes_for(messages: list[ChatMessage]) -> str:
    """Notes as the hooks would leave them: merged a few user turns at a time."""
    updater = OfflineUpdater()
    template = builtin_template()
    current = ""
    batch: list[ChatMessage] = []
    turns = 0
    for m in messages:
        if m.role == "user" and m.has_text and not m.is_meta and turns == TURNS_PER_UPDATE:
            current = updater.render(current, batch, template)
            batch, turns = [], 0
        if m.role == "user" and m.has_text and not m.is_meta:
            turns += 1
        batch.append(m)
    return updater.render(current, batch, template) if batch else current


def covered(fact: dict[str, Any], notes: str) -> bool:
    low = notes.lower()
    return all(any(k.lower() in low for k in group) for group in fact["keys"])


def touched_paths(messages: list[ChatMessage]) -> set[str]:
    paths: set[str] = set()
    for m in messages:
        for b in m.tool_uses:
            raw = b.get("input")
            if isinstance(raw, dict):
                for key in ("file_path", "path", "notebook_path"):
                    if isinstance(raw.get(key), str):
                        paths.add(raw[key])
    return paths


def summary_files(summary: str) -> set[str]:
    """Paths the host summary names in its files section (basenames compared later)."""
    part = re.split(r"\n#*\s*\d\.\s*\**Files", summary, maxsplit=1)
    section = part[-1] if len(part) > 1 else summary
    section = re.split(r"\n#*\s*\d\.\s*\**Errors", section, maxsplit=1)[0]
    return {p for p in _PATH.findall(section) if "/" in p or p.count(".") == 1}


def file_scores(notes: str, summary: str, touched: set[str]) -> tuple[float, float, int]:
    listed = set(_NOTE_PATH.findall(parse_notes(notes).body("Files and Functions")))
    wanted = summary_files(summary)
    in_session = {w for w in wanted if any(t.endswith(w.lstrip("./")) for t in touched)}
    found = {w for w in in_session if any(p.endswith(w.lstrip("./")) for p in listed)}
    recall = len(found) / len(in_session) if in_session else 1.0
    real = {p for p in listed if p in touched}
    precision = len(real) / len(listed) if listed else 1.0
    return recall, precision, len(in_session)


def extract(path: Path) -> list[dict[str, str]]:
    """``memdir extract`` (rules) on one segment, in a fresh memory dir: the saved memories."""
    with tempfile.TemporaryDirectory() as tmp:
        memory = Path(tmp) / "memory"
        out, err = io.StringIO(), io.StringIO()
        argv = ["--json", "--dir", str(memory), "extract", str(path)]
        memdir_main(argv, env={"HOME": tmp}, cwd=Path(tmp), stdout=out, stderr=err)
        payload = json.loads(out.getvalue() or "{}")
        found = []
        for rel in payload.get("written", []):
            text = (memory / rel).read_text("utf-8")
            desc = re.search(r"^description:\s*(.*)$", text, re.MULTILINE)
            found.append({"file": rel, "description": desc.group(1).strip() if desc else rel})
        return found


def compaction_cost(sessions: list[str]) -> tuple[int, float, float]:
    """(bytes, seconds, peak MB) of ``memdir compact`` on the segments in a row (one process)."""
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.jsonl"
        with big.open("w", encoding="utf-8") as fh:
            written, i = 0, 0
            while written < 3_000_000:  # the segments one after another, to ~3 MB
                written += fh.write((DATA / f"{sessions[i % len(sessions)]}.jsonl").read_text())
                i += 1
        code = (
            "import resource,sys,time;from memdir.cli.main import main;t=time.perf_counter();"
            "c=main(['--json','compact',sys.argv[1],'--window','200000','--notes',sys.argv[2]]);"
            "print(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
            " file=sys.stderr)"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code, str(big), str(Path(tmp) / "notes.md")],
            capture_output=True,
            text=True,
            cwd=tmp,
            env={"HOME": tmp, "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)},
            check=False,
        )
        seconds, kb = proc.stderr.strip().splitlines()[-1].split()
        return big.stat().st_size, float(seconds), int(kb) / 1024


def run() -> dict[str, Any]:
    facts = json.loads((DATA / "facts.json").read_text("utf-8"))["sessions"]
    judged = json.loads((DATA / "judgments.json").read_text("utf-8"))["sessions"]
    rows: list[dict[str, Any]] = []
    for sid, spec in facts.items():
        path = DATA / f"{sid}.jsonl"
        messages, _ = load_transcript(path)
        _fixed, changes = repair(messages)
        invented = sum("had no result" in c or "kept as text" in c for c in changes)
        notes = notes_for(messages)
        summary = (DATA / f"{sid}.summary.md").read_text("utf-8")
        by_kind: Counter[str] = Counter()
        hit: Counter[str] = Counter()
        missed = []
        for fact in spec["facts"]:
            by_kind[fact["kind"]] += 1
            if covered(fact, notes):
                hit[fact["kind"]] += 1
            else:
                missed.append(fact["fact"])
        recall, precision, n_files = file_scores(notes, summary, touched_paths(messages))
        verdicts = judged.get(sid, {})
        memories = extract(path)
        marks = Counter(verdicts.get(m["description"], "unjudged") for m in memories)
        rows.append(
            {
                "session": sid,
                "tuned": spec.get("tuned", False),
                "entries": sum(1 for _ in path.open()),
                "facts": dict(by_kind),
                "covered": dict(hit),
                "missed": missed,
                "files_recall": recall,
                "files_precision": precision,
                "summary_files": n_files,
                "invented_results": invented,
                "memories": memories,
                "judgments": dict(marks),
                "notes_chars": len(notes),
            }
        )
    size, seconds, peak = compaction_cost(list(facts))
    return {"rows": rows, "compaction": {"bytes": size, "seconds": seconds, "peak_mb": peak}}


def _pct(hit: int, total: int) -> str:
    return f"{hit}/{total} ({hit / total:.0%})" if total else "–"


def render(result: dict[str, Any]) -> str:
    rows = result["rows"]
    header = "| session | entries | overall | " + " | ".join(KINDS) + " | files R / P | "
    header += "invented results | memories: useful / noise / harmful / unjudged |"
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    totals: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    marks: Counter[str] = Counter()
    for r in rows:
        total, hit = sum(r["facts"].values()), sum(r["covered"].values())
        totals.update(r["facts"])
        hits.update(r["covered"])
        marks.update(r["judgments"])
        cells = [_pct(r["covered"].get(k, 0), r["facts"].get(k, 0)) for k in KINDS]
        j = r["judgments"]
        name = r["session"] + ("" if r["tuned"] else " (held out)")
        lines.append(
            f"| {name} | {r['entries']} | {_pct(hit, total)} | "
            + " | ".join(cells)
            + f" | {r['files_recall']:.2f} / {r['files_precision']:.2f} | "
            + f"{r['invented_results']} | {j.get('useful', 0)} / {j.get('noise', 0)} / "
            + f"{j.get('harmful', 0)} / {j.get('unjudged', 0)} |"
        )
    all_total, all_hit = sum(totals.values()), sum(hits.values())
    cells = [_pct(hits.get(k, 0), totals.get(k, 0)) for k in KINDS]
    recall = sum(r["files_recall"] for r in rows) / len(rows)
    precision = sum(r["files_precision"] for r in rows) / len(rows)
    invented = sum(r["invented_results"] for r in rows)
    lines.append(
        f"| **all** | {sum(r['entries'] for r in rows)} | **{_pct(all_hit, all_total)}** | "
        + " | ".join(cells)
        + f" | {recall:.2f} / {precision:.2f} | {invented} | {marks.get('useful', 0)} / "
        + f"{marks.get('noise', 0)} / {marks.get('harmful', 0)} / {marks.get('unjudged', 0)} |"
    )
    held = [r for r in rows if not r["tuned"]]
    h_total = sum(sum(r["facts"].values()) for r in held)
    h_hit = sum(sum(r["covered"].values()) for r in held)
    c = result["compaction"]
    lines += [
        "",
        f"Held-out sessions only: {_pct(h_hit, h_total)} of the facts.",
        f"`memdir compact` on {c['bytes'] / 1e6:.1f} MB of these transcripts: "
        f"{c['seconds']:.2f} s, peak {c['peak_mb']:.0f} MB.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON")
    parser.add_argument("--missed", action="store_true", help="list the facts the notes missed")
    parser.add_argument("--memories", action="store_true", help="list every extracted memory")
    args = parser.parse_args()
    result = run()
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    print(render(result))
    for r in result["rows"]:
        if args.missed and r["missed"]:
            print(f"\n{r['session']} missed:\n" + "\n".join(f"  - {m}" for m in r["missed"]))
        if args.memories and r["memories"]:
            print(f"\n{r['session']} memories:")
            print("\n".join(f"  - {m['description']}" for m in r["memories"]))


if __name__ == "__main__":
    main()
