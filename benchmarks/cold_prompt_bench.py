"""The first prompt after a cold start: does it carry what a warm daemon would give it, and when?

    nice .venv/bin/python benchmarks/cold_prompt_bench.py [--runs 20] [--sizes 200,2000]
        [--hosts claude,codex,gemini,opencode] [--host-memories 200]

Issue #37's targets: in the real CLIs, >= 19/20 cold first prompts carry the warm answer's top
memory; a cold hook's wall time (process start included) <= 0.5 s p50 on this 2-core machine.

1. Hooks as processes (the console script, Claude Code's hook JSON), N synthetic memories
   (``benchmarks/scale.py``), search index built once first. For each of ``--runs`` queries (the
   first words of random memories' descriptions): the warm answer (daemon up, a new session:
   the first memory the hook injected), then cold: the daemon stopped, ``session-start`` (which
   starts one), at once ``user-prompt-submit`` — its wall clock, and whether it injected the
   warm answer's top memory. The same with no daemon at all (``MEMDIR_HOOK_DAEMON=0``: the hook
   recalls in-process) as the baseline of what a cold process costs.
2. The real CLIs (the pinned ones of tests/realhost, each against its local fake model API, an
   isolated HOME, ``memdir install <host> --project`` as a user would, the default cold wait):
   ``claude -p``, ``codex exec``, ``gemini -p``, ``opencode run``. Each query once warm, then
   once after stopping the daemon; carried = the cold run's hook injected the warm run's top
   memory and the model's request holds that memory's text.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
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

from common import machine, percentile, table, update_docs_section
from hook_bench import MEMDIR
from memdir.adapters import recall_client
from scale import generate


def _hook(
    base: list[str], event: str, body: dict[str, Any], env: dict[str, str], cwd: Path
) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        [*base, "hook", event],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        raise RuntimeError(proc.stderr[-2000:])
    return (time.perf_counter() - started) * 1000


def _last_injected(log: list[dict[str, Any]], session: str) -> list[str]:
    rows = [r for r in log if r.get("session") == session and r["event"] == "user-prompt-submit"]
    return list(rows[-1].get("injected") or []) if rows else []


def _log(base: list[str], env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [*base, "--json", "hook", "log", "--full", "--limit", "5000"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    ).stdout
    return list(json.loads(out))


def _stop(base: list[str], env: dict[str, str], cwd: Path, home: Path) -> None:
    subprocess.run([*base, "hook", "daemon", "stop"], env=env, cwd=cwd, capture_output=True)
    sock = recall_client.socket_path(home / ".memdir")
    deadline = time.monotonic() + 10
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    sock.with_name(sock.name + ".spawned").unlink(missing_ok=True)  # truly cold


def hooks(n: int, runs: int, workdir: Path) -> list[dict[str, Any]]:
    home, project, memory = workdir / "home", workdir / "project", workdir / "memory"
    for d in (home, project / ".git"):
        d.mkdir(parents=True, exist_ok=True)
    descriptions = generate(memory, n)
    rng = random.Random(n)
    queries = [" ".join(rng.choice(descriptions).split()[:6]) for _ in range(runs)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMDIR_"))}
    env.update(HOME=str(home), MEMDIR_DAEMON_IDLE="600")
    base = [*MEMDIR, "--dir", str(memory)]
    subprocess.run([*base, "reindex"], env=env, cwd=project, capture_output=True)

    def body(event: str, session: str, **extra: Any) -> dict[str, Any]:
        names = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit"}
        return {
            "session_id": session,
            "transcript_path": str(workdir / "none.jsonl"),
            "cwd": str(project),
            "hook_event_name": names[event],
            **extra,
        }

    subprocess.run([*base, "hook", "daemon", "start"], env=env, cwd=project, capture_output=True)
    sessions = [str(uuid.uuid4()) for _ in queries]
    _hook(
        base, "user-prompt-submit", body("user-prompt-submit", "w", prompt="warm up"), env, project
    )
    for q, s in zip(queries, sessions, strict=True):
        _hook(base, "user-prompt-submit", body("user-prompt-submit", s, prompt=q), env, project)
    log = _log(base, env, project)
    warm_top = [(_last_injected(log, s) or [None])[0] for s in sessions]
    rows: list[dict[str, Any]] = []

    def fresh() -> None:  # a new memdir home: no index, no static table (the hook log stays)
        derived = [*(home / ".memdir" / "cache").glob("*/search"), home / ".memdir/cache/models"]
        deadline = time.monotonic() + 10
        while any(d.exists() for d in derived):  # a stopping daemon may still be saving
            for d in derived:
                shutil.rmtree(d, ignore_errors=True)
            if time.monotonic() > deadline:
                raise RuntimeError(f"cannot clear {derived}")
            time.sleep(0.1)

    def installed(pause: float) -> Callable[[], None]:
        def run() -> None:  # ... and `memdir install` ran `pause` s before (it starts the build)
            fresh()
            subprocess.run(
                [*base, "install", "claude-code", "--project"],
                env=env, cwd=project, capture_output=True, check=True,
            )  # fmt: skip
            time.sleep(pause)

        return run

    cases: list[tuple[str, dict[str, str], Callable[[], None] | None]] = [
        ("daemon started by session-start", {}, None),
        ("no daemon (in-process recall)", {"MEMDIR_HOOK_DAEMON": "0"}, None),
        ("fresh install: no index on disk yet", {}, fresh),
        ("fresh install, `memdir install` just ran", {}, installed(0.0)),
        ("fresh install, `memdir install` 10 s before", {}, installed(10.0)),
    ]
    wanted = os.environ.get("COLD_BENCH_CASES", "")  # e.g. "1,2": only those rows (A/B runs)
    if wanted:
        cases = [cases[int(i) - 1] for i in wanted.split(",")]
    for label, extra, before in cases:
        walls, carried, cold_sessions = [], 0, []
        for q in queries:
            _stop(base, env, project, home)
            if before is not None:
                before()
            s = str(uuid.uuid4())
            cold_env = {**env, **extra}
            _hook(
                base, "session-start", body("session-start", s, source="startup"), cold_env, project
            )
            walls.append(
                _hook(
                    base,
                    "user-prompt-submit",
                    body("user-prompt-submit", s, prompt=q),
                    cold_env,
                    project,
                )
            )
            cold_sessions.append(s)
        log = _log(base, env, project)
        for top, s in zip(warm_top, cold_sessions, strict=True):
            carried += top is not None and top in _last_injected(log, s)
        rows.append(
            {
                "n": n,
                "case": label,
                "runs": runs,
                "carried": carried,
                "with_top": sum(t is not None for t in warm_top),
                "p50": percentile(walls, 50),
                "p95": percentile(walls, 95),
            }
        )
    _stop(base, env, project, home)
    return rows


# -- the real CLIs ---------------------------------------------------------------------------


def _host(name: str, root: Path, stack: list[Any]) -> tuple[Any, Callable[[str], object], Any]:
    """(host, one-shot run of a prompt, fake API) for ``name``, installed as a user would."""
    if name == "claude":
        from tests.realhost.fakeapi import FakeAnthropic
        from tests.realhost.host import ClaudeHost, find_cli

        api = FakeAnthropic().__enter__()
        host: Any = ClaudeHost(cli=_need(find_cli()), api=api, root=root)
        host.install()
        run: Callable[[str], object] = host.prompt
    elif name == "codex":
        from tests.realhost.codex_host import CodexHost
        from tests.realhost.codex_host import find_cli as codex_cli
        from tests.realhost.fake_openai import FakeOpenAI

        api = FakeOpenAI().__enter__()
        host = CodexHost(cli=_need(codex_cli()), api=api, root=root)
        host.memdir("install", "codex", "--project")
        host.trust_project()
        host.trust_hooks()
        run = host.exec
    elif name == "gemini":
        from tests.realhost.fake_gemini import FakeGemini
        from tests.realhost.gemini_host import GeminiHost
        from tests.realhost.gemini_host import find_cli as gemini_cli

        api = FakeGemini().__enter__()
        host = GeminiHost(cli=_need(gemini_cli()), api=api, root=root)
        host.memdir("install", "gemini", "--project")
        run = host.prompt
    else:
        from tests.realhost.fake_openai import FakeOpenAI
        from tests.realhost.opencode_host import OpenCodeHost
        from tests.realhost.opencode_host import find_cli as opencode_cli

        api = FakeOpenAI().__enter__()
        host = OpenCodeHost(cli=_need(opencode_cli()), api=api, root=root)
        host.memdir("install", "opencode", "--project")
        run = host.prompt
    stack.append(api)
    return host, run, api


def _need(cli: Path | None) -> Path:
    if cli is None:
        raise SystemExit("a host CLI is missing: run scripts/install-test-deps.sh first")
    return cli


def real_cli(name: str, runs: int, n: int, workdir: Path) -> dict[str, Any]:
    root = workdir / name
    stack: list[Any] = []
    (root / "project").mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root / "project")], check=True)
    try:
        host, run, api = _host(name, root, stack)
        host.extra_env["MEMDIR_RECALL_COLD_WAIT"] = ""  # the default: what users get
        host.extra_env["MEMDIR_HOST_MODEL"] = "off"
        host.extra_env["MEMDIR_DAEMON_IDLE"] = "600"
        memory = host.memory_dir()
        descriptions = generate(memory / "bench", n)
        host.memdir("index", "rebuild")
        host.memdir("reindex")
        rng = random.Random(n + 1)
        queries = [" ".join(rng.choice(descriptions).split()[:6]) for _ in range(runs)]
        # the warm answers: the daemon up, one run per query
        host.memdir("hook", "daemon", "start")
        run("warm up the recall daemon please")
        warm_top = []
        for q in queries:
            before = len(host.hook_log())
            run(q)
            rows = [r for r in host.hook_log()[before:] if r["event"] == "user-prompt-submit"]
            warm_top.append(((rows[-1].get("injected") or [None]) if rows else [None])[0])
        carried = in_request = 0
        hook_ms = []
        for q, top in zip(queries, warm_top, strict=True):
            host.stop_daemon()
            _stop([str(host.bin / "memdir")], host.env, host.project, host.home)
            api.clear()
            before = len(host.hook_log())
            run(q)
            rows = [r for r in host.hook_log()[before:] if r["event"] == "user-prompt-submit"]
            injected = list(rows[-1].get("injected") or []) if rows else []
            hook_ms += [float(r["ms"]) for r in rows[-1:]]
            if top is not None and top in injected:
                carried += 1
                text = (memory / "bench").joinpath(*Path(top).parts[-2:]).read_text()
                body_line = text.strip().splitlines()[-1]
                requests = (
                    api.main_requests() if hasattr(api, "main_requests") else api.model_requests()
                )
                in_request += any(body_line in r.text() for r in requests)
        return {
            "host": name,
            "runs": runs,
            "with_top": sum(t is not None for t in warm_top),
            "carried": carried,
            "in_request": in_request,
            "hook_ms_p50": percentile(hook_ms, 50) if hook_ms else None,
        }
    finally:
        with contextlib.suppress(Exception):  # teardown of a benchmark
            host.stop_daemon()
        for api in stack:
            api.__exit__(None, None, None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sizes", default="200,2000")
    parser.add_argument("--hosts", default="claude,codex,gemini,opencode")
    parser.add_argument("--host-memories", type=int, default=200)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="memdir-cold-"))
    try:
        hook_rows = []
        for n in (int(x) for x in args.sizes.split(",") if x):
            hook_rows += hooks(n, args.runs, workdir / f"hooks-{n}")
        host_rows = [
            real_cli(h, args.runs, args.host_memories, workdir / "hosts")
            for h in args.hosts.split(",")
            if h
        ]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    first = table(
        [
            [
                r["n"],
                r["case"],
                r["runs"],
                f"{r['carried']}/{r['with_top']}",
                f"{r['p50']:.0f}",
                f"{r['p95']:.0f}",
            ]
            for r in hook_rows
        ],
        [
            "memories",
            "cold first prompt (one process per hook)",
            "runs",
            "carried the warm top memory",
            "prompt hook wall p50 ms",
            "p95 ms",
        ],
    )
    second = table(
        [
            [
                r["host"],
                r["runs"],
                f"{r['carried']}/{r['with_top']}",
                f"{r['in_request']}/{r['with_top']}",
                f"{r['hook_ms_p50']:.0f}" if r["hook_ms_p50"] is not None else "-",
            ]
            for r in host_rows
        ],
        [
            "real CLI, one-shot, cold daemon",
            "runs",
            "hook injected the warm top memory",
            "the model's request held it",
            "prompt hook ms p50 (in-hook)",
        ],
    )
    command = (
        f"nice .venv/bin/python benchmarks/cold_prompt_bench.py --runs {args.runs} "
        f"--sizes {args.sizes} --hosts {args.hosts} --host-memories {args.host_memories}"
    )
    load = os.getloadavg()[0]
    text = (
        f"Command: `{command}`  \nMachine: {machine()}; load average at the end "
        f"{load:.1f}.\n\n{first}\n\n{second}\n"
    )
    print(text)
    if not args.no_docs:
        update_docs_section("cold-prompt", text, title="Cold first prompt (issue #37)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
