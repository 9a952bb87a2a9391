"""The gemini provider's process handling, with a stand-in ``gemini`` (tests/llm/data/
fake_gemini_cli.py) that records its argv, env, stdin, settings and system prompt, makes scripted
calls through memdir's relay and prints scripted ``stream-json`` events (the real CLI runs in
tests/realhost/test_gemini_host_model.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memdir.errors import BudgetExhaustedError, HostModelUnavailableError, ProviderConfigError
from memdir.llm import gemini_cli_cost as cost
from memdir.llm import gemini_cli_io as io
from memdir.llm.base import CompletionRequest, Message, ToolResultBlock, ToolSpec, ToolUseBlock
from memdir.llm.cli_provider import CALLS_PER_TURN, LIMIT_REACHED
from memdir.llm.factory import provider_from_spec
from memdir.llm.gemini_cli import (
    HostCliProvider,
    find_cli,
    model_words,
    user_auth_type,
)
from memdir.llm.ledger import CostLedger

FAKE = Path(__file__).parent / "data" / "fake_gemini_cli.py"
REQUEST = CompletionRequest(system="be brief", messages=[Message("user", "hello")])
# 1200 prompt tokens of which 200 cached, 80 candidates, 30 thinking (only in the total)
STATS: dict[str, Any] = {
    "total_tokens": 1310,
    "input_tokens": 1200,
    "output_tokens": 80,
    "cached": 200,
    "input": 1000,
    "duration_ms": 5,
    "tool_calls": 0,
    "models": {
        "gemini-2.5-flash": {
            "total_tokens": 1310,
            "input_tokens": 1200,
            "output_tokens": 80,
            "cached": 200,
            "input": 1000,
        }
    },
}
FLASH_COST = (1000 * 0.30 + 200 * 0.03 + 110 * 2.50) / 1_000_000
SPECS = [ToolSpec("Write", "write a memory file", {"type": "object", "properties": {}})]


def reply(*events: dict[str, Any], status: str = "success", **extra: Any) -> list[dict[str, Any]]:
    """A run's events: init, the user's prompt, the given events, the result."""
    return [
        {"type": "init", "session_id": "s-1", "model": "gemini-2.5-flash"},
        {"type": "message", "role": "user", "content": "hello"},
        *events,
        {"type": "result", "status": status, "stats": STATS, **extra},
    ]


def text(t: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": t, "delta": True}


def use(name: str, args: dict[str, Any], id: str) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "tool_name": f"mcp_memdir_{name}",
        "tool_id": id,
        "parameters": args,
    }


def result(id: str, out: str, status: str = "success") -> dict[str, Any]:
    return {"type": "tool_result", "tool_id": id, "status": status, "output": out}


class Fake:
    """The stand-in CLI, its plan and its log."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path
        self.cli = tmp_path / "bin" / "gemini"
        self.cli.parent.mkdir()
        self.cli.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
        self.cli.chmod(0o755)
        self.home = tmp_path / "home"
        (self.home / ".gemini").mkdir(parents=True)
        self.log = tmp_path / "gemini-log.jsonl"
        self.plan_file = tmp_path / "plan.json"
        self.plan(events=reply(text("ok from "), text("fake")))
        self.ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)

    def plan(self, **plan: Any) -> None:
        self.plan_file.write_text(json.dumps(plan))

    @property
    def env(self) -> dict[str, str]:
        return {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            "MEMDIR_GEMINI_CLI": str(self.cli),
            "FAKE_GEMINI_PLAN": str(self.plan_file),
            "FAKE_GEMINI_LOG": str(self.log),
            "GEMINI_API_KEY": "k",
            "GEMINI_SESSION_ID": "the-parent-session",
            "GEMINI_MODEL": "gemini-2.5-pro",
            "GEMINI_SYSTEM_MD": "/the/users/own/system.md",
        }

    def provider(self, model: str = "haiku", **kw: Any) -> HostCliProvider:
        return HostCliProvider(
            model, env=self.env, ledger=self.ledger, cwd=self.dir, purpose="extract", **kw
        )

    def records(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def call(self) -> dict[str, Any]:
        (record,) = [r for r in self.records() if "argv" in r]
        return record

    def relayed(self) -> list[dict[str, Any]]:
        return [r["relay_result"] for r in self.records() if "relay_result" in r]


@pytest.fixture(autouse=True)
def _allow(allow_real_providers: None) -> None:
    pass


@pytest.fixture
def fake(tmp_path: Path) -> Fake:
    return Fake(tmp_path)


def test_a_plain_call_runs_a_stripped_child_in_a_private_home_and_books_tokens(
    fake: Fake,
) -> None:
    completion = asyncio.run(fake.provider().complete(REQUEST))
    assert completion.text == "ok from fake"
    usage = completion.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (1000, 200, 110)
    call = fake.call()
    argv = call["argv"]
    assert argv[:2] == ["-p", ""] and call["stdin"] == "hello"
    assert argv[argv.index("--output-format") + 1] == "stream-json"
    assert argv[argv.index("--extensions") + 1] == "none"
    assert argv[argv.index("--approval-mode") + 1] == "default"
    assert "--allowed-mcp-server-names" not in argv and "--yolo" not in argv
    settings = call["settings"]
    assert settings["tools"]["core"] == []  # no tool at all, built-in or MCP
    assert "mcpServers" not in settings and "mcp" not in settings
    assert settings["hooksConfig"] == {"enabled": False}
    assert settings["model"] == {"name": "gemini-2.5-flash", "maxSessionTurns": 1}
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["telemetry"]["enabled"] is False and settings["skills"]["enabled"] is False
    assert "auth" not in settings["security"]  # no user setting: the CLI picks from the env
    env = call["env"]
    assert env["GEMINI_CLI_HOME"] == call["cwd"] != str(fake.dir)
    assert env["MEMDIR_CHILD"] == "1" and env["GEMINI_CLI_NO_RELAUNCH"] == "true"
    assert "GEMINI_SESSION_ID" not in env and env["GEMINI_API_KEY"] == "k"
    assert "GEMINI_MODEL" not in env  # it would outrank the model memdir set
    assert env["GEMINI_SYSTEM_MD"] != "/the/users/own/system.md"
    assert call["system"] == "be brief"
    assert call["home_files"] == ["settings.json"]
    assert not Path(call["cwd"]).exists()  # the private home is gone afterwards
    (row,) = fake.ledger.rows()
    assert row["model"] == "gemini-2.5-flash" and row["host"] == "gemini"
    assert (row["input_tokens"], row["cache_read_tokens"], row["output_tokens"]) == (1000, 200, 110)
    assert row["cost_usd"] == pytest.approx(FLASH_COST, abs=1e-6)
    assert row["cost_estimated"] is True and row["usage_estimated"] is False
    assert row["error"] is None and row["purpose"] == "extract"


def test_the_users_auth_type_and_google_login_reach_the_child(fake: Fake) -> None:
    gemini_dir = fake.home / ".gemini"
    settings = {"security": {"auth": {"selectedType": "oauth-personal"}}}
    (gemini_dir / "settings.json").write_text(json.dumps(settings))
    (gemini_dir / "oauth_creds.json").write_text('{"refresh_token": "r"}')
    asyncio.run(fake.provider().complete(REQUEST))
    call = fake.call()
    assert call["settings"]["security"]["auth"] == {"selectedType": "oauth-personal"}
    assert call["home_files"] == ["oauth_creds.json", "settings.json"]
    assert not (gemini_dir / "oauth_creds.json").is_symlink()  # the user's file, untouched


def test_a_login_file_that_cannot_be_copied_is_an_unavailable_error_not_a_crash(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini_dir = fake.home / ".gemini"
    settings = {"security": {"auth": {"selectedType": "oauth-personal"}}}
    (gemini_dir / "settings.json").write_text(json.dumps(settings))
    (gemini_dir / "oauth_creds.json").mkdir()  # not a regular file: skipped, not copied
    asyncio.run(fake.provider().complete(REQUEST))
    assert fake.call()["home_files"] == ["settings.json"]
    (gemini_dir / "oauth_creds.json").rmdir()
    (gemini_dir / "oauth_creds.json").write_text("{}")

    def full_disk(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("memdir.llm.gemini_cli.shutil.copyfile", full_disk)
    with pytest.raises(HostModelUnavailableError, match=r"private home: .*No space left"):
        asyncio.run(fake.provider().complete(REQUEST))
    assert len([r for r in fake.records() if "argv" in r]) == 1  # no second child started


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"security": {"auth": {"selectedType": "gemini-api-key"}}}', "gemini-api-key"),
        ('{"security": {"auth": {"selectedType": ""}}}', None),
        ("// a comment\n{}", None),
        ("[1, 2]", None),
        (None, None),
    ],
)
def test_user_auth_type_reads_only_a_well_formed_setting(
    tmp_path: Path, content: str | None, expected: str | None
) -> None:
    if content is not None:
        (tmp_path / ".gemini").mkdir()
        (tmp_path / ".gemini" / "settings.json").write_text(content)
    assert user_auth_type({"HOME": str(tmp_path)}) == expected
    assert user_auth_type({"HOME": "/nonexistent", "GEMINI_CLI_HOME": str(tmp_path)}) == expected


