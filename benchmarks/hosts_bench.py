"""Every host's hooks as the host runs them, and what memdir adds to a real ``codex exec``.

    nice .venv/bin/python benchmarks/hosts_bench.py [--n 2000] [--runs 10] [--exec-runs 5]

Issue #27's targets: per host, at 2,000 memories with the recall daemon up, every hook p50
≤ 100 ms as a process; ``codex exec`` with memdir installed (hooks + MCP) within +0.5 s of bare
(median of 5, same run).

1. Hooks: for each host (``claude-code``, ``codex``, ``gemini``, ``cursor``) and each event, the
   real console script ``memdir hook [--host codex] <event>`` as one process per call, the
   host's own hook JSON on stdin and a one-turn transcript in the host's own format (Claude
   Code's JSONL, Codex's rollout, Gemini CLI's session file, Cursor's agent transcript); Gemini's
   ``BeforeAgent`` on a new session carries the session start (its start waits for the first
   prompt), N synthetic memories (``benchmarks/scale.py``), the
   search index built once first (not timed); each call starts once the workers of the call
   before have finished. Cursor's project is a real git repository with commits (its session
   start recalls on them) and the size of the rules file it keeps is reported.
2. ``codex exec`` (the pinned CLI of tests/realhost, against the fake Responses API on
   127.0.0.1, isolated HOME): bare, then with ``memdir install codex --project`` trusted as a
   user would; one untimed run each first (the daemon's start, Codex's first-run files).
3. ``gemini -p`` likewise (the pinned CLI against the fake Gemini API), bare and with
   ``memdir install gemini --project``.
4. OpenCode (issue #28): its plugin's forwarded events and ``opencode run`` bare against with the
   plugin, as ``benchmarks/opencode_bench.py`` measures them alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the harness in tests/realhost
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, percentile, table
from hook_bench import MEMDIR, timed
from hook_events_bench import daemon, settle
from hook_events_bench import payload as claude_payload
from opencode_bench import EVENT_HEAD, RUN_HEAD, opencode_run
from opencode_bench import events as opencode_events
from scale import generate

CODEX_EVENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "session-start": ("SessionStart", {"source": "startup", "permission_mode": "default"}),
    "user-prompt-submit": ("UserPromptSubmit", {"prompt": "how do we deploy the service"}),
    "stop": ("Stop", {"stop_hook_active": False, "last_assistant_message": "fly.io"}),
    "pre-compact": ("PreCompact", {"trigger": "auto"}),
    "session-end": ("SessionEnd", {"reason": "other"}),
}


def rollout(path: Path, session: str) -> None:
    """A one-turn Codex rollout (the line shapes Codex 0.171 writes)."""

    def line(n: int, role: str, text: str, kind: str) -> str:
        part = "output_text" if role == "assistant" else "input_text"
        meta = {"content_item_kinds": [kind]}
        payload = {"type": "message", "role": role, "content": [{"type": part, "text": text}],
                   "internal_chat_message_metadata_passthrough": meta}  # fmt: skip
        row = {"timestamp": "2026-01-01T00:00:00.000Z", "ordinal": n, "type": "response_item",
               "payload": payload}  # fmt: skip
        return json.dumps(row)

    meta = {"timestamp": "2026-01-01T00:00:00.000Z", "ordinal": 0, "type": "session_meta",
            "payload": {"id": session}}  # fmt: skip
    lines = [json.dumps(meta), line(1, "user", "how do we deploy?", "user.text"),
             line(2, "assistant", "fly.io", "unknown")]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")


def codex_payload(event: str, project: Path, home: Path) -> str:
    session = str(uuid.uuid4())
    path = home / ".codex" / "sessions" / "2026" / "01" / "01" / f"rollout-{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    rollout(path, session)
    name, extra = CODEX_EVENTS[event]
    body = {"session_id": session, "turn_id": session, "transcript_path": str(path),
            "cwd": str(project), "hook_event_name": name, "model": "gpt-5", **extra}  # fmt: skip
    return json.dumps(body)


CURSOR_EVENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "session-start": ("sessionStart", {"is_background_agent": False, "composer_mode": "agent"}),
    "stop": ("stop", {"status": "completed", "loop_count": 0}),
    "pre-compact": ("preCompact", {"trigger": "auto", "context_usage_percent": 85}),
    "session-end": ("sessionEnd", {"reason": "completed", "duration_ms": 60_000}),
}


def cursor_payload(event: str, project: Path, home: Path) -> str:
    """The documented hook JSON (no Cursor binary here) and a one-turn agent transcript."""
    session = str(uuid.uuid4())
    path = home / ".cursor" / "projects" / "project" / "agent-transcripts" / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    turns = [("user", "<user_query>\nhow do we deploy?\n</user_query>"), ("assistant", "fly.io")]
    rows = [{"role": r, "message": {"content": [{"type": "text", "text": t}]}} for r, t in turns]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    name, extra = CURSOR_EVENTS[event]
    body = {"conversation_id": session, "session_id": session, "generation_id": session,
            "hook_event_name": name, "workspace_roots": [str(project)],
            "transcript_path": str(path), "model": "claude-4.5-sonnet", **extra}  # fmt: skip
    return json.dumps(body)


GEMINI_EVENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "session-start": ("SessionStart", {"source": "startup"}),
    "user-prompt-submit": ("BeforeAgent", {"prompt": "how do we deploy the service"}),
    "stop": ("AfterAgent", {"prompt": "how do we deploy?", "prompt_response": "fly.io"}),
    "pre-compact": ("PreCompress", {"trigger": "auto"}),
    "session-end": ("SessionEnd", {"reason": "exit"}),
}


def gemini_payload(event: str, project: Path, home: Path, session: str | None = None) -> str:
    """Gemini CLI 0.61's hook JSON and a one-turn session file (JSONL) where it keeps them."""
    session = session or str(uuid.uuid4())
    chats = home / ".gemini" / "tmp" / "project" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    path = chats / f"session-2026-01-01T00-00-{session[:8]}.jsonl"
    stamp = "2026-01-01T00:00:00.000Z"
    rows = [{"sessionId": session, "startTime": stamp},
            {"id": "u-0", "timestamp": stamp, "type": "user",
             "content": [{"text": "how do we deploy?"}]},
            {"id": "g-0", "timestamp": stamp, "type": "gemini", "content": "fly.io"}]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    name, extra = GEMINI_EVENTS[event]
    body = {"session_id": session, "transcript_path": str(path), "cwd": str(project),
            "hook_event_name": name, "timestamp": stamp, **extra}  # fmt: skip
    return json.dumps(body)


