"""A user's week through the real hooks (issue #30's "done when"): one memory dir, real processes.

Real Claude Code sessions of one repository (a spec of ``benchmarks/data/lessons_entire`` and the
export dir its README builds) are replayed one after another, in the order they started, the way
Claude Code runs memdir's hooks: ``memdir hook session-start``, then per typed prompt
``user-prompt-submit`` before the prompt is written to the transcript and ``stop`` once the turn's
entries are, waiting for the background extraction to catch up as the next prompt would; at the
end ``session-end`` and its worker (final extraction, dream gate). Everything runs offline
(``MEMDIR_HOST_MODEL=off``, no API key) in a fresh HOME, exactly as a new user gets memdir.

Printed: per session its turns, the hooks' wall time and the memories after it; then the week's
memory dir (type, name, description, each memory's hand judgment from ``lessons_judged.json``
beside the spec when one exists, and names or descriptions holding a session's specifics), the
duplicates dream would still merge, and ``memdir session show`` of the last session: the
handover note a colleague would read.

Run: ``python -m benchmarks.week_hooks EXPORT_DIR --data SPEC --repo owner/name --part held``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.lessons_eval_wide import (
    _checker,
    _describe,
    _shell_words,
    _write,
    files,
    prompt_starts,
    sessions,
)

from memdir.adapters.hooks import hooklog
from memdir.adapters.hooks.extraction import extraction_running, unextracted
from memdir.adapters.hooks.state import SessionStore
from memdir.consolidate.plan import plan_offline
from memdir.daily_log import bullets, log_files
from memdir.extract.sightings import is_sighting
from memdir.store import MemoryStore

CATCH_UP_SECONDS = 120.0


class Machine:
    """One user's machine: a fresh HOME, one project, memdir's hooks as real processes."""

    def __init__(self, root: Path) -> None:
        self.home, self.project = root / "home", root / "project"
        (self.project / ".git").mkdir(parents=True)
        self.home.mkdir()
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "CLAUDE_"))}
        self.env = {**base, "HOME": str(self.home), "MEMDIR_HOST_MODEL": "off"}
        self.env.pop("ANTHROPIC_API_KEY", None)
        where = json.loads(self.memdir("--json", "where").stdout)
        paths = where.get("paths", where)
        self.memory_dir, self.cache_dir = Path(paths["memory_dir"]), Path(paths["cache_dir"])
        self.transcripts = self.home / ".claude" / "projects" / paths["slug"]

    def memdir(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memdir", *args],
            capture_output=True,
            text=True,
            cwd=self.project,
            env=self.env,
            timeout=300,
        )

    def hook(self, event: str, payload: dict[str, Any]) -> None:
        proc = subprocess.run(
            [sys.executable, "-m", "memdir", "hook", event],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=self.project,
            env=self.env,
            timeout=300,
        )
        if proc.returncode != 0:
            raise SystemExit(f"memdir hook {event} exited {proc.returncode}: {proc.stderr}")

    def stop_daemon(self) -> None:
        self.memdir("hook", "daemon", "stop")


def _prompt(entry: dict[str, Any]) -> str:
    content = entry.get("message", {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    return ""


def _rows(machine: Machine, sid: str) -> list[dict[str, Any]]:
    """The session's hook-log rows, read as `memdir hook log` reads them (no process per poll)."""
    return hooklog.read(machine.cache_dir, session=sid, limit=0)


def _catch_up(machine: Machine, sid: str, extracts_before: int, transcript: Path) -> bool:
    """Until the extraction the last ``stop`` started has logged its row and nothing is pending
    (what the next prompt sees); at once when that ``stop`` started none, and as soon as no
    worker runs and nothing lies past the cursor (a turn of only "[Request interrupted…]" has
    no message to extract, so its worker logs no row)."""
    deadline = time.monotonic() + CATCH_UP_SECONDS
    store = SessionStore(machine.cache_dir)
    while time.monotonic() < deadline:
        rows = _rows(machine, sid)
        stops_ = [r for r in rows if r.get("event") == "stop"]
        if stops_ and not str(stops_[-1].get("extraction", "")).startswith("started"):
            return True
        done = sum(r.get("event") == "extract" for r in rows) > extracts_before
        if done and not store.load(sid).extract_pending:
            return True
        idle = not extraction_running(store, sid) and not store.load(sid).extract_pending
        if idle and unextracted(store, sid, transcript) == 0:
            return True
        time.sleep(0.2)
    return False


def _ended(machine: Machine, sid: str) -> dict[str, Any]:
    deadline = time.monotonic() + CATCH_UP_SECONDS
    while time.monotonic() < deadline:
        rows = _rows(machine, sid)
        ended = [r for r in rows if r.get("event") == "session-end-worker"]
        if ended:
            return dict(ended[-1])
        time.sleep(0.2)
    return {}