@pytest.mark.parametrize(
    ("model", "name", "price"),
    [
        ("haiku", "gemini-2.5-flash", (0.30, 0.03, 2.50)),
        ("default", "gemini-2.5-flash", (0.30, 0.03, 2.50)),
        ("claude-haiku-4-5", "gemini-2.5-flash", (0.30, 0.03, 2.50)),
        ("sonnet", "gemini-2.5-pro", (1.25, 0.125, 10.0)),
        ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite", (0.10, 0.01, 0.40)),
        ("gemini-3-pro-preview", "gemini-3-pro-preview", (2.0, 0.20, 12.0)),
        ("some-tuned-model", "some-tuned-model", (1.25, 0.125, 10.0)),
    ],
)
def test_model_names_and_the_price_table(
    model: str, name: str, price: tuple[float, float, float]
) -> None:
    assert cost.model_name(model) == name
    assert cost.price_of(name) == price
    assert model_words(model).startswith(f"{name}, list price ${price[0]:.2f}")


def test_a_named_model_is_set_and_priced(fake: Fake) -> None:
    stats = dict(STATS, models={"gemini-2.5-flash-lite": STATS["models"]["gemini-2.5-flash"]})
    fake.plan(
        events=[*reply(text("ok"))[:-1], {"type": "result", "status": "success", "stats": stats}]
    )
    asyncio.run(fake.provider("gemini-2.5-flash-lite").complete(REQUEST))
    assert fake.call()["settings"]["model"]["name"] == "gemini-2.5-flash-lite"
    (row,) = fake.ledger.rows()
    assert row["model"] == "gemini-2.5-flash-lite"
    assert row["cost_usd"] == pytest.approx((1000 * 0.10 + 200 * 0.01 + 110 * 0.40) / 1e6, abs=1e-6)