def git_project(project: Path) -> None:
    """A repository with a branch and commits, as a Cursor workspace has."""
    if (project / ".git" / "HEAD").exists():
        return

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)

    project.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "feature/deploy-pipeline")
    git("config", "user.email", "bench@example.com")
    git("config", "user.name", "bench")
    for n, subject in enumerate(["Deploy the API with make ship", "Retry failed deploys",
                                 "Document the staging database port"]):  # fmt: skip
        (project / f"file{n}.py").write_text(f"x = {n}\n")
        git("add", "-A")
        git("commit", "-qm", subject)


def hooks(n: int, runs: int, workdir: Path) -> list[list[Any]]:
    home, project, memory = workdir / "home", workdir / "project", workdir / "memory"
    for d in (home, project / ".git"):
        d.mkdir(parents=True, exist_ok=True)
    if not memory.exists():
        generate(memory, n)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMDIR_"))}
    env.update(HOME=str(home), MEMDIR_DAEMON_IDLE="600", MEMDIR_HOST_MODEL="off")
    base = [*MEMDIR, "--dir", str(memory)]
    subprocess.run([*base, "recall", "warm up the index"], env=env, cwd=project,
                   capture_output=True)  # fmt: skip
    daemon(base, env, project, "start")
    cursor_project = workdir / "cursor-project"
    git_project(cursor_project)
    rows: list[list[Any]] = []
    for host in ("claude-code", "codex", "gemini", "cursor"):
        flag = [] if host == "claude-code" else ["--host", host]
        for event in CURSOR_EVENTS if host == "cursor" else CODEX_EVENTS:
            calls = []
            for _ in range(runs + 1):
                settle()
                if host == "claude-code":
                    body = claude_payload(event, project, workdir)
                elif host == "codex":
                    body = codex_payload(event, project, home)
                elif host == "gemini":
                    body = gemini_payload(event, project, home)
                    if event == "user-prompt-submit":  # the start waits for the first prompt
                        started = json.loads(body)["session_id"]
                        start = gemini_payload("session-start", project, home, started)
                        timed([*base, "hook", *flag, "session-start"], env, project, start)
                        settle()
                else:
                    body = cursor_payload(event, cursor_project, home)
                calls.append(timed([*base, "hook", *flag, event], env, project, body))
            calls = calls[1:]  # the first call of each event warms what it loads
            rows.append([n, host, event, len(calls), percentile(calls, 50), percentile(calls, 95)])
    # the rules file at full size: the synthetic memories come without MEMORY.md, a user's do not
    subprocess.run([*base, "index", "rebuild"], env=env, cwd=project, capture_output=True)
    settle()
    timed([*base, "hook", "--host", "cursor", "stop"], env, project,
          cursor_payload("stop", cursor_project, home))  # fmt: skip
    daemon(base, env, project, "stop")
    rules = cursor_project / ".cursor" / "rules" / "memdir.mdc"
    size = len(rules.read_text()) if rules.is_file() else 0
    rows.append([n, "cursor", "rules file (chars, every request)", 1, size, size])
    return rows