def replay(machine: Machine, sid: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """One session through the hooks, turn by turn, as the host would run them."""
    transcript = machine.transcripts / f"{sid}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)

    def payload(event: str, **extra: Any) -> dict[str, Any]:
        return {
            "session_id": sid,
            "transcript_path": str(transcript),
            "cwd": str(machine.project),
            "permission_mode": "default",
            "hook_event_name": event,
            **extra,
        }

    started, lagged = time.perf_counter(), 0
    starts = prompt_starts(entries)
    bounds = list(zip(starts, [*starts[1:], len(entries)], strict=True))
    _write(transcript, entries[: starts[0]] if starts else entries)
    machine.hook("session-start", payload("SessionStart", source="startup"))
    for begin, end in bounds:
        prompt = _prompt(entries[begin])
        machine.hook("user-prompt-submit", payload("UserPromptSubmit", prompt=prompt))
        _write(transcript, entries[:end])
        before = sum(r.get("event") == "extract" for r in _rows(machine, sid))
        machine.hook("stop", payload("Stop", stop_hook_active=False))
        lagged += not _catch_up(machine, sid, before, transcript)
    machine.hook("session-end", payload("SessionEnd", reason="exit"))
    row = _ended(machine, sid)
    return {
        "turns": len(bounds),
        "seconds": round(time.perf_counter() - started, 1),
        "lagged": lagged,
        "dream": row.get("dream", "no session-end-worker row"),
    }


def run(source: Path, data: Path, repo: str, part: str, limit: int) -> dict[str, Any]:
    chosen = [s for s in sessions(source, part, data) if s["repo"] == repo][:limit]
    if not chosen:
        raise SystemExit(f"no {part} sessions of {repo} in {data}")
    verdicts = data.with_name("lessons_judged.json")
    judged = json.loads(verdicts.read_text("utf-8"))["memories"] if verdicts.is_file() else {}
    check, specifics = _checker(), set[str]()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        machine = Machine(Path(tmp))
        try:
            for s in chosen:
                specifics.update(_shell_words(s["entries"]))
                row = replay(machine, s["session"], s["entries"])
                rows.append(
                    {"session": s["session"], **row, "memories": len(files(machine.memory_dir))}
                )
            show = machine.memdir("--json", "session", "show")  # the user, the next morning
            memories = [
                {"file": rel, **_describe(text, judged, check, specifics), "type": _type(text)}
                for rel, text in files(machine.memory_dir).items()
            ]
            store = MemoryStore(machine.memory_dir)
            dupes = len(plan_offline(store, today=dt.date.today()).duplicates) if memories else 0
            root = machine.memory_dir
            seen = [
                b.text
                for rel, day in log_files(root)
                for b in bullets(root, rel, day)
                if is_sighting(b.text)
            ]
        finally:
            machine.stop_daemon()
    return {
        "repo": repo,
        "part": part,
        "rows": rows,
        "memories": memories,
        "dream_duplicates": dupes,
        "sightings": seen,
        "handover": (
            json.loads(show.stdout)["notes"]
            if show.returncode == 0
            else f"(session show failed: {show.stderr})"
        ),
    }


def _type(text: str) -> str:
    for line in text.splitlines()[1:30]:
        if line.startswith("type:"):
            return line.split(":", 1)[1].strip()
    return ""


def render(result: dict[str, Any]) -> str:
    lines = [
        f"**{result['repo']}**, {result['part']} part, {len(result['rows'])} sessions in start "
        "order through the real hooks into one memory dir",
        "",
        "| session | turns | hooks' wall time (s) | turns the extraction lagged | memories after "
        "| dream gate |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['session']} | {r['turns']} | {r['seconds']} | {r['lagged']} | "
            f"{r['memories']} | {r['dream']} |"
        )
    lines += ["", "| type | name | description | judgment | specifics |", "|---|---|---|---|---|"]
    for m in result["memories"]:
        lines.append(
            f"| {m['type']} | {m['name']} | {m['description']} | {m['judgment']} | "
            f"{', '.join(m['specific']) or '–'} |"
        )
    lines += [
        "",
        f"Duplicates dream would still merge: {result['dream_duplicates']}.",
        "",
        f"Single sightings noted in the daily log: {len(result['sightings'])} "
        f"({', '.join(sorted({s.split()[1] for s in result['sightings']})) or 'none'}).",
        "",
        "`memdir session show` of the last session:",
        "",
        "```markdown",
        result["handover"].rstrip(),
        "```",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="EXPORT_DIR (see the spec's README)")
    parser.add_argument("--data", type=Path, required=True, help="the set's sessions spec")
    parser.add_argument("--repo", required=True, help="owner/name: whose sessions make the week")
    parser.add_argument("--part", choices=("tune", "held", "all"), default="held")
    parser.add_argument("--limit", type=int, default=5, help="sessions in the week (default 5)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.source, args.data, args.repo, args.part, args.limit)
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render(result))


if __name__ == "__main__":
    main()
