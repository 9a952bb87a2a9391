"""The ``codex`` provider against the real Codex CLI and the fake Responses API: the child sees only
memdir's relayed tools, a tool call the fake model scripts is run by memdir's sandboxed
executor, the user's hooks and MCP servers stay off, no rollout is left, tokens are booked —
and every way the host can fail ends in :class:`HostModelUnavailableError`."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest

import memdir.llm.base
from memdir.errors import BudgetExhaustedError, HostModelUnavailableError
from memdir.extract.agent import AgentExtractor
from memdir.llm import codex_cli_io
from memdir.llm.base import CompletionRequest, Message
from memdir.llm.codex_cli import HostCliProvider
from memdir.llm.ledger import CostLedger
from memdir.store import MemoryStore
from tests.realhost.codex_host import KEY_ENV, CodexHost
from tests.realhost.fake_openai import FakeOpenAI, FunctionCall, Reply
from tests.realhost.test_codex_harness import captured, install_recording_hooks

RELAY = codex_cli_io.RELAY_SERVER
# Codex adds these whenever any MCP server is on; they read MCP resources (the relay has none).
RESOURCE_HELPERS = {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}
FEEDBACK = """---
name: no mocked database in tests
description: integration tests must hit a real database, not mocks
type: feedback
---
Don't mock the database in these tests.

