"""What the ``claude-code`` provider costs per call, per extraction, and on the hook path.

    .venv/bin/python benchmarks/host_model_bench.py [--runs 8]

Everything runs against the fake Messages API on 127.0.0.1 (tests/realhost/fakeapi.py) with the
pinned Claude Code CLI (``scripts/install-test-deps.sh`` installs it), so the numbers are the
provider's own overhead — process start, the CLI's start-up, the relay — not a model's think time.
In one run:
- baseline: the same one-message request through ``AnthropicProvider`` (the SDK, in-process);
- ``claude-code``: time to the first assistant event (the first token reaching memdir) and end
  to end, for a plain call and for a tool loop (one tool call through the relay, then an answer);
- background extraction per turn: the hook worker's body on a two-message transcript, with the
  host model (a Write through memdir's tools) next to the offline rule extractor;
- the hook path: ``memdir hook stop`` and ``memdir hook user-prompt-submit`` as processes with
  the host model on and off. Stop only spawns the worker, so the host model must not move it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.realhost: the fake API

from tests.realhost.fakeapi import FakeAnthropic, Reply, ToolCall
from tests.realhost.host import DUMMY_KEY, QUIET_ENV, SRC, find_cli

import memdir.llm.base
from common import machine, percentile, table, update_docs_section
from memdir.llm import claude_code_io as io
from memdir.llm.base import CompletionRequest, Message
from memdir.llm.claude_code import ClaudeCodeProvider
from memdir.llm.ledger import CostLedger

REQUEST = CompletionRequest(system="Answer briefly.", messages=[Message("user", "hello")])


def child_env(api: FakeAnthropic, home: Path, cli: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": str(SRC),
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "MEMDIR_CLAUDE_CLI": str(cli),
        **QUIET_ENV,
    }


async def first_token_and_total(cli: Path, env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """The provider's child, timed: ms to the first assistant event and to the process end."""
    call = io.build_call(REQUEST, model="haiku", max_turns=1)
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        str(cli),
        *call.args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=io.child_env(env),
        cwd=str(cwd),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(call.prompt.encode())
    proc.stdin.close()
    first = 0.0
    while line := await proc.stdout.readline():
        if not first and json.loads(line).get("type") == "assistant":
            first = (time.perf_counter() - started) * 1000
    await proc.wait()
    return first, (time.perf_counter() - started) * 1000


def stats(values: list[float]) -> list[object]:
    return [len(values), round(percentile(values, 50), 1), round(percentile(values, 95), 1)]


def bench_calls(api: FakeAnthropic, cli: Path, tmp: Path, runs: int) -> list[list[object]]:
    from memdir.llm.anthropic_provider import AnthropicProvider
    from memdir.llm.base import ToolResultBlock, ToolSpec, ToolUseBlock

    env = child_env(api, tmp / "home", cli)
    rows: list[list[object]] = []

    async def sdk_calls() -> list[float]:
        sdk = AnthropicProvider("claude-haiku", api_key=DUMMY_KEY, base_url=api.base_url)
        out = []
        for _ in range(runs):
            started = time.perf_counter()
            await sdk.complete(REQUEST)
            out.append((time.perf_counter() - started) * 1000)
        await sdk.aclose()
        return out

    direct = asyncio.run(sdk_calls())
    rows.append(["baseline: AnthropicProvider (SDK, in-process), end to end", *stats(direct)])
    firsts, totals = [], []
    for _ in range(runs):
        first, total = asyncio.run(first_token_and_total(cli, env, tmp))
        firsts.append(first)
        totals.append(total)
    rows.append(["claude-code: process start to first token", *stats(firsts)])
    rows.append(["claude-code: plain call, process start to end", *stats(totals)])
    provider = ClaudeCodeProvider("haiku", env=env, cwd=tmp)
    ends = []
    for _ in range(runs):
        started = time.perf_counter()
        asyncio.run(provider.complete(REQUEST))
        ends.append((time.perf_counter() - started) * 1000)
    rows.append(["claude-code: provider.complete, end to end", *stats(ends)])

    async def execute(call: ToolUseBlock) -> ToolResultBlock:
        return ToolResultBlock(call.id, "ok")

    spec = ToolSpec("Echo", "echo", {"type": "object", "properties": {}})
    loops = []
    for _ in range(runs):
        api.script(Reply(tool_calls=(ToolCall("mcp__memdir__Echo", {}),)), "done")
        request = CompletionRequest(system="s", messages=[Message("user", "go")], tools=[spec])
        started = time.perf_counter()
        asyncio.run(provider.run_tool_loop(request, execute, max_turns=3))
        loops.append((time.perf_counter() - started) * 1000)
    rows.append(["claude-code: tool loop (1 relayed call + answer), end to end", *stats(loops)])
    return rows


