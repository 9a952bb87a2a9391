"""OpenCode with memdir's plugin: each forwarded event, what the plugin adds to ``opencode run``.

    nice .venv/bin/python benchmarks/opencode_bench.py [--n 2000] [--runs 10] [--exec-runs 5]

Issue #28's targets: each forwarded event ≤ 100 ms p50 at 2,000 memories; a prompt with the
plugin within +0.5 s of bare (median of 5, same run). ``benchmarks/hosts_bench.py`` prints
these rows beside the other hosts'.

1. Events: the plugin file ``memdir install opencode`` writes, loaded by ``node`` (the runtime
   OpenCode's Bun stands in for) with a fake OpenCode client, N synthetic memories
   (``benchmarks/scale.py``), the recall daemon up and warm: each hook call timed inside node
   from the call to its return — ``chat.message`` (session start's context on the session's
   first message, then recall: timed on later messages), ``session.idle`` (the session's
   messages written, then ``stop``), ``experimental.session.compacting`` (``pre-compact``).
2. ``opencode run`` (the pinned CLI of tests/realhost, against the fake Chat Completions API on
   127.0.0.1, isolated HOME and XDG dirs): bare and with ``memdir install opencode --project``
   (plugin + MCP server), runs interleaved; one untimed run each first. Both projects are git
   repositories: OpenCode snapshots a repository's files on each run, so a bare run outside
   one would be faster for reasons that have nothing to do with memdir.
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the harness in tests/realhost
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, percentile, table
from hook_bench import MEMDIR, timed
from hook_events_bench import daemon, payload, settle
from scale import generate

DRIVER = """
const [plugin, directory, runs] = [process.argv[2], process.argv[3], Number(process.argv[4])]
const mod = await import(plugin)
const turn = (n, id) => [
  { info: { id: `msg_${n}u`, role: "user", time: { created: Date.now() } },
    parts: [{ id: `prt_${n}u`, type: "text", text: "how do we deploy the service?" }] },
  { info: { id: `msg_${n}a`, role: "assistant", time: { created: Date.now() } },
    parts: [{ id: `prt_${n}a`, type: "text", text: "with fly.io" }] },
]
const client = { session: { messages: async ({ path }) => ({ data: turn(1, path.id) }) } }
const hooks = await mod.MemdirPlugin({ client, directory })
const times = { "chat.message": [], "session.idle": [], "experimental.session.compacting": [] }
const time = async (name, call) => {
  const started = performance.now()
  await call()
  times[name].push(performance.now() - started)
}
const message = (id, n) => ({ message: { id: `msg_${n}` }, parts: [
  { id: `prt_${n}`, type: "text", text: `how do we deploy the service? (${n})`,
    messageID: `msg_${n}`, sessionID: id }] })
