"""The codex provider's process handling, with a stand-in ``codex`` (tests/llm/data/fake_codex.py)
that records its argv, env and stdin, makes scripted calls through memdir's relay and prints
scripted ``--json`` events (the real CLI runs in tests/realhost/test_codex_host_model.py)."""

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
from memdir.llm import codex_cli_io as io
from memdir.llm.base import CompletionRequest, Message, ToolResultBlock, ToolSpec, ToolUseBlock
from memdir.llm.cli_provider import CALLS_PER_TURN, LIMIT_REACHED
from memdir.llm.codex_cli import (
    HostCliProvider,
    find_cli,
    strict_schema,
)
from memdir.llm.factory import provider_from_spec
from memdir.llm.ledger import CostLedger

FAKE = Path(__file__).parent / "data" / "fake_codex.py"
REQUEST = CompletionRequest(system="be brief", messages=[Message("user", "hello")])
USAGE = {
    "input_tokens": 1200,
    "cached_input_tokens": 200,
    "cache_write_input_tokens": 0,
    "output_tokens": 80,
    "reasoning_output_tokens": 30,
}
SPECS = [ToolSpec("Write", "write a memory file", {"type": "object", "properties": {}})]


def reply(*items: dict[str, Any], usage: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """A successful run's events: thread, turn, the items, and the usage."""
    return [
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "item.completed", "item": {"id": "w", "type": "error", "message": "metadata"}},
        {"type": "turn.started"},
        *({"type": "item.completed", "item": i} for i in items),
        {"type": "turn.completed", "usage": usage or USAGE},
    ]


def text(t: str, id: str = "item_9") -> dict[str, Any]:
    return {"id": id, "type": "agent_message", "text": t}


def tool(name: str, args: dict[str, Any], out: str, id: str) -> dict[str, Any]:
    return {
        "id": id,
        "type": "mcp_tool_call",
        "server": io.RELAY_SERVER,
        "tool": name,
        "arguments": args,
        "result": {"content": [{"type": "text", "text": out}]},
        "error": None,
        "status": "completed",
    }