def test_structured_output_puts_the_schema_in_the_instructions(fake: Fake) -> None:
    schema = {"type": "object", "properties": {"picked": {"type": "array"}}}
    fake.plan(events=reply(text('```json\n{"picked": ["a"]}\n```')))
    ask = CompletionRequest(system="select", messages=[Message("user", "q")], json_schema=schema)
    assert asyncio.run(fake.provider().complete(ask)).parsed_json == {"picked": ["a"]}
    system = fake.call()["system"]
    assert system.startswith("select\n\n") and json.dumps(schema) in system


def test_a_tool_loop_runs_every_call_through_memdirs_executor(fake: Fake) -> None:
    fake.plan(
        calls=[["Write", {"file_path": "a.md"}], ["Nope", {}]],
        events=reply(
            text("saving"),
            use("Write", {"file_path": "a.md"}, "w1"),
            result("w1", "saved a.md"),
            text("done"),
        ),
    )
    seen: list[ToolUseBlock] = []

    async def execute(call: ToolUseBlock) -> ToolResultBlock:
        seen.append(call)
        return ToolResultBlock(call.id, f"saved {call.input['file_path']}")

    request = CompletionRequest(system="extract", messages=[Message("user", "go")], tools=SPECS)
    loop = asyncio.run(fake.provider().run_tool_loop(request, execute, max_turns=5))
    assert [(c.name, c.input) for c in seen] == [("Write", {"file_path": "a.md"})]
    relayed = fake.relayed()
    assert relayed[0] == {"content": "saved a.md", "is_error": False}
    assert relayed[1]["is_error"] and "no such tool" in relayed[1]["content"]
    call = fake.call()
    argv, settings = call["argv"], call["settings"]
    assert argv[argv.index("--allowed-mcp-server-names") + 1] == "memdir"
    assert settings["tools"]["core"] == ["mcp_memdir_*"]  # memdir's relayed tools, nothing else
    assert settings["mcp"] == {"allowed": ["memdir"]}
    assert list(settings["mcpServers"]) == ["memdir"]
    server = settings["mcpServers"]["memdir"]
    assert server["command"] == sys.executable and server["trust"] is True
    assert server["args"][:2] == ["-m", "memdir.llm.relay_mcp"]
    assert "PYTHONPATH" in server["env"] and server["env"]["MEMDIR_CHILD"] == "1"
    assert settings["model"]["maxSessionTurns"] == 5
    assert loop.stop_reason == "end_turn" and loop.turns == 2
    assert [m.role for m in loop.messages] == ["assistant", "user", "assistant"]
    first = loop.messages[0].blocks
    assert isinstance(first[1], ToolUseBlock) and first[1].name == "Write"
    assert loop.usage.output_tokens == 110 and loop.cost_usd > 0
    assert fake.ledger.spend().cost_usd == pytest.approx(loop.cost_usd)


