"""What memdir adds to one prompt in every host that runs here, bare and installed side by side.

    nice .venv/bin/python benchmarks/prompt_overhead.py [--runs 5] [--n 200] [--hosts ...]

Issue #38's target: per-prompt wall overhead ≤ +0.2 s over bare in every host (one-shot, warm).
For each host — Claude Code, Codex CLI, Gemini CLI, OpenCode, Qwen Code, Copilot CLI, pi, Cline
(the pinned real CLIs of ``tests/realhost``, each against its local fake model API) — two
sandboxes: **bare** (no memdir) and **memdir** (``memdir install <host> --project`` with the
user's trust step, N synthetic memories, the recall daemon up). One untimed prompt in each first
(the daemon's start, the host's first-run files); then ``--runs`` one-shot prompts, bare and
memdir **interleaved** (so a busy moment of the machine hits both), each after the workers of
the prompt before have finished. Reported per host: the median and min wall time of each, the
median added over bare, and where memdir's part goes: the hook handlers' own time as the hook
log records it (recall, ranking, the session start), summed per prompt; the rest of the added
time is process starts, the daemon round trip and the host's own handling of the hooks.
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the harness in tests/realhost
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, table
from hook_events_bench import settle
from scale import generate

HOSTS = ("claude-code", "codex", "gemini", "opencode", "qwen", "copilot", "pi", "cline")
PROMPT = "how do we deploy the billing service to production? ({})"


def _git(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)


@contextmanager
def sandboxes(host: str, root: Path) -> Iterator[tuple[Any, Any, Callable[[Any, str], object]]]:
    """(bare user, memdir user, prompt(user, text)) of ``host``, each with its own fake API."""
    with ExitStack() as stack:
        if host == "claude-code":
            from tests.realhost.fakeapi import FakeAnthropic
            from tests.realhost.host import ClaudeHost, find_cli

            users = [
                ClaudeHost(
                    cli=_need(find_cli()), api=stack.enter_context(FakeAnthropic()), root=root / w
                )
                for w in ("bare", "memdir")
            ]
            run: Callable[[Any, str], object] = lambda u, t: u.prompt(t)  # noqa: E731
        elif host == "codex":
            from tests.realhost.codex_host import CodexHost, find_cli
            from tests.realhost.fake_openai import FakeOpenAI

            users = [
                CodexHost(
                    cli=_need(find_cli()), api=stack.enter_context(FakeOpenAI()), root=root / w
                )
                for w in ("bare", "memdir")
            ]
            run = lambda u, t: u.exec(t)  # noqa: E731
        elif host == "gemini":
            from tests.realhost.fake_gemini import FakeGemini
            from tests.realhost.gemini_host import GeminiHost, find_cli

            users = [
                GeminiHost(
                    cli=_need(find_cli()), api=stack.enter_context(FakeGemini()), root=root / w
                )
                for w in ("bare", "memdir")
            ]
            run = lambda u, t: u.prompt(t)  # noqa: E731
        elif host == "opencode":
            from tests.realhost.fake_openai import FakeOpenAI
            from tests.realhost.opencode_host import OpenCodeHost, find_cli

            users = [
                OpenCodeHost(
                    cli=_need(find_cli()), api=stack.enter_context(FakeOpenAI()), root=root / w
                )
                for w in ("bare", "memdir")
            ]
            run = lambda u, t: u.prompt(t)  # noqa: E731
        else:
            from tests.realhost.fake_openai import FakeOpenAI
            from tests.realhost.npm_host import KINDS, NpmHost

            kind = KINDS[host]
            users = [
                NpmHost(
                    kind=kind,
                    cli=_need(kind.find_cli()),
                    api=stack.enter_context(FakeOpenAI()),
                    root=root / w,
                )
                for w in ("bare", "memdir")
            ]
            run = lambda u, t: u.prompt(t)  # noqa: E731
        bare, with_memdir = users
        for user in users:
            _git(user.project)
        with_memdir.extra_env["MEMDIR_HOST_MODEL"] = "off"
        with_memdir.memdir("install", host, "--project")
        for step in ("trust_project", "trust_hooks", "allow_project_mcp"):
            if hasattr(with_memdir, step):
                getattr(with_memdir, step)()
        generate(with_memdir.memory_dir(), N_MEMORIES[0])
        with_memdir.memdir("recall", "warm up the index")  # builds the search index
        # a warm daemon's index is read by the model in full (its background fill, persisted):
        # the state of a dir a few minutes after its memories last changed
        with_memdir.memdir("reindex")
        try:
            yield bare, with_memdir, run
        finally:
            with_memdir.stop_daemon()


N_MEMORIES = [200]


def _need(cli: Path | None) -> Path:
    if cli is None:
        raise SystemExit("a host CLI is missing: run `bash scripts/install-test-deps.sh`")
    return cli


def _handler_ms(user: Any, since: float) -> float:
    """The hook handlers' own time (ms) the hook log records after ``since``."""
    rows = user.hook_log()
    return sum(float(r.get("ms") or 0) for r in rows if float(r.get("ts") or 0) >= since)


def measure(host: str, runs: int, root: Path) -> list[Any]:
    with sandboxes(host, root) as (bare, with_memdir, run):
        run(bare, "warm up, please")
        run(with_memdir, "warm up, please")
        times: dict[str, list[float]] = {"bare": [], "memdir": []}
        handler: list[float] = []
        for i in range(runs):
            for label, user in (("bare", bare), ("memdir", with_memdir)):
                settle()
                since = time.time()
                started = time.perf_counter()
                run(user, PROMPT.format(i))
                times[label].append(time.perf_counter() - started)
                if label == "memdir":
                    settle()
                    handler.append(_handler_ms(user, since))
        b, m = statistics.median(times["bare"]), statistics.median(times["memdir"])
        ms = statistics.median(handler)
        return [
            host, runs, f"{b:.2f}", f"{min(times['bare']):.2f}", f"{m:.2f}",
            f"{min(times['memdir']):.2f}", f"{m - b:+.2f}", f"{ms:.0f}",
        ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n", type=int, default=200, help="memories in the memdir sandbox")
    parser.add_argument("--hosts", nargs="*", default=list(HOSTS), choices=HOSTS)
    args = parser.parse_args(argv)
    N_MEMORIES[0] = args.n
    workdir = Path(tempfile.mkdtemp(prefix="memdir-overhead-"))
    rows = []
    try:
        for host in args.hosts:
            rows.append(measure(host, args.runs, workdir / host))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    head = [
        "host", "runs", "bare median s", "bare min s", "memdir median s", "memdir min s",
        "added (median) s", "hook handlers ms / prompt",
    ]  # fmt: skip
    load = os.getloadavg()
    print(
        f"Command: `nice .venv/bin/python benchmarks/prompt_overhead.py --runs {args.runs} "
        f"--n {args.n}`  \nMachine: {machine()}; load average at the end {load[0]:.1f}.\n\n"
        + table(rows, head)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