class Fake:
    """The stand-in CLI, its plan and its log."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path
        self.cli = tmp_path / "bin" / "codex"
        self.cli.parent.mkdir()
        self.cli.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
        self.cli.chmod(0o755)
        self.log = tmp_path / "codex-log.jsonl"
        self.plan_file = tmp_path / "plan.json"
        self.plan(events=reply(text("ok from fake")))
        self.ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)

    def plan(self, **plan: Any) -> None:
        self.plan_file.write_text(json.dumps(plan))

    @property
    def env(self) -> dict[str, str]:
        return {
            "PATH": "/usr/bin:/bin",
            "MEMDIR_CODEX_CLI": str(self.cli),
            "FAKE_CODEX_PLAN": str(self.plan_file),
            "FAKE_CODEX_LOG": str(self.log),
            "CODEX_THREAD_ID": "parent-thread",
        }

    def provider(self, model: str = "haiku", **kw: Any) -> HostCliProvider:
        return HostCliProvider(
            model, env=self.env, ledger=self.ledger, cwd=self.dir, purpose="extract", **kw
        )

    def records(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def relayed(self) -> list[dict[str, Any]]:
        return [r["relay_result"] for r in self.records() if "relay_result" in r]

    def exec_record(self) -> dict[str, Any]:
        (record,) = [r for r in self.records() if r.get("argv", [""])[0] == "exec"]
        return record


@pytest.fixture(autouse=True)
def _allow(allow_real_providers: None) -> None:
    pass


@pytest.fixture
def fake(tmp_path: Path) -> Fake:
    return Fake(tmp_path)


def overrides(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]


def test_a_plain_call_runs_a_stripped_ephemeral_child_and_books_tokens(fake: Fake) -> None:
    fake.plan(servers=["github", "memdir"], events=reply(text("ok from fake")))
    completion = asyncio.run(fake.provider().complete(REQUEST))
    assert completion.text == "ok from fake"
    assert completion.usage.input_tokens == 1000 and completion.usage.cache_read_tokens == 200
    listing, call = fake.records()
    assert listing["argv"] == ["mcp", "list", "--json"]
    argv = call["argv"]
    assert argv[0] == "exec" and argv[-1] == "-" and call["stdin"] == "hello"
    for flag in ("--json", "--ephemeral", "--skip-git-repo-check"):
        assert flag in argv
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    disabled = {argv[i + 1] for i, a in enumerate(argv) if a == "--disable"}
    assert disabled >= {"hooks", "shell_tool", "unified_exec", "plugins", "view_image"}
    config = overrides(argv)
    assert "mcp_servers.github.enabled=false" in config
    assert "mcp_servers.memdir.enabled=false" in config  # the user's own memdir server too
    assert 'web_search="disabled"' in config and "project_doc_max_bytes=0" in config
    assert not any(c.startswith(f"mcp_servers.{io.RELAY_SERVER}") for c in config)
    assert "-m" not in argv  # "haiku" is memdir's default: the user's Codex model
    assert call["instructions"] == "be brief"
    assert call["env"]["MEMDIR_CHILD"] == "1" and "CODEX_THREAD_ID" not in call["env"]
    # an empty private working dir, gone afterwards (no project .codex/ or AGENTS.md is read)
    assert call["cwd"] != str(fake.dir) and listing["cwd"] == call["cwd"]
    assert not Path(call["cwd"]).exists()
    (row,) = fake.ledger.rows()
    assert row["model"] == "codex-default" and row["host"] == "codex"
    assert (row["input_tokens"], row["cache_read_tokens"], row["output_tokens"]) == (1000, 200, 80)
    expected = (1000 * 1.25 + 200 * 0.125 + 80 * 10.0) / 1_000_000
    assert row["cost_usd"] == pytest.approx(expected) and row["cost_estimated"] is True
    assert row["error"] is None and row["usage_estimated"] is False


def test_a_named_model_is_passed_and_priced(fake: Fake) -> None:
    provider = fake.provider("gpt-5-mini")
    asyncio.run(provider.complete(REQUEST))
    argv = fake.exec_record()["argv"]
    assert argv[argv.index("-m") + 1] == "gpt-5-mini"
    (row,) = fake.ledger.rows()
    assert row["model"] == "gpt-5-mini"
    assert row["cost_usd"] == pytest.approx((1000 * 0.25 + 200 * 0.025 + 80 * 2.0) / 1e6)


@pytest.mark.parametrize(
    ("model", "default", "price"),
    [
        ("haiku", True, (1.25, 0.125, 10.0)),
        ("claude-haiku-4-5", True, (1.25, 0.125, 10.0)),
        ("default", True, (1.25, 0.125, 10.0)),
        ("gpt-5-codex", False, (1.25, 0.125, 10.0)),
        ("gpt-5-nano-2025", False, (0.05, 0.005, 0.40)),
        ("some-local-model", False, (1.25, 0.125, 10.0)),
    ],
)
def test_default_models_and_the_price_table(
    model: str, default: bool, price: tuple[float, float, float]
) -> None:
    assert io.is_default_model(model) is default
    label = io.DEFAULT_MODEL_LABEL if default else model
    assert io.price_of(label) == price


def test_structured_output_uses_output_schema_when_strict_else_the_instructions(
    fake: Fake,
) -> None:
    strict = {
        "type": "object",
        "properties": {"picked": {"type": "array", "items": {"type": "string"}}},
        "required": ["picked"],
        "additionalProperties": False,
    }
    loose = {"type": "object", "properties": {"picked": {"type": "array"}}}
    assert strict_schema(strict) and not strict_schema(loose)
    fake.plan(events=reply(text('{"picked": ["a"]}')))
    ask = CompletionRequest(system="select", messages=[Message("user", "q")], json_schema=strict)
    assert asyncio.run(fake.provider().complete(ask)).parsed_json == {"picked": ["a"]}
    assert fake.exec_record()["schema"] == strict
    fake.log.unlink()
    fake.plan(events=reply(text('```json\n{"picked": []}\n```')))
    ask = CompletionRequest(system="select", messages=[Message("user", "q")], json_schema=loose)
    assert asyncio.run(fake.provider().complete(ask)).parsed_json == {"picked": []}
    record = fake.exec_record()
    assert record["schema"] is None and json.dumps(loose) in record["instructions"]


def test_a_tool_loop_runs_every_call_through_memdirs_executor(fake: Fake) -> None:
    fake.plan(
        calls=[["Write", {"file_path": "a.md"}], ["Nope", {}]],
        events=reply(
            text("saving"),
            tool("Write", {"file_path": "a.md"}, "saved a.md", "item_1"),
            text("done", "item_2"),
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
    config = overrides(fake.exec_record()["argv"])
    key = f"mcp_servers.{io.RELAY_SERVER}"
    assert f'{key}.default_tools_approval_mode="approve"' in config
    assert any(c.startswith(f"{key}.env=") and "PYTHONPATH" in c for c in config)
    args = next(c for c in config if c.startswith(f"{key}.args="))
    assert "memdir.llm.relay_mcp" in args
    assert loop.stop_reason == "end_turn" and loop.turns == 2
    assert [m.role for m in loop.messages] == ["assistant", "user", "assistant"]
    assert loop.usage.output_tokens == 80 and loop.cost_usd > 0
    assert fake.ledger.spend().cost_usd == pytest.approx(loop.cost_usd)


def test_a_model_that_keeps_calling_past_the_bound_is_stopped(fake: Fake) -> None:
    """codex exec has no turn limit: memdir refuses calls past max_turns * CALLS_PER_TURN and
    ends the child when the model ignores that (its tokens are then estimated, still booked)."""
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
    assert len(relayed) >= limit + 2
    (row,) = fake.ledger.rows()
    assert row["usage_estimated"] is True and row["input_tokens"] > 0 and row["cost_usd"] > 0


def test_a_request_with_tools_through_complete_captures_the_calls(fake: Fake) -> None:
    fake.plan(
        calls=[["Write", {"file_path": "x.md"}]],
        events=reply(text("writing", "item_0"), tool("Write", {}, "(not run)", "item_1")),
    )

    async def never(call: ToolUseBlock) -> ToolResultBlock:
        raise AssertionError("capture mode runs nothing")

    request = CompletionRequest(system="s", messages=[Message("user", "go")], tools=SPECS)
    completion = asyncio.run(fake.provider().complete(request))
    assert completion.stop_reason == "tool_use" and completion.text == "writing"
    assert [(c.name, c.input) for c in completion.tool_calls] == [("Write", {"file_path": "x.md"})]


def test_a_spent_budget_starts_nothing(fake: Fake) -> None:
    fake.ledger.budget_usd = 0.01
    fake.ledger.record({"cost_usd": 0.02})
    with pytest.raises(BudgetExhaustedError):
        asyncio.run(fake.provider().complete(REQUEST))
    assert fake.records() == []


AUTH_FAILED = [
    {"type": "thread.started", "thread_id": "t"},
    {"type": "turn.started"},
    {"type": "error", "message": "unexpected status 401 Unauthorized: Incorrect API key"},
    {"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}},
]


@pytest.mark.parametrize(
    ("case", "plan", "message"),
    [
        ("absent", {}, "not installed"),
        ("logged out", {"events": AUTH_FAILED, "exit": 1}, "not logged in"),
        (
            "missing key",
            {
                "events": [
                    {
                        "type": "turn.failed",
                        "error": {"message": "Missing environment variable: `OPENAI_API_KEY`."},
                    }
                ]
            },
            "not logged in",
        ),
        ("failing", {"events": [], "exit": 3}, "without a result"),
        ("server list", {"servers": "fail"}, "config.toml is broken"),
        ("slow", {"events": [], "sleep": 30}, "did not answer within"),
        ("bad json", {"events": reply(text("not json"))}, None),
    ],
)
def test_each_failure_is_one_error(
    fake: Fake, case: str, plan: dict[str, Any], message: str | None
) -> None:
    fake.plan(**plan)
    env = fake.env
    if case == "absent":
        env["MEMDIR_CODEX_CLI"] = str(fake.dir / "no-such-codex")
    provider = HostCliProvider("haiku", env=env, ledger=fake.ledger, timeout=2)
    schema = {"type": "object"} if case == "bad json" else None
    request = CompletionRequest(system="s", messages=[Message("user", "x")], json_schema=schema)
    if message is None:
        from memdir.errors import InvalidOutputError

        with pytest.raises(InvalidOutputError):
            asyncio.run(provider.complete(request))
        return
    with pytest.raises(HostModelUnavailableError, match=message) as caught:
        asyncio.run(provider.complete(request))
    assert "\n" not in str(caught.value)
    if case != "absent":
        assert [r["error"] for r in fake.ledger.rows()] == [str(caught.value)]


def test_an_auth_error_ends_the_child_at_once_and_a_timeout_kills_its_group(fake: Fake) -> None:
    fake.plan(events=AUTH_FAILED[:3], sleep=60)
    started = time.monotonic()
    with pytest.raises(HostModelUnavailableError, match="not logged in"):
        asyncio.run(fake.provider(timeout=30).complete(REQUEST))
    assert time.monotonic() - started < 15
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


def test_stream_folding_groups_consecutive_tool_calls() -> None:
    stream = io.Stream()
    for event in reply(
        text("thinking", "i0"),
        tool("Read", {"p": 1}, "one", "i1"),
        tool("Read", {"p": 2}, "two", "i2"),
        tool("Write", {}, "", "i3") | {"error": {"message": "denied"}, "status": "failed"},
        text("done", "i4"),
    ):
        stream.feed(json.dumps(event).encode())
    stream.feed(b"not json")
    ask, answer, final = stream.messages
    assert ask.text == "thinking" and [b.name for b in ask.blocks if isinstance(b, ToolUseBlock)]
    results = [b for b in answer.blocks if isinstance(b, ToolResultBlock)]
    assert [(r.content, r.is_error) for r in results] == [
        ("one", False),
        ("two", False),
        ("denied", True),
    ]
    assert final.text == "done" and stream.turns == 2 and stream.text_after_tools
    assert stream.usage is not None and stream.usage.input_tokens == 1000


def test_find_cli_the_factory_and_the_host_registry(fake: Fake, tmp_path: Path) -> None:
    from memdir.adapters.hooks.hostmodel import HOST_PROVIDERS, host_cli_module

    assert find_cli({"PATH": str(tmp_path)}) is None
    assert find_cli({"PATH": str(fake.cli.parent)}) == str(fake.cli)
    assert find_cli({"MEMDIR_CODEX_CLI": str(tmp_path / "nope")}) is None
    built = provider_from_spec("codex:gpt-5-mini", {"PATH": str(tmp_path)})
    assert isinstance(built, HostCliProvider) and built.model == "gpt-5-mini"
    assert HOST_PROVIDERS["codex"] == "memdir.llm.codex_cli"
    module = host_cli_module("codex:haiku")
    assert module.HostCliProvider is HostCliProvider and module.find_cli is find_cli


def test_the_test_suite_cannot_build_it_by_accident(monkeypatch: pytest.MonkeyPatch) -> None:
    import memdir.llm.base

    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", False)
    with pytest.raises(ProviderConfigError):
        provider_from_spec("codex:default", {})


def test_argv_is_safe_for_any_system_prompt_and_model(fake: Fake) -> None:
    tricky = '--disable x"; $(rm -rf /) `y` \n-c sandbox_mode="danger-full-access"'
    request = CompletionRequest(system=tricky, messages=[Message("user", "hi")])
    asyncio.run(fake.provider().complete(request))
    record = fake.exec_record()
    assert record["instructions"] == tricky  # in a file, never on the command line
    assert not any(tricky in a for a in record["argv"])