def test_the_clis_turn_limit_ends_the_loop_as_max_turns(fake: Fake) -> None:
    limited = {"type": io.TURN_LIMIT_ERROR, "message": "Reached max session turns"}
    fake.plan(
        events=reply(use("Read", {}, "r1"), result("r1", "x"), status="error", error=limited),
        exit=53,
    )

    async def execute(call: ToolUseBlock) -> ToolResultBlock:
        return ToolResultBlock(call.id, "x")

    request = CompletionRequest(system="extract", messages=[Message("user", "go")], tools=SPECS)
    loop = asyncio.run(fake.provider().run_tool_loop(request, execute, max_turns=1))
    assert loop.stop_reason == "max_turns" and loop.usage.input_tokens == 1000
    (row,) = fake.ledger.rows()
    assert row["error"] is None and row["cost_usd"] > 0


def test_a_model_that_keeps_calling_past_the_bound_is_stopped(fake: Fake) -> None:
    limit = 1 * CALLS_PER_TURN
    fake.plan(calls=[["Write", {"n": n}] for n in range(limit + 3)], events=[], sleep=60)
    ran: list[int] = []

    async def execute(call: ToolUseBlock) -> ToolResultBlock:
        ran.append(call.input["n"])
        return ToolResultBlock(call.id, "ok")

    request = CompletionRequest(system="extract", messages=[Message("user", "go")], tools=SPECS)
    started = time.monotonic()
    loop = asyncio.run(fake.provider(timeout=30).run_tool_loop(request, execute, max_turns=1))
    assert time.monotonic() - started < 20
    assert ran == list(range(limit)) and loop.stop_reason == "max_turns"
    relayed = fake.relayed()
    assert [r["content"] for r in relayed[limit:]] == [LIMIT_REACHED] * (len(relayed) - limit)
    (row,) = fake.ledger.rows()
    assert row["usage_estimated"] is True and row["input_tokens"] > 0 and row["cost_usd"] > 0


def test_a_request_with_tools_through_complete_captures_the_calls(fake: Fake) -> None:
    fake.plan(
        calls=[["Write", {"file_path": "x.md"}]],
        events=reply(text("writing"), use("Write", {}, "w1"), result("w1", "(not run)")),
    )

    async def never(call: ToolUseBlock) -> ToolResultBlock:
        raise AssertionError("capture mode runs nothing")

    request = CompletionRequest(system="s", messages=[Message("user", "go")], tools=SPECS)
    completion = asyncio.run(fake.provider().complete(request))
    assert completion.stop_reason == "tool_use" and completion.text == "writing"
    assert [(c.name, c.input) for c in completion.tool_calls] == [("Write", {"file_path": "x.md"})]
    assert fake.relayed()[0]["content"].startswith("(not run here")


def test_a_spent_budget_starts_nothing(fake: Fake) -> None:
    fake.ledger.budget_usd = 0.01
    fake.ledger.record({"cost_usd": 0.02})
    with pytest.raises(BudgetExhaustedError):
        asyncio.run(fake.provider().complete(REQUEST))
    assert fake.records() == []


REFUSED = {"type": "error", "severity": "error", "message": "[API Error: API key not valid (400)]"}
NO_KEY = (
    "Warning: 256-color support not detected.\n"
    "When using Gemini API, you must specify the GEMINI_API_KEY environment variable.\n"
)