def bare_against_memdir(run: dict[str, Callable[[str], object]], runs: int) -> list[list[Any]]:
    """Each host (``bare`` first) once untimed — the daemon's start, the host's first-run
    files — then ``runs`` timed prompts; rows with the median added over bare."""
    rows: list[list[Any]] = []
    medians: dict[str, float] = {}
    for label, prompt in run.items():
        prompt("warm up")
        times = []
        for i in range(runs):
            settle()
            started = time.perf_counter()
            prompt(f"how do we deploy the service? ({i})")
            times.append(time.perf_counter() - started)
        medians[label] = statistics.median(times)
        added = medians[label] - medians["bare"]
        rows.append([label, runs, f"{medians[label]:.2f}", f"{min(times):.2f}",
                     f"{added:+.2f}"])  # fmt: skip
    return rows


def codex_exec(runs: int, workdir: Path) -> list[list[Any]]:
    from tests.realhost.codex_host import MISSING_CLI, CodexHost, find_cli
    from tests.realhost.fake_openai import FakeOpenAI

    cli = find_cli()
    if cli is None:
        raise SystemExit(MISSING_CLI)
    with FakeOpenAI() as api:
        bare = CodexHost(cli=cli, api=api, root=workdir / "bare")
        with_memdir = CodexHost(cli=cli, api=api, root=workdir / "memdir")
        for same in (bare, with_memdir):  # both in a repository: the host reads git either way
            subprocess.run(["git", "init", "-q", str(same.project)], check=True)
        with_memdir.extra_env["MEMDIR_HOST_MODEL"] = "off"
        with_memdir.memdir("install", "codex", "--project")
        with_memdir.trust_project()
        with_memdir.trust_hooks()
        try:
            return bare_against_memdir({"bare": bare.exec, "hooks + MCP": with_memdir.exec}, runs)
        finally:
            with_memdir.stop_daemon()


def gemini_run(runs: int, workdir: Path) -> list[list[Any]]:
    from tests.realhost.fake_gemini import FakeGemini
    from tests.realhost.gemini_host import MISSING_CLI, GeminiHost, find_cli

    cli = find_cli()
    if cli is None:
        raise SystemExit(MISSING_CLI)
    with FakeGemini() as api:
        bare = GeminiHost(cli=cli, api=api, root=workdir / "bare")
        with_memdir = GeminiHost(cli=cli, api=api, root=workdir / "memdir")
        for same in (bare, with_memdir):  # both in a repository: the host reads git either way
            subprocess.run(["git", "init", "-q", str(same.project)], check=True)
        with_memdir.extra_env["MEMDIR_HOST_MODEL"] = "off"
        with_memdir.memdir("install", "gemini", "--project")
        try:
            return bare_against_memdir(
                {"bare": bare.prompt, "hooks + MCP": with_memdir.prompt}, runs
            )
        finally:
            with_memdir.stop_daemon()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--exec-runs", type=int, default=5)
    parser.add_argument(
        "--workdir",
        type=Path,
        help="keep the memories, index and caches here and reuse them (a second run measures "
        "a memory dir whose index is complete, not one still being built)",
    )
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="memdir-hosts-"))
    try:
        hook_rows = hooks(args.n, args.runs, workdir / "hooks")
        exec_rows = codex_exec(args.exec_runs, workdir / "exec") if args.exec_runs else []
        gemini_rows = gemini_run(args.exec_runs, workdir / "gemini") if args.exec_runs else []
        opencode_rows = opencode_events(args.n, args.runs, workdir / "opencode")
        run_rows = opencode_run(args.exec_runs, workdir / "opencode-run") if args.exec_runs else []
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    head = ["memories", "host", "hook (one process, daemon up)", "n", "p50 ms", "p95 ms"]
    load = os.getloadavg()
    kept = f" --workdir {args.workdir}" if args.workdir else ""
    execs = table(exec_rows, ["codex exec", "runs", "median s", "min s", "added over bare s"])
    geminis = table(gemini_rows, ["gemini -p", "runs", "median s", "min s", "added over bare s"])
    print(
        f"Command: `nice .venv/bin/python benchmarks/hosts_bench.py --n {args.n} --runs "
        f"{args.runs} --exec-runs {args.exec_runs}{kept}`  \nMachine: {machine()}; load average "
        f"at the end {load[0]:.1f}.\n\n{table(hook_rows, head)}"
        + (f"\n\n{execs}" if exec_rows else "")
        + (f"\n\n{geminis}" if gemini_rows else "")
        + f"\n\n{table(opencode_rows, EVENT_HEAD)}"
        + (f"\n\n{table(run_rows, RUN_HEAD)}" if run_rows else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
