"""The host CLIs run as plain completers (``pi -p``, ``copilot``, ``qwen``): each provider with
a stand-in CLI (tests/llm/data/replay_cli.py) that logs what memdir gave it and prints what the
real CLI printed (recorded by tests/realhost/record_headless_fixtures.py). The real CLIs run in
tests/realhost/test_npm_host_model.py."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memdir.config import CHILD_ENV_FLAG
from memdir.errors import BudgetExhaustedError, HostModelUnavailableError
from memdir.llm import cline_cli, copilot_cli, pi_cli, qwen_cli
from memdir.llm.base import CompletionRequest, Message, ToolSpec
from memdir.llm.factory import provider_from_spec
from memdir.llm.ledger import CostLedger
from memdir.llm.text_cli import TextCliProvider

REPLAY = Path(__file__).parent / "data" / "replay_cli.py"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
MODULES: dict[str, Any] = {
    "pi": pi_cli,
    "copilot": copilot_cli,
    "qwen": qwen_cli,
    "cline": cline_cli,
}
WRITE = ToolSpec("Write", "Write a file.", {"type": "object"})
TOOLS = CompletionRequest(
    system="You are memdir's extractor.",
    messages=[Message("user", "the user prefers pnpm")],
    tools=(WRITE,),
)


class Replay:
    """One stand-in CLI for ``host``, its user home and its log."""

    def __init__(self, tmp_path: Path, host: str) -> None:
        self.host = host
        self.dir = tmp_path
        self.cli = tmp_path / "bin" / host
        self.cli.parent.mkdir()
        self.cli.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{REPLAY}" "$@"\n')
        self.cli.chmod(0o755)
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.log = tmp_path / "log.jsonl"
        self.ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)
        self.extra: dict[str, str] = {}
        self.replay("tool")

    def replay(self, case: str) -> None:
        self.extra["REPLAY_RECORD"] = str(FIXTURES / self.host / f"headless-{case}.json")

    @property
    def env(self) -> dict[str, str]:
        return {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            f"MEMDIR_{self.host.upper()}_CLI": str(self.cli),
            "REPLAY_LOG": str(self.log),
            **self.extra,
        }

    def provider(self, model: str = "haiku") -> TextCliProvider:
        made: TextCliProvider = MODULES[self.host].HostCliProvider(
            model, env=self.env, ledger=self.ledger, purpose="extract"
        )
        return made

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture(autouse=True)
def _allow(allow_real_providers: None) -> None:
    pass


@pytest.fixture(params=sorted(MODULES))
def replay(request: pytest.FixtureRequest, tmp_path: Path) -> Replay:
    return Replay(tmp_path, request.param)


def test_a_tool_call_in_text_comes_back_as_a_call_and_the_child_is_stripped(
    replay: Replay,
) -> None:
    completion = asyncio.run(replay.provider().complete(TOOLS))
    assert [(c.name, c.input) for c in completion.tool_calls] == [
        ("Write", {"file_path": "a.md", "content": "x"})
    ]
    assert completion.stop_reason == "tool_use"
    (call,) = replay.calls()
    assert call["env"][CHILD_ENV_FLAG] == "1"  # every memdir hook returns at once inside
    # memdir's instructions and the tool format reach the child: stdin, a file or an argument
    given = " ".join([call["stdin"], *(t for t, _ in call["files"].values()), *call["argv"]])
    assert "You are memdir's extractor." in given and '{"tool": "<name>"' in given
    assert "the user prefers pnpm" in call["stdin"]
    assert not Path(call["cwd"]).exists()  # the private dir is gone
    assert "--model" not in call["argv"] and "-m" not in call["argv"]  # a Claude alias
    flags = {
        "pi": ["--no-tools", "--no-session", "--no-extensions", "--no-context-files"],
        "copilot": ["--available-tools=memdir-none", "--disable-builtin-mcps"],
        "qwen": ["--max-tool-calls", "--chat-recording"],
        "cline": ["--auto-approve", "false", "--data-dir", "--config"],
    }[replay.host]
    assert all(f in call["argv"] for f in flags), call["argv"]
    (row,) = replay.ledger.rows()
    assert row["host"] == replay.host and row["purpose"] == "extract" and row["error"] is None


def test_a_named_model_is_asked_for(replay: Replay) -> None:
    asyncio.run(replay.provider("gpt-5-mini").complete(TOOLS))
    (call,) = replay.calls()
    if replay.host == "qwen":  # Qwen Code takes it in its settings
        settings = json.loads(call["files"][".qwen/settings.json"][0])
        assert settings["model"]["name"] == "gpt-5-mini"
    else:
        at = call["argv"].index("-m" if replay.host == "cline" else "--model")
        assert call["argv"][at + 1] == "gpt-5-mini"


def test_an_unreachable_api_is_an_unavailable_error_in_the_clis_words(replay: Replay) -> None:
    replay.replay("unreachable")
    with pytest.raises(HostModelUnavailableError, match=r"(?i)connect"):
        asyncio.run(replay.provider().complete(TOOLS))
    (row,) = replay.ledger.rows()
    assert row["error"] and "onnect" in row["error"]
    assert row["input_tokens"] > 0  # a failed call still counts against the budget


def test_a_spent_budget_starts_no_child(replay: Replay, tmp_path: Path) -> None:
    replay.ledger = CostLedger(tmp_path / "spent.jsonl", budget_usd=0.0)
    with pytest.raises(BudgetExhaustedError):
        asyncio.run(replay.provider().complete(TOOLS))
    assert replay.calls() == []


def test_a_hung_cli_is_killed_with_everything_it_started(replay: Replay) -> None:
    replay.extra["REPLAY_SLEEP"] = "60"
    request = CompletionRequest(system="s", messages=[Message("user", "hi")], timeout=1.5)
    started = time.monotonic()
    with pytest.raises(HostModelUnavailableError, match=r"did not answer within 1\.5s"):
        asyncio.run(replay.provider().complete(request))
    assert time.monotonic() - started < 20
    (call,) = replay.calls()
    deadline = time.monotonic() + 5
    while _alive(call["grandchild"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(call["grandchild"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and ") Z " in status.read_text())


def test_a_missing_cli_is_unavailable(tmp_path: Path) -> None:
    for host, module in MODULES.items():
        env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
        assert module.find_cli(env) is None
        with pytest.raises(HostModelUnavailableError, match="not installed"):
            asyncio.run(module.HostCliProvider("haiku", env=env).complete(TOOLS))
        assert host in module.HostCliProvider.HOST


def test_the_factory_builds_each(tmp_path: Path) -> None:
    for host, module in MODULES.items():
        made = provider_from_spec(f"{host}:default", {"HOME": str(tmp_path)})
        assert isinstance(made, module.HostCliProvider)


def test_pi_books_pis_own_cost(tmp_path: Path) -> None:
    replay = Replay(tmp_path, "pi")
    asyncio.run(replay.provider().complete(TOOLS))
    (row,) = replay.ledger.rows()
    assert row["cost_estimated"] is False and row["cost_usd"] == 0.0  # pi priced it: free
    assert (row["input_tokens"], row["output_tokens"]) == (10, 5)


def test_copilot_copies_only_the_login_and_books_an_estimate(tmp_path: Path) -> None:
    replay = Replay(tmp_path, "copilot")
    own = replay.home / ".copilot"
    own.mkdir()
    (own / "config.json").write_text('// the CLI writes comments\n{"logged_in_users": []}\n')
    (own / "settings.json").write_text('{"hooks": {"userPromptSubmitted": []}}')
    (own / "mcp-config.json").write_text('{"mcpServers": {"memdir": {}}}')
    asyncio.run(replay.provider().complete(TOOLS))
    (call,) = replay.calls()
    assert call["env"]["COPILOT_HOME"].startswith(call["cwd"])
    assert sorted(call["files"]) == [".copilot/config.json"]
    text, mode = call["files"][".copilot/config.json"]
    assert "logged_in_users" in text and mode == "0o600"
    assert call["stdin"].startswith("You are memdir's extractor.")  # no system-prompt switch
    (row,) = replay.ledger.rows()
    assert row["cost_estimated"] is True and row["cost_usd"] > 0


def test_qwen_keeps_the_login_and_drops_hooks_servers_and_its_own_memory(tmp_path: Path) -> None:
    replay = Replay(tmp_path, "qwen")
    own = replay.home / ".qwen"
    own.mkdir()
    user = {
        "security": {"auth": {"selectedType": "openai"}},
        "modelProviders": {"openai": [{"id": "m", "envKey": "K"}]},
        "model": {"name": "m"},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "memdir hook stop"}]}]},
        "mcpServers": {"memdir": {"command": "memdir"}},
    }
    (own / "settings.json").write_text(json.dumps(user))
    (own / "oauth_creds.json").write_text('{"token": "t"}')
    asyncio.run(replay.provider().complete(TOOLS))
    (call,) = replay.calls()
    settings = json.loads(call["files"][".qwen/settings.json"][0])
    assert settings["security"] == user["security"]
    assert settings["modelProviders"] == user["modelProviders"]
    assert "hooks" not in settings and "mcpServers" not in settings
    assert settings["disableAllHooks"] is True
    assert settings["memory"]["enableManagedAutoMemory"] is False
    assert call["files"][".qwen/oauth_creds.json"][1] == "0o600"
    assert call["env"]["QWEN_SYSTEM_MD"].startswith(call["cwd"])


@pytest.mark.parametrize("garbage", ["", "not json at all", "[1, 2", '{"type": "result"}' * 3])
def test_garbage_output_is_an_unavailable_error_never_a_crash(tmp_path: Path, garbage: str) -> None:
    for host in MODULES:
        (tmp_path / host).mkdir()
        replay = Replay(tmp_path / host, host)
        record = tmp_path / host / "garbage.json"
        record.write_text(json.dumps({"returncode": 0, "stdout": garbage, "stderr": ""}))
        replay.extra["REPLAY_RECORD"] = str(record)
        with pytest.raises(HostModelUnavailableError):
            asyncio.run(replay.provider().complete(TOOLS))


def test_a_cli_that_prints_without_end_is_cut_off(tmp_path: Path) -> None:
    from memdir.llm import text_cli

    replay = Replay(tmp_path, "pi")
    record = tmp_path / "flood.json"
    flood = "x" * (text_cli.MAX_OUTPUT + 1)
    record.write_text(json.dumps({"returncode": 0, "stdout": flood, "stderr": ""}))
    replay.extra["REPLAY_RECORD"] = str(record)
    with pytest.raises(HostModelUnavailableError, match="printed more than 16 MB"):
        asyncio.run(replay.provider().complete(TOOLS))
    (row,) = replay.ledger.rows()
    assert "printed more than" in row["error"]


def test_cline_runs_on_a_copy_of_the_login_alone_with_every_tool_refused(tmp_path: Path) -> None:
    replay = Replay(tmp_path, "cline")
    own = replay.home / ".cline"
    (own / "data" / "settings").mkdir(parents=True)
    (own / "data" / "settings" / "providers.json").write_text('{"lastUsedProvider": "x"}')
    (own / "plugins").mkdir()
    (own / "plugins" / "memdir.js").write_text("// memdir's own plugin: never in the child")
    asyncio.run(replay.provider().complete(TOOLS))
    (call,) = replay.calls()
    assert sorted(call["files"]) == ["data/settings/providers.json"]
    assert call["files"]["data/settings/providers.json"][1] == "0o600"
    argv = call["argv"]
    assert argv[argv.index("--config") + 1] == f"{call['cwd']}/config"
    assert argv[argv.index("--data-dir") + 1] == f"{call['cwd']}/data"
    assert argv[argv.index("-s") + 1].startswith("You are memdir's extractor.")
    assert call["env"]["CLINE_SESSION_BACKEND_MODE"] == "local"  # no hub left running
    assert "the user prefers pnpm" in call["stdin"]


def test_cline_refuses_instructions_too_long_for_one_argument(tmp_path: Path) -> None:
    replay = Replay(tmp_path, "cline")
    huge = CompletionRequest(system="x" * (200 * 1024), messages=[Message("user", "hi")])
    with pytest.raises(HostModelUnavailableError, match="more than the Cline CLI"):
        asyncio.run(replay.provider().complete(huge))
    assert replay.calls() == []


def test_a_cli_that_never_stops_printing_is_killed_not_waited_out(tmp_path: Path) -> None:
    replay = Replay(tmp_path, "qwen")
    replay.extra["REPLAY_FLOOD"] = "1"
    started = time.monotonic()
    with pytest.raises(HostModelUnavailableError, match="printed more than"):
        asyncio.run(replay.provider().complete(TOOLS))
    assert time.monotonic() - started < 60  # the call's own time limit is 300 s