def bench_extraction(api: FakeAnthropic, cli: Path, tmp: Path, runs: int) -> list[list[object]]:
    from memdir.extract.agent import AgentExtractor
    from memdir.extract.rule_extractor import RuleExtractor
    from memdir.store import MemoryStore

    env = child_env(api, tmp / "home", cli)
    said = [
        Message("user", "remember that we never mock the database in these tests"),
        Message("assistant", "Understood."),
    ]
    rows: list[list[object]] = []
    for label, host in (("rules (offline)", False), ("claude-code:haiku (host model)", True)):
        times = []
        for i in range(runs):
            memory_dir = tmp / f"mem-{label[:5]}-{i}"
            store = MemoryStore(memory_dir)
            if host:
                body = "---\nname: db\ndescription: no db mocks\ntype: feedback\n---\nNo mocks.\n"
                write = {"file_path": str(memory_dir / "feedback_db.md"), "content": body}
                api.script(Reply(tool_calls=(ToolCall("mcp__memdir__Write", write),)), "Saved.")
                ledger = CostLedger(tmp / "costs.jsonl", budget_usd=None)
                provider = ClaudeCodeProvider("haiku", env=env, cwd=tmp, ledger=ledger)
                extractor: Any = AgentExtractor(provider, store)
            else:
                extractor = RuleExtractor(store)
            started = time.perf_counter()
            result = asyncio.run(extractor.extract(said, new_messages=2))
            times.append((time.perf_counter() - started) * 1000)
            assert result.ok and result.written, (label, result.error)
        rows.append([f"extraction per turn: {label}", *stats(times)])
    return rows


def bench_hooks(api: FakeAnthropic, cli: Path, tmp: Path, runs: int) -> list[list[object]]:
    project = tmp / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    transcript = tmp / "t.jsonl"
    entry = {
        "type": "user",
        "uuid": "u1",
        "sessionId": "s",
        "message": {"role": "user", "content": "remember that I prefer tabs"},
    }
    transcript.write_text(json.dumps(entry) + "\n")
    rows: list[list[object]] = []
    memdir = [sys.executable, "-m", "memdir"]
    events = (
        ("stop", "Stop", None),
        ("user-prompt-submit", "UserPromptSubmit", "which indentation do I like?"),
    )
    for event, host_name, prompt in events:
        for label, switch in (("host model on", "haiku"), ("host model off", "off")):
            env = {
                **child_env(api, tmp / f"home-{switch}-{event}", cli),  # same memories: none
                "MEMDIR_HOST_MODEL": switch,
                "MEMDIR_HOOK_DAEMON": "0",
            }
            times = []
            for i in range(runs):
                payload = {
                    "session_id": f"bench-{switch}-{event}-{i}",
                    "transcript_path": str(transcript),
                    "cwd": str(project),
                    "hook_event_name": host_name,
                    **({"prompt": prompt} if prompt else {}),
                }
                started = time.perf_counter()
                proc = subprocess.run(
                    [*memdir, "hook", event],
                    input=json.dumps(payload),
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=project,
                )
                times.append((time.perf_counter() - started) * 1000)
                assert proc.returncode == 0 and not proc.stderr, proc.stderr
                if event == "stop":  # the worker it spawned must not load the next timed call
                    wait_worker(tmp / f"home-{switch}-{event}", str(payload["session_id"]))
            rows.append([f"hook `{event}` process, {label}", *stats(times)])
    return rows


def wait_worker(home: Path, session: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for log in home.rglob("log.jsonl"):
            for line in log.read_text().splitlines():
                row = json.loads(line)
                if row.get("session") == session and row.get("event") == "extract":
                    return
        time.sleep(0.05)
    raise RuntimeError(f"no extraction finished for {session}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--no-docs", action="store_true", help="print only")
    args = parser.parse_args(argv)
    cli = find_cli()
    if cli is None:
        sys.exit("the pinned Claude Code CLI is missing: bash scripts/install-test-deps.sh")
    memdir.llm.base.ALLOW_REAL_PROVIDERS = True
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="memdir-hostbench-") as raw, FakeAnthropic() as api:
        tmp = Path(raw)
        os.environ.pop("MEMDIR_MODEL", None)
        rows += bench_calls(api, cli, tmp, args.runs)
        rows += bench_extraction(api, cli, tmp, args.runs)
        rows += bench_hooks(api, cli, tmp, args.runs)
    out = table(rows, ["what", "n", "p50 ms", "p95 ms"])
    command = f"`.venv/bin/python benchmarks/host_model_bench.py --runs {args.runs}`"
    load = os.getloadavg()[0]
    text = f"Command: {command}  \nMachine: {machine()}; load average at the end {load:.1f}.\n\n"
    text += out + "\n"
    print(text)
    if not args.no_docs:
        update_docs_section("hostmodel", text, title="Host model: the claude-code provider (#17)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
