"""``memdir hook log``, ``hook daemon`` and the extraction worker driven through the CLI layer."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters.hooks import hooklog
from memdir.adapters.hooks.lifecycle import run_extraction
from memdir.adapters.hooks.state import SessionStore
from memdir.cli.main import main
from memdir.extract.agent import AgentExtractor
from memdir.llm.base import Completion
from memdir.llm.scripted import ScriptedProvider
from memdir.store import MemoryStore
from memdir.transcripts import Transcript, tool_use_block

NOTE = """---
name: CI cache
description: the CI cache key must include the lockfile hash
type: project
---
Cache key = hash of pnpm-lock.yaml; a stale cache broke main twice.
"""


class Cli:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.cwd = tmp_path / "project"
        (self.cwd / ".git").mkdir(parents=True)

    def __call__(self, *argv: str, text: bool = False) -> tuple[int, Any, str]:
        out, err = io.StringIO(), io.StringIO()
        env = {"HOME": str(self.home)}
        flag = "--text" if text else "--json"
        code = main([flag, *argv], env=env, cwd=self.cwd, stdout=out, stderr=err)
        raw = out.getvalue()
        return code, raw if text else json.loads(raw), err.getvalue()

    def hook_context(self, **kw: Any) -> Any:
        from memdir.cli.context import CliContext
        from memdir.cli.hook_cmd import hook_context
        from memdir.cli.main import build_parser
        from memdir.cli.output import Output

        args = build_parser("hook").parse_args(["hook", "log"])
        ctx = CliContext(env={"HOME": str(self.home), **kw}, cwd=self.cwd, out=Output(), args=args)
        return hook_context(ctx)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_hook_log_shows_what_was_injected(cli: Cli) -> None:
    hc = cli.hook_context()
    hooklog.record(
        hc.cache_dir,
        {
            "session": "abcdef123456",
            "event": "user-prompt-submit",
            "via": "daemon",
            "injected": ["/m/deploys.md"],
            "text": "Memory (saved today): /m/deploys.md:\nfly deploy",
            "ms": 41.2,
        },
    )
    hooklog.record(hc.cache_dir, {"session": "other", "event": "stop", "extraction": "started"})
    code, rows, _ = cli("hook", "log", "--session", "abcdef123456")
    assert code == 0 and [r["injected"] for r in rows] == [["/m/deploys.md"]]
    code, text, _ = cli("hook", "log", "--full", text=True)
    assert "injected 1 (deploys.md) via daemon" in text
    assert "extraction: started" in text
    assert "Memory (saved today): /m/deploys.md:\nfly deploy" in text


def test_hook_log_survives_a_torn_line_and_rotation(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    hc = cli.hook_context()
    monkeypatch.setattr(hooklog, "MAX_LOG_BYTES", 200)
    for i in range(6):
        hooklog.record(hc.cache_dir, {"session": "s", "event": "stop", "n": i, "pad": "x" * 80})
    with open(hooklog.log_path(hc.cache_dir), "ab") as fh:
        fh.write(b'{"session": "s", "ev')
    rows = hooklog.read(hc.cache_dir, limit=100)
    assert [r["n"] for r in rows][-1] == 5
    assert hooklog.log_path(hc.cache_dir).with_name("log.1.jsonl").exists()


def test_daemon_status_when_none_runs(cli: Cli) -> None:
    code, status, _ = cli("hook", "daemon", "status")
    assert code == 1 and status["running"] is False and "no recall daemon" in status["reason"]
    assert cli("hook", "daemon", "stop")[0] == 0


def test_bad_extract_mode_is_a_config_error(cli: Cli) -> None:
    from memdir.errors import ConfigError

    with pytest.raises(ConfigError, match="MEMDIR_HOOK_EXTRACT"):
        cli.hook_context(MEMDIR_HOOK_EXTRACT="sometimes")


def test_model_extraction_at_stop_uses_the_sandboxed_agent(cli: Cli, tmp_path: Path) -> None:
    hc = cli.hook_context(MEMDIR_HOOK_EXTRACT="model", MEMDIR_MODEL="anthropic:scripted")
    memory_dir = hc.paths.memory_dir
    provider = ScriptedProvider(
        [
            Completion.from_tool_calls(
                [("Write", {"file_path": str(memory_dir / "ci_cache.md"), "content": NOTE})]
            ),
            Completion.from_text("Saved one memory."),
        ]
    )
    hc.make_extractor = lambda: AgentExtractor(provider, MemoryStore(memory_dir))
    t = Transcript(tmp_path / "s.jsonl", "s-model", str(cli.cwd))
    t.user("The CI cache broke main again; the key has to include the lockfile hash.")
    use = tool_use_block("Bash", {"command": "cat .github/workflows/ci.yml"})
    t.assistant([use], model="m", stop_reason="tool_use")
    t.tool_result(use["id"], "key: deps-${{ runner.os }}")
    t.assistant("Fixed the cache key.", model="m")
    report = run_extraction(hc, "s-model", t.path)
    assert report.runs == 1 and (memory_dir / "ci_cache.md").read_text() == NOTE
    state = SessionStore(hc.cache_dir).load("s-model")
    assert state.cursor == t.last_uuid and state.notices == ["Saved 1 memory"]
    assert run_extraction(hc, "s-model", t.path).runs == 0  # nothing new since the cursor


def test_main_agent_writing_memory_skips_extraction(cli: Cli, tmp_path: Path) -> None:
    hc = cli.hook_context()
    memory_dir = hc.paths.memory_dir
    t = Transcript(tmp_path / "s.jsonl", "s-wrote", str(cli.cwd))
    t.user("Remember that we release on Thursdays.")
    write = tool_use_block("Write", {"file_path": str(memory_dir / "release.md"), "content": "x"})
    t.assistant([write], model="m", stop_reason="tool_use")
    t.tool_result(write["id"], "ok")
    t.assistant("Saved.", model="m")
    report = run_extraction(hc, "s-wrote", t.path)
    assert report.runs == 0 and not memory_dir.exists()
    assert SessionStore(hc.cache_dir).load("s-wrote").cursor == t.last_uuid