**Why:** a mocked database hid a broken migration last quarter.
**How to apply:** use the real test database fixture in integration tests.
"""
CONVERSATION = [
    Message("user", "don't mock the database in these tests, we got burned by a mocked migration"),
    Message("assistant", "Understood: the integration tests will use the real database."),
]
# A user MCP server that leaves a mark when something starts it.
MARKER_SERVER = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('started')"


@pytest.fixture(autouse=True)
def _allow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", True)


@pytest.fixture
def ledger(tmp_path: Path) -> CostLedger:
    return CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)


def make_provider(codex: CodexHost, ledger: CostLedger, **kw: object) -> HostCliProvider:
    env = dict(codex.env, MEMDIR_CODEX_CLI=str(codex.cli))
    return HostCliProvider(
        "haiku",
        env=env,
        ledger=ledger,
        cwd=codex.project,
        purpose="extract",
        **kw,  # type: ignore[arg-type]
    )


def relay_tool(tool: str, args: dict[str, object]) -> FunctionCall:
    return FunctionCall.mcp(RELAY, tool, args)


def test_extraction_writes_through_memdirs_relay_with_no_codex_tools_hooks_or_servers(
    codex: CodexHost, fake_openai: FakeOpenAI, tmp_path: Path, ledger: CostLedger
) -> None:
    hooks = install_recording_hooks(codex)
    assert codex.trust_hooks()  # trusted: they would run in any exec of the user's own
    marker = tmp_path / "user-server-started"
    codex.add_mcp_server("usersrv", sys.executable, ["-c", MARKER_SERVER, str(marker)])
    codex.add_mcp_server("memdir", "memdir", ["mcp"], approval="approve")  # memdir's own install
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    target = memory_dir / "feedback_no_mocked_db.md"
    fake_openai.script(
        Reply(calls=(relay_tool("Write", {"file_path": str(target), "content": FEEDBACK}),)),
        "Saved one feedback memory.",
    )
    extractor = AgentExtractor(make_provider(codex, ledger), MemoryStore(memory_dir))
    result = asyncio.run(extractor.extract(CONVERSATION, new_messages=2))

    assert result.ok, result.error
    assert result.written == [target] and target.read_text() == FEEDBACK
    assert "no_mocked_db" in (memory_dir / "MEMORY.md").read_text()
    requests = fake_openai.model_requests()
    assert len(requests) == 2
    for request in requests:
        names = set(request.tool_names())
        relayed = {n for n in names if n.startswith(f"mcp__{RELAY}__")}
        assert relayed >= {f"mcp__{RELAY}__Write", f"mcp__{RELAY}__Read"}, names
        assert names - relayed <= RESOURCE_HELPERS, names  # no shell, web search, patch, memdir
        developer = request.message_texts("developer")
        assert developer == [extractor.system], developer  # memdir's prompt, nothing of Codex's
        assert "mocked migration" in request.text()
    (output,) = requests[1].function_outputs()
    assert "feedback_no_mocked_db.md" in str(output["output"])
    assert captured(hooks) == {}  # not one hook ran in the child
    assert not marker.exists()  # the user's MCP server was never started
    assert codex.rollouts() == []  # --ephemeral: nothing in the user's session list
    assert fake_openai.escapes == []
    (row,) = ledger.rows()
    assert row["error"] is None and row["purpose"] == "extract" and row["host"] == "codex"
    assert row["input_tokens"] > 0 and row["output_tokens"] > 0 and row["cost_usd"] > 0
    assert row["cost_estimated"] is True and row["usage_estimated"] is False
    assert result.run is not None and result.run.cost_usd == pytest.approx(row["cost_usd"])


def test_writes_outside_the_memory_dir_and_refused_commands_are_refused_by_memdir(
    codex: CodexHost, fake_openai: FakeOpenAI, tmp_path: Path, ledger: CostLedger
) -> None:
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    outside = tmp_path / "outside.md"
    fake_openai.script(
        Reply(
            calls=(
                relay_tool("Write", {"file_path": str(outside), "content": "x"}),
                relay_tool("Bash", {"command": f"rm -rf {memory_dir}"}),
            )
        ),
        "Nothing saved.",
    )
    extractor = AgentExtractor(make_provider(codex, ledger), MemoryStore(memory_dir))
    result = asyncio.run(extractor.extract(CONVERSATION, new_messages=2))
    assert not outside.exists() and memory_dir.is_dir()
    assert result.run is not None
    assert sorted(c.name for c in result.run.denials) == ["Bash", "Write"]
    outputs = fake_openai.model_requests()[1].function_outputs()
    assert len(outputs) == 2 and "outside" in str(outputs)


def test_plain_and_structured_completions_and_the_model_switch(
    codex: CodexHost, fake_openai: FakeOpenAI, ledger: CostLedger
) -> None:
    provider = make_provider(codex, ledger)
    plain = asyncio.run(
        provider.complete(CompletionRequest(system="s", messages=[Message("user", "hi")]))
    )
    assert plain.text == "OK." and plain.usage.input_tokens > 0
    schema = {
        "type": "object",
        "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
        "required": ["selected_memories"],
        "additionalProperties": False,
    }
    fake_openai.script('{"selected_memories": ["a.md"]}')
    named = make_provider(codex, ledger)
    named.model = "gpt-5-mini"
    picked = asyncio.run(
        named.complete(
            CompletionRequest(system="select", messages=[Message("user", "q")], json_schema=schema)
        )
    )
    assert picked.parsed_json == {"selected_memories": ["a.md"]}
    first, second = fake_openai.model_requests()
    assert first.body["model"] == "gpt-fake"  # haiku: the model the user configured in Codex
    assert first.tool_names() == []
    assert second.body["model"] == "gpt-5-mini"
    assert second.body["text"]["format"]["schema"] == schema  # --output-schema reached the API
    assert [r["model"] for r in ledger.rows()] == ["codex-default", "gpt-5-mini"]


def test_a_spent_budget_reaches_no_model(
    codex: CodexHost, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=0.01)
    ledger.record({"session": "s0", "cost_usd": 0.0125})
    with pytest.raises(BudgetExhaustedError):
        asyncio.run(
            make_provider(codex, ledger).complete(
                CompletionRequest(system="s", messages=[Message("user", "x")])
            )
        )
    assert fake_openai.requests == []


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("absent", "not installed"),
        ("not logged in", "not logged in"),
        ("failing", "without a result"),
        ("slow", "did not answer within"),
    ],
)
def test_each_host_failure_is_one_unavailable_error(
    case: str, message: str, codex: CodexHost, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    env = dict(codex.env, MEMDIR_CODEX_CLI=str(codex.cli))
    if case == "absent":
        env["MEMDIR_CODEX_CLI"] = str(tmp_path / "no-such-codex")
    elif case == "not logged in":
        env.pop(KEY_ENV)
    elif case == "failing":
        script = tmp_path / "codex-wrapper"
        script.write_text(
            f'#!/bin/sh\ncase "$1" in mcp) exec {shlex.quote(str(codex.cli))} "$@";; esac\n'
            "echo 'segfault-ish' >&2; exit 3\n"
        )
        script.chmod(0o755)
        env["MEMDIR_CODEX_CLI"] = str(script)
    else:
        fake_openai.delay = 8
    ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)
    provider = HostCliProvider("haiku", env=env, ledger=ledger, timeout=3 if case == "slow" else 60)
    with pytest.raises(HostModelUnavailableError, match=message) as caught:
        asyncio.run(
            provider.complete(CompletionRequest(system="s", messages=[Message("user", "x")]))
        )
    assert "\n" not in str(caught.value)
    if case == "failing":
        assert "segfault-ish" in str(caught.value)
    if case != "absent":
        assert [r["error"] for r in ledger.rows()] == [str(caught.value)]
