"""Session notes on a wider real set (issue #30 item 4): sessions from several repositories.

Data: ``benchmarks/data/notes_wide/facts.json`` (provenance and licence status in the README
beside it). The transcripts are not in this repository: each source is a public GitHub
repository at a pinned commit, read from ``EXPORT_DIR/<owner>+<name>/`` — a ``git archive`` of
that commit::

    mkdir -p EXPORT_DIR/goodsch+brain_explore
    git -C <clone of goodsch/brain_explore> archive 5f00654 claude-prompts \\
        | tar -x -C EXPORT_DIR/goodsch+brain_explore

(the same for every source and path the data file names). Each segment is the part of a
session the host compacted, rebuilt by :mod:`benchmarks.real_session_export` or
:mod:`benchmarks.conversation_log_export` and trimmed as ``real_sessions`` is (tool results
over 2,000 characters keep head and tail). The notes are built as the hooks build them
(:func:`benchmarks.notes_eval.notes_for`) and scored against the facts listed by hand from the
host's own summary of the segment, by kind (rubric: ``real_sessions/README.md``).

The set is split: ``tune`` segments were read while writing the rules; ``held`` segments were
not opened until the final run. ``--part`` picks one; the docs report the held-out part.

Run: ``python -m benchmarks.notes_eval_wide EXPORT_DIR --part held``.
``--dump OUT`` writes a segment's transcript and summary (for reading the tuning part).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.conversation_log_export import parse_log
from benchmarks.notes_eval import KINDS, covered, notes_for
from benchmarks.real_session_export import parse_export, segments, trim_results

from memdir.session.convert import load_transcript

DATA = Path(__file__).resolve().parent / "data" / "notes_wide" / "facts.json"


def segment(source: Path, spec: dict[str, Any], fmt: str) -> tuple[list[dict[str, Any]], str]:
    """(transcript entries, host summary) of one compacted segment of an exported session."""
    path = source / spec["repo"].replace("/", "+") / spec["path"]
    if not path.is_file():
        raise SystemExit(f"{path}: missing; see the module docstring for the git archive step")
    text = path.read_text("utf-8")
    _sid, entries = (
        parse_log(text) if fmt == "conversation-log" else parse_export(text, builtin_meta=False)
    )
    trim_results(entries, 2000)
    found = segments(entries)
    k = spec["compaction"]
    if len(found) < k:
        raise SystemExit(f"{path}: {len(found)} compactions, the data file names number {k}")
    chunk, summary = found[k - 1]
    return chunk, summary


def _write(path: Path, entries: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), "utf-8")


def run(source: Path, part: str) -> list[dict[str, Any]]:
    spec = json.loads(DATA.read_text("utf-8"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, seg in spec["segments"].items():
            if part != "all" and seg["part"] != part:
                continue
            entries, _summary = segment(source, seg, spec["sources"][seg["repo"]]["format"])
            path = Path(tmp) / f"{name}.jsonl"
            _write(path, entries)
            messages, _ = load_transcript(path)
            notes = notes_for(messages)
            raw = path.read_text("utf-8").lower()
            facts: Counter[str] = Counter()
            hit: Counter[str] = Counter()
            missed, unreachable = [], []
            for fact in seg["facts"]:
                facts[fact["kind"]] += 1
                if covered(fact, notes):
                    hit[fact["kind"]] += 1
                else:
                    missed.append(f"[{fact['kind']}] {fact['fact']}")
                if not all(any(k.lower() in raw for k in g) for g in fact["keys"]):
                    unreachable.append(fact["fact"])
            rows.append(
                {
                    "segment": name,
                    "repo": seg["repo"],
                    "part": seg["part"],
                    "entries": len(entries),
                    "facts": dict(facts),
                    "covered": dict(hit),
                    "missed": missed,
                    "unreachable": unreachable,
                    "notes_chars": len(notes),
                }
            )
    return rows


def _pct(hit: int, total: int) -> str:
    return f"{hit}/{total} ({hit / total:.0%})" if total else "–"


def render(rows: list[dict[str, Any]]) -> str:
    header = "| segment | repository | entries | overall | " + " | ".join(KINDS) + " |"
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    totals: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for r in rows:
        totals.update(r["facts"])
        hits.update(r["covered"])
        cells = [_pct(r["covered"].get(k, 0), r["facts"].get(k, 0)) for k in KINDS]
        total, hit = sum(r["facts"].values()), sum(r["covered"].values())
        lines.append(
            f"| {r['segment']} | {r['repo']} | {r['entries']} | {_pct(hit, total)} | "
            + " | ".join(cells)
            + " |"
        )
    cells = [_pct(hits.get(k, 0), totals.get(k, 0)) for k in KINDS]
    lines.append(
        f"| **all** | {len({r['repo'] for r in rows})} repositories | "
        f"{sum(r['entries'] for r in rows)} | "
        f"**{_pct(sum(hits.values()), sum(totals.values()))}** | " + " | ".join(cells) + " |"
    )
    return "\n".join(lines)


def dump(source: Path, name: str, out: Path) -> None:
    spec = json.loads(DATA.read_text("utf-8"))
    seg = spec["segments"][name]
    if seg["part"] != "tune":
        raise SystemExit(f"{name} is held out: it is opened only by the final scoring run")
    entries, summary = segment(source, seg, spec["sources"][seg["repo"]]["format"])
    out.mkdir(parents=True, exist_ok=True)
    _write(out / f"{name}.jsonl", entries)
    (out / f"{name}.summary.md").write_text(summary + "\n", "utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="EXPORT_DIR holding the git archives")
    parser.add_argument("--part", choices=("tune", "held", "all"), default="held")
    parser.add_argument("--json", action="store_true", help="print the raw results as JSON")
    parser.add_argument("--missed", action="store_true", help="list the facts the notes missed")
    parser.add_argument("--dump", type=Path, help="write the tuning segments' transcripts here")
    args = parser.parse_args(argv)
    if args.dump:
        spec = json.loads(DATA.read_text("utf-8"))
        for name, seg in spec["segments"].items():
            if seg["part"] == "tune":
                dump(args.source, name, args.dump)
        return
    rows = run(args.source, args.part)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    print(render(rows))
    for r in rows:
        if r["unreachable"]:
            print(f"\n{r['segment']}: keys not in the transcript: {r['unreachable']}")
        if args.missed and r["missed"]:
            print(f"\n{r['segment']} missed:\n" + "\n".join(f"  - {m}" for m in r["missed"]))


if __name__ == "__main__":
    main()
