"""Every hook event as the host runs it (one process per call), and the cold first prompt.

    nice .venv/bin/python benchmarks/hook_events_bench.py [--n 2000] [--runs 10] [--label after]

Issue #18's targets: each hook p50 ≤ 100 ms as a process at 2,000 memories, and the first
prompt of a fresh session (hooks only: the daemon is started by ``session-start`` a moment
before) ≤ 400 ms. For N synthetic memories (``benchmarks/scale.py``) this times, wall clock
around ``subprocess.run`` of the real console script, with the memory dir's search index built
once beforehand (not timed):
- with the recall daemon up: ``session-start``, ``user-prompt-submit``, ``stop`` (a one-turn
  transcript: the extraction worker it starts runs after the hook returned), ``pre-compact``,
  ``session-end``; each call a new session id, started once the workers of the call before
  have finished (a host stops once per turn: seven stops a second would time the pile-up);
- the same events with ``MEMDIR_HOOK_DAEMON=0`` (the full CLI every time: the baseline);
- cold: no daemon; ``session-start`` (which starts one), then at once ``user-prompt-submit``;
  the daemon is stopped before each pair. Twice: as an interactive session (a person waits:
  the prompt is answered at once, recall comes with the next prompt) and as ``claude -p``
  (``CLAUDE_CODE_SESSION_ATTENDED=0``: the prompt waits for the daemon's load).
Run it against any checkout (``PYTHONPATH=<checkout>/src``) to compare before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, percentile, table
from hook_bench import MEMDIR, timed
from memdir.adapters import recall_client
from scale import generate

EVENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "session-start": ("SessionStart", {"source": "startup"}),
    "user-prompt-submit": ("UserPromptSubmit", {"prompt": "how do we deploy the service"}),
    "stop": ("Stop", {"stop_hook_active": False}),
    "pre-compact": ("PreCompact", {"trigger": "auto", "custom_instructions": None}),
    "session-end": ("SessionEnd", {"reason": "other"}),
}


def transcript(path: Path, session: str) -> None:
    """A one-turn session transcript (the host's JSONL shape) for stop / pre-compact."""
    stamp = "2026-01-01T00:00:00.000Z"
    user = {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "parentUuid": None,
        "sessionId": session,
        "timestamp": stamp,
        "message": {"role": "user", "content": "how do we deploy?"},
    }
    reply = {
        "type": "assistant",
        "uuid": str(uuid.uuid4()),
        "parentUuid": user["uuid"],
        "sessionId": session,
        "timestamp": stamp,
        "message": {"role": "assistant", "content": [{"type": "text", "text": "fly.io"}]},
    }
    path.write_text(json.dumps(user) + "\n" + json.dumps(reply) + "\n")  # fmt: skip


def payload(event: str, project: Path, workdir: Path) -> str:
    session = str(uuid.uuid4())
    path = workdir / "transcripts" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    transcript(path, session)
    host_name, extra = EVENTS[event]
    body = {"session_id": session, "transcript_path": str(path), "cwd": str(project),
            "hook_event_name": host_name, **extra}  # fmt: skip
    return json.dumps(body)


WORKERS = ("extract-worker", "end-worker", "notes-worker", "dream-worker")


def settle(limit: float = 60.0) -> None:
    """Wait until no memdir hook worker runs on this machine (a real host stops or ends a
    session once per turn, not seven times a second: workers must not pile up in the timing)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        running = False
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                running = running or any(w.encode() in cmdline for w in WORKERS)
        if not running:
            return
        time.sleep(0.05)


def daemon(base: list[str], env: dict[str, str], cwd: Path, action: str) -> None:
    subprocess.run([*base, "hook", "daemon", action], env=env, cwd=cwd, capture_output=True)


def measure(n: int, runs: int, workdir: Path) -> list[dict[str, Any]]:
    home, project, memory = workdir / "home", workdir / "project", workdir / "memory"
    for d in (home, project / ".git"):
        d.mkdir(parents=True, exist_ok=True)
    if not memory.exists():
        generate(memory, n)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMDIR_"))}
    env.update(HOME=str(home), MEMDIR_DAEMON_IDLE="600")
    base = [*MEMDIR, "--dir", str(memory)]
    subprocess.run([*base, "recall", "warm up the index"], env=env, cwd=project,
                   capture_output=True)  # fmt: skip
    rows: list[dict[str, Any]] = []
    full = {**env, "MEMDIR_HOOK_DAEMON": "0"}
    for event in EVENTS:
        calls = [
            timed([*base, "hook", event], full, project, payload(event, project, workdir))
            for _ in range(runs)
        ]
        rows.append({"case": f"{event}, full CLI (no daemon)", "ms": calls})
    daemon(base, env, project, "start")
    timed(
        [*base, "hook", "user-prompt-submit"],
        env,
        project,
        payload("user-prompt-submit", project, workdir),
    )  # fmt: skip  (loads the index)
    for event in EVENTS:
        calls = []
        for _ in range(runs):
            settle()  # each call alone: the last one's detached worker has finished
            calls.append(
                timed([*base, "hook", event], env, project, payload(event, project, workdir))
            )
        rows.append({"case": f"{event}, daemon up", "ms": calls})
    sock = recall_client.socket_path(home / ".memdir")
    stamp = sock.with_name(sock.name + ".spawned")
    # what Claude Code tells its hooks: a person at the terminal, or `claude -p`
    for attended, who in (("1", "interactive"), ("0", "claude -p")):
        cold_env = {**env, "CLAUDE_CODE_SESSION_ATTENDED": attended}
        cold_start, cold_prompt = [], []
        for _ in range(runs):
            daemon(base, env, project, "stop")
            time.sleep(1.0)  # let it exit and release the socket
            stamp.unlink(missing_ok=True)  # truly cold: no daemon started in the last seconds
            start = payload("session-start", project, workdir)
            cold_start.append(timed([*base, "hook", "session-start"], cold_env, project, start))
            prompt = payload("user-prompt-submit", project, workdir)
            cold_prompt.append(
                timed([*base, "hook", "user-prompt-submit"], cold_env, project, prompt)
            )
        daemon(base, env, project, "stop")
        rows.append({"case": f"cold ({who}): session-start (starts the daemon)", "ms": cold_start})
        rows.append({"case": f"cold ({who}): the first prompt right after it", "ms": cold_prompt})
    for row in rows:
        row["n"] = n
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--label", default="")
    parser.add_argument("--keep", type=Path, help="reuse (and keep) memories and indexes here")
    args = parser.parse_args(argv)
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="memdir-hook-events-"))
    try:
        rows = measure(args.n, args.runs, workdir)
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    body = [
        [r["n"], r["case"], len(r["ms"]), percentile(r["ms"], 50), percentile(r["ms"], 95)]
        for r in rows
    ]
    text = table(body, ["memories", "hook (one process per call)", "n", "p50 ms", "p95 ms"])
    load = os.getloadavg()
    print(
        f"{args.label}\nCommand: `nice .venv/bin/python benchmarks/hook_events_bench.py "
        f"--n {args.n} --runs {args.runs}`  \nMachine: {machine()}; load average at the end "
        f"{load[0]:.1f}.\n\n{text}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