for (let i = 0; i <= runs; i++) {
  const id = `ses_bench${i}`
  await hooks.event({ event: { type: "session.created", properties: { sessionID: id } } })
  await hooks["chat.message"]({ sessionID: id }, message(id, 0))  // session start + recall
  await time("chat.message", () => hooks["chat.message"]({ sessionID: id }, message(id, 1)))
  await time("session.idle", () =>
    hooks.event({ event: { type: "session.idle", properties: { sessionID: id } } }))
  await new Promise((r) => setTimeout(r, 300))  // the extraction worker the stop started
  await time("experimental.session.compacting", () =>
    hooks["experimental.session.compacting"]({ sessionID: id }, { context: [] }))
  await new Promise((r) => setTimeout(r, 300))
}
for (const k of Object.keys(times)) times[k] = times[k].slice(1)  // the first warms what it loads
console.log(JSON.stringify(times))
"""
EVENT_OF = {
    "chat.message": "user-prompt-submit",
    "session.idle": "stop",
    "experimental.session.compacting": "pre-compact",
}


def events(n: int, runs: int, workdir: Path) -> list[list[Any]]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is needed to run the plugin (scripts/install-test-deps.sh)")
    home, project, memory = workdir / "home", workdir / "project", workdir / "memory"
    for d in (home, project / ".git"):
        d.mkdir(parents=True, exist_ok=True)
    if not memory.exists():
        generate(memory, n)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMDIR_"))}
    env.update(HOME=str(home), MEMDIR_DAEMON_IDLE="600", MEMDIR_HOST_MODEL="off")
    env.update(XDG_CONFIG_HOME=str(home / ".config"), MEMDIR_RECALL_COLD_WAIT="60")
    base = [*MEMDIR, "--dir", str(memory)]
    subprocess.run([*base, "recall", "warm up the index"], env=env, cwd=project,
                   capture_output=True)  # fmt: skip
    subprocess.run([*base, "install", "opencode", "--project"], env=env, cwd=project,
                   capture_output=True, check=True)  # fmt: skip
    daemon(base, env, project, "start")
    driver = workdir / "driver.mjs"
    driver.write_text(DRIVER)
    plugin = project / ".opencode" / "plugins" / "memdir.js"
    try:
        settle()
        proc = subprocess.run(
            [node, str(driver), str(plugin), str(project), str(runs)],
            env=env, cwd=project, capture_output=True, text=True, check=True, timeout=1800,
        )  # fmt: skip
        # the same run's yardstick: Claude Code's prompt hook, one process, same daemon
        reference = []
        for _ in range(runs + 1):
            settle()
            body = payload("user-prompt-submit", project, workdir)
            reference.append(timed([*base, "hook", "user-prompt-submit"], env, project, body))
    finally:
        daemon(base, env, project, "stop")
    times = json.loads(proc.stdout.splitlines()[-1])
    rows = [
        [n, f"{hook} ({EVENT_OF[hook]})", len(calls), percentile(calls, 50), percentile(calls, 95)]
        for hook, calls in times.items()
    ]
    calls = reference[1:]
    label = "reference: claude-code user-prompt-submit (a process)"
    return [*rows, [n, label, len(calls), percentile(calls, 50), percentile(calls, 95)]]


def opencode_run(runs: int, workdir: Path) -> list[list[Any]]:
    from tests.realhost.fake_openai import FakeOpenAI
    from tests.realhost.opencode_host import MISSING_CLI, OpenCodeHost, find_cli

    cli = find_cli()
    if cli is None:
        raise SystemExit(MISSING_CLI)
    rows: list[list[Any]] = []
    with FakeOpenAI() as api:
        bare = OpenCodeHost(cli=cli, api=api, root=workdir / "bare")
        with_memdir = OpenCodeHost(cli=cli, api=api, root=workdir / "memdir")
        for same in (bare, with_memdir):  # both in a repository: the host reads git either way
            subprocess.run(["git", "init", "-q", str(same.project)], check=True)
        with_memdir.extra_env["MEMDIR_HOST_MODEL"] = "off"
        with_memdir.memdir("install", "opencode", "--project")
        hosts = {"bare": bare, "plugin + MCP": with_memdir}
        times: dict[str, list[float]] = {label: [] for label in hosts}
        try:
            for host in hosts.values():
                host.prompt("warm up")  # untimed: the daemon's start, OpenCode's first-run files
            for i in range(runs):  # interleaved: a shared machine's load drifts during the run
                for label, host in hosts.items():
                    settle()
                    started = time.perf_counter()
                    host.prompt(f"how do we deploy the service? ({i})")
                    times[label].append(time.perf_counter() - started)
            bare_median = statistics.median(times["bare"])
            for label, taken in times.items():
                median = statistics.median(taken)
                rows.append([label, runs, f"{median:.2f}", f"{min(taken):.2f}",
                             f"{median - bare_median:+.2f}"])  # fmt: skip
        finally:
            with_memdir.stop_daemon()
    return rows


EVENT_HEAD = ["memories", "plugin hook (forwarded event)", "n", "p50 ms", "p95 ms"]
RUN_HEAD = ["opencode run", "runs", "median s", "min s", "added over bare s"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--exec-runs", type=int, default=5)
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="memdir-opencode-"))
    try:
        event_rows = events(args.n, args.runs, workdir / "events")
        run_rows = opencode_run(args.exec_runs, workdir / "run")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    load = os.getloadavg()
    print(
        f"Command: `nice .venv/bin/python benchmarks/opencode_bench.py --n {args.n} --runs "
        f"{args.runs} --exec-runs {args.exec_runs}`  \nMachine: {machine()}; load average at "
        f"the end {load[0]:.1f}.\n\n{table(event_rows, EVENT_HEAD)}\n\n{table(run_rows, RUN_HEAD)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