@pytest.mark.parametrize(
    ("case", "plan", "message"),
    [
        ("absent", {}, "not installed"),
        ("no key", {"events": [], "stderr": NO_KEY, "exit": 41}, "not logged in"),
        (
            "refused key",
            {"events": [*reply()[:1], REFUSED], "sleep": 30},
            "not logged in",
        ),
        (
            "failed run",
            {"events": reply(status="error", error={"type": "Error", "message": "quota gone"})},
            "the Gemini CLI failed: quota gone",
        ),
        ("failing", {"events": [], "stderr": "boom\n", "exit": 3}, "without a result: boom"),
        ("slow", {"events": [], "sleep": 30}, "did not answer within"),
    ],
)
def test_each_failure_is_one_error(
    fake: Fake, case: str, plan: dict[str, Any], message: str
) -> None:
    fake.plan(**plan)
    env = fake.env
    if case == "absent":
        env["MEMDIR_GEMINI_CLI"] = str(fake.dir / "no-such-gemini")
    provider = HostCliProvider("haiku", env=env, ledger=fake.ledger, timeout=3)
    started = time.monotonic()
    with pytest.raises(HostModelUnavailableError, match=message) as caught:
        asyncio.run(provider.complete(REQUEST))
    assert "\n" not in str(caught.value) and "256-color" not in str(caught.value)
    if case == "refused key":
        assert time.monotonic() - started < 2.5  # not waited out: the key will not get better
    if case != "absent":
        assert [r["error"] for r in fake.ledger.rows()] == [str(caught.value)]


def test_a_timeout_kills_the_childs_whole_group(fake: Fake) -> None:
    pid_file = fake.dir / "grandchild.pid"
    fake.plan(events=[], grandchild=str(pid_file), sleep=60)
    with pytest.raises(HostModelUnavailableError, match="within 2s"):
        asyncio.run(fake.provider(timeout=2).complete(REQUEST))
    pid = int(pid_file.read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the child's own child outlived the timeout")


def test_stream_folding_one_assistant_message_per_turn_and_thinking_tokens() -> None:
    stream = io.Stream()
    events = reply(
        use("Read", {"a": 1}, "r1"),  # turn 1: two parallel calls, run after the response
        use("Read", {"a": 2}, "r2"),
        result("r1", "one"),
        result("r2", "two"),
        use("Write", {}, "w3"),  # turn 2: a call after the results
        result("w3", "denied", status="error"),
        text("do"),  # turn 3: the answer, in deltas
        text("ne"),
    )
    for event in events:
        stream.feed(json.dumps(event).encode())
    stream.feed(b"not json")
    stream.feed(b"[1]")
    first, answers, second, denied, final = stream.messages
    assert [b.name for b in first.blocks if isinstance(b, ToolUseBlock)] == ["Read", "Read"]
    assert [(b.content, b.is_error) for b in answers.blocks if isinstance(b, ToolResultBlock)] == [
        ("one", False),
        ("two", False),
    ]
    assert [b.name for b in second.blocks if isinstance(b, ToolUseBlock)] == ["Write"]
    assert [b.is_error for b in denied.blocks if isinstance(b, ToolResultBlock)] == [True]
    assert final.role == "assistant" and stream.final_text == "done"
    assert stream.turns == 3 and stream.text_after_tools
    assert stream.usage is not None and stream.usage.output_tokens == 110
    assert cost.model_usage({"input_tokens": 10, "output_tokens": 3}).input_tokens == 10
    assert cost.model_usage("junk").input_tokens == 0


def test_find_cli_the_factory_and_the_host_registry(fake: Fake, tmp_path: Path) -> None:
    from memdir.adapters.hooks.hostmodel import HOST_PROVIDERS, host_cli_module

    assert find_cli({"PATH": str(tmp_path)}) is None
    assert find_cli({"PATH": str(fake.cli.parent)}) == str(fake.cli)
    assert find_cli({"MEMDIR_GEMINI_CLI": str(tmp_path / "nope")}) is None
    built = provider_from_spec("gemini:gemini-2.5-pro", {"PATH": str(tmp_path)})
    assert isinstance(built, HostCliProvider) and built.model == "gemini-2.5-pro"
    assert HOST_PROVIDERS["gemini"] == "memdir.llm.gemini_cli"
    module = host_cli_module("gemini:haiku")
    assert module.HostCliProvider is HostCliProvider and module.find_cli is find_cli


def test_the_test_suite_cannot_build_it_by_accident(monkeypatch: pytest.MonkeyPatch) -> None:
    import memdir.llm.base

    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", False)
    with pytest.raises(ProviderConfigError):
        provider_from_spec("gemini:default", {})


def test_argv_is_safe_for_any_system_prompt_and_prompt(fake: Fake) -> None:
    tricky = '--yolo"; $(rm -rf /) `y` \n--approval-mode yolo'
    request = CompletionRequest(system=tricky, messages=[Message("user", tricky)])
    asyncio.run(fake.provider().complete(request))
    call = fake.call()
    assert call["system"] == tricky and call["stdin"] == tricky  # a file and stdin, never argv
    assert not any(tricky in a for a in call["argv"]) and "--yolo" not in call["argv"]
