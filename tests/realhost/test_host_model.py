"""The ``claude-code`` provider against the real CLI and the fake Messages API: memdir's sandboxed
tools through the relay, no built-in tools, costs in the ledger, and every way the host can fail
ending in :class:`HostModelUnavailableError` (the callers' cue to fall back offline)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

import memdir.llm.base
from memdir.errors import BudgetExhaustedError, HostModelUnavailableError
from memdir.extract.agent import AgentExtractor
from memdir.extract.fallback import FallbackExtractor
from memdir.extract.rule_extractor import RuleExtractor
from memdir.llm.base import CompletionRequest, Message
from memdir.llm.claude_code import ClaudeCodeProvider
from memdir.llm.ledger import CostLedger
from memdir.store import MemoryStore
from tests.realhost.fakeapi import FakeAnthropic, Reply, ToolCall
from tests.realhost.host import DUMMY_KEY, QUIET_ENV, SRC

FEEDBACK = """---
name: no mocked database in tests
description: integration tests must hit a real database, not mocks
type: feedback
---
Don't mock the database in these tests.

**Why:** a mocked database hid a broken migration last quarter.
**How to apply:** use the real test database fixture in integration tests.
"""
# The CLI's own placeholder for deferred tool loading ("never call this tool"): not a tool.
CLI_PLACEHOLDERS = {"DeferredToolPlaceholder"}


@pytest.fixture(autouse=True)
def _allow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", True)


def child_env(cli: Path, api: FakeAnthropic, home: Path, **extra: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "PYTHONPATH": str(SRC),
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "MEMDIR_CLAUDE_CLI": str(cli),
        **QUIET_ENV,
    }
    env.update(extra)
    return {k: v for k, v in env.items() if v}


@pytest.fixture
def ledger(tmp_path: Path) -> CostLedger:
    return CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)


@pytest.fixture
def provider(
    claude_cli: Path, fake_api: FakeAnthropic, tmp_path: Path, ledger: CostLedger
) -> ClaudeCodeProvider:
    env = child_env(claude_cli, fake_api, tmp_path / "home")
    return ClaudeCodeProvider(
        "haiku", env=env, ledger=ledger, cwd=tmp_path, timeout=60, purpose="extract"
    )


def extractor(provider: ClaudeCodeProvider, memory_dir: Path) -> AgentExtractor:
    memory_dir.mkdir(parents=True, exist_ok=True)
    return AgentExtractor(provider, MemoryStore(memory_dir), cwd=memory_dir.parent)


CONVERSATION = [
    Message("user", "don't mock the database in these tests"),
    Message("assistant", "Understood: the integration tests will use the real database."),
]


def test_extraction_writes_a_memory_through_memdir_tools_with_no_builtin_tools(
    provider: ClaudeCodeProvider, fake_api: FakeAnthropic, tmp_path: Path, ledger: CostLedger
) -> None:
    memory_dir = tmp_path / "memory"
    target = memory_dir / "feedback_no_mocked_db.md"
    fake_api.script(
        Reply(
            tool_calls=(
                ToolCall("mcp__memdir__Write", {"file_path": str(target), "content": FEEDBACK}),
            )
        ),
        "Saved one feedback memory.",
    )
    result = asyncio.run(extractor(provider, memory_dir).extract(CONVERSATION, new_messages=2))
    assert result.ok, result.error
    assert result.written == [target]
    assert target.read_text() == FEEDBACK
    assert "no_mocked_db" in (memory_dir / "MEMORY.md").read_text()
    main = fake_api.main_requests()
    assert len(main) == 2
    for request in main:
        names = set(request.tool_names())
        assert names - CLI_PLACEHOLDERS, names
        assert all(n.startswith("mcp__memdir__") for n in names - CLI_PLACEHOLDERS), names
        assert "don't mock the database" in request.text()
    assert "File created successfully" in main[1].text()
    # the cost is recorded: tokens and the CLI's dollar figure
    assert result.run is not None and result.run.cost_usd and result.run.cost_usd > 0
    spend = ledger.spend()
    assert spend.calls == 1 and spend.cost_usd == pytest.approx(result.run.cost_usd)
    assert ledger.rows()[0]["purpose"] == "extract" and ledger.rows()[0]["error"] is None


def test_writes_outside_the_memory_dir_and_refused_shell_commands_are_refused_by_memdir(
    provider: ClaudeCodeProvider, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    memory_dir = tmp_path / "memory"
    outside = tmp_path / "outside.md"
    fake_api.script(
        Reply(
            tool_calls=(
                ToolCall("mcp__memdir__Write", {"file_path": str(outside), "content": "x"}),
                ToolCall("mcp__memdir__Bash", {"command": f"rm -rf {memory_dir}"}),
            )
        ),
        "Nothing saved.",
    )
    result = asyncio.run(extractor(provider, memory_dir).extract(CONVERSATION, new_messages=2))
    assert not outside.exists() and memory_dir.is_dir()
    assert result.run is not None
    assert sorted(c.name for c in result.run.denials) == ["Bash", "Write"]
    results = [
        block
        for message in fake_api.main_requests()[1].body["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 2 and all(r.get("is_error") for r in results)
    assert "outside" in json.dumps(results[0]) or "outside" in json.dumps(results[1])


def test_plain_and_structured_completions(
    provider: ClaudeCodeProvider, fake_api: FakeAnthropic
) -> None:
    schema = {
        "type": "object",
        "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
        "required": ["selected_memories"],
    }
    fake_api.script(Reply(tool_calls=(ToolCall("StructuredOutput", {"selected_memories": ["a"]}),)))
    picked = asyncio.run(
        provider.complete(
            CompletionRequest(system="select", messages=[Message("user", "q")], json_schema=schema)
        )
    )
    assert picked.parsed_json == {"selected_memories": ["a"]}
    plain = asyncio.run(
        provider.complete(CompletionRequest(system="s", messages=[Message("user", "hi")]))
    )
    assert plain.text == "OK."
    assert provider.ledger is not None and provider.ledger.spend().calls == 2


def test_tool_calls_through_complete_are_returned_not_run(
    provider: ClaudeCodeProvider, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    from memdir.llm.base import ToolSpec

    target = tmp_path / "never.md"
    spec = ToolSpec("Write", "write", {"type": "object", "properties": {}})
    fake_api.script(
        Reply(
            text="writing",
            tool_calls=(ToolCall("mcp__memdir__Write", {"file_path": str(target)}),),
        )
    )
    request = CompletionRequest(system="s", messages=[Message("user", "go")], tools=[spec])
    completion = asyncio.run(provider.complete(request))
    assert completion.stop_reason == "tool_use" and completion.text == "writing"
    assert [(c.name, c.input) for c in completion.tool_calls] == [
        ("Write", {"file_path": str(target)})
    ]
    assert not target.exists() and len(fake_api.main_requests()) == 1


def test_budget_exhaustion_stops_calls_and_extraction_falls_back_offline(
    claude_cli: Path, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=0.01)
    ledger.record({"session": "s0", "cost_usd": 0.0125})
    env = child_env(claude_cli, fake_api, tmp_path / "home")
    provider = ClaudeCodeProvider("haiku", env=env, ledger=ledger, cwd=tmp_path)
    with pytest.raises(BudgetExhaustedError):
        asyncio.run(
            provider.complete(CompletionRequest(system="s", messages=[Message("user", "x")]))
        )
    memory_dir = tmp_path / "memory"
    store = MemoryStore(memory_dir)
    both = FallbackExtractor(AgentExtractor(provider, store), RuleExtractor(store))
    said = [Message("user", "remember that I prefer tabs over spaces")]
    result = asyncio.run(both.extract(said, new_messages=1))
    assert result.fallback and "budget" in result.fallback
    assert fake_api.requests == []  # nothing reached the model


def _fails_like(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return script


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
    case: str, message: str, claude_cli: Path, fake_api: FakeAnthropic, tmp_path: Path
) -> None:
    env = child_env(claude_cli, fake_api, tmp_path / "home")
    if case == "absent":
        env["MEMDIR_CLAUDE_CLI"] = str(tmp_path / "no-such-claude")
    elif case == "not logged in":
        env.pop("ANTHROPIC_API_KEY")
    elif case == "failing":
        env["MEMDIR_CLAUDE_CLI"] = str(_fails_like(tmp_path, "echo 'segfault-ish' >&2; exit 3"))
    else:
        env["MEMDIR_CLAUDE_CLI"] = str(_fails_like(tmp_path, "sleep 30"))
    ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)
    timeout = 2 if case == "slow" else 30
    provider = ClaudeCodeProvider("haiku", env=env, ledger=ledger, cwd=tmp_path, timeout=timeout)
    with pytest.raises(HostModelUnavailableError, match=message) as caught:
        asyncio.run(
            provider.complete(CompletionRequest(system="s", messages=[Message("user", "x")]))
        )
    assert "\n" not in str(caught.value)
    if case != "absent":
        assert [r["error"] for r in ledger.rows()] == [str(caught.value)]
    assert fake_api.main_requests() == []
