"""The ``gemini`` provider against the real Gemini CLI and the fake Gemini API: the child sees only
memdir's relayed tools and memdir's system prompt, a tool call the fake model scripts is run by
memdir's sandboxed executor, the user's hooks, MCP servers and GEMINI.md stay out, tokens are
booked — and every way the host can fail ends in :class:`HostModelUnavailableError`.

The whole lifecycle (a Gemini session turn whose AfterAgent hook runs extraction through
``gemini -p``) is ``test_gemini_host_model_hooks.py``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import memdir.llm.base
from memdir.errors import BudgetExhaustedError, HostModelUnavailableError
from memdir.extract.agent import AgentExtractor
from memdir.llm.base import CompletionRequest, Message, ToolSpec
from memdir.llm.gemini_cli import HostCliProvider
from memdir.llm.ledger import CostLedger
from memdir.store import MemoryStore
from tests.realhost.fake_gemini import FakeGemini, FunctionCall, LoggedRequest, Reply
from tests.realhost.gemini_host import GeminiHost

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
# A user hook and a user MCP server that leave a mark when something runs them.
MARKER = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran')"
USER_GEMINI_MD = "Always answer in French (user-gemini-md-marker)."


@pytest.fixture(autouse=True)
def _allow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", True)


@pytest.fixture
def ledger(tmp_path: Path) -> CostLedger:
    return CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)


def make_provider(gemini: GeminiHost, ledger: CostLedger, **kw: object) -> HostCliProvider:
    env = dict(gemini.env, MEMDIR_GEMINI_CLI=str(gemini.cli))
    return HostCliProvider(
        "haiku",
        env=env,
        ledger=ledger,
        cwd=gemini.project,
        purpose="extract",
        **kw,  # type: ignore[arg-type]
    )


def system_prompt(request: LoggedRequest) -> str:
    """The text of the request's system instruction (its parts, without the role)."""
    parts = request.body.get("systemInstruction", {}).get("parts") or []
    return "".join(str(p.get("text", "")) for p in parts)


def relay_tool(tool: str, args: dict[str, object]) -> FunctionCall:
    return FunctionCall(f"mcp_memdir_{tool}", args)


def user_with_hooks_servers_and_gemini_md(gemini: GeminiHost, marks: Path) -> None:
    """What a real user's ~/.gemini holds: a hook on every event, MCP servers, a GEMINI.md."""
    hook = {"type": "command", "command": f"'{sys.executable}' -c \"{MARKER}\" '{marks}/hook'"}
    events = ("SessionStart", "BeforeAgent", "AfterAgent", "BeforeTool", "SessionEnd")
    server = {"command": sys.executable, "args": ["-c", MARKER, str(marks / "server")]}
    gemini.settings(
        {
            "hooks": {e: [{"hooks": [hook]}] for e in events},
            "mcpServers": {"usersrv": {**server, "trust": True}},
        }
    )
    (gemini.home / ".gemini" / "GEMINI.md").write_text(USER_GEMINI_MD)


def test_extraction_writes_through_memdirs_relay_with_no_gemini_tools_hooks_or_servers(
    gemini: GeminiHost, fake_gemini: FakeGemini, tmp_path: Path, ledger: CostLedger
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    user_with_hooks_servers_and_gemini_md(gemini, marks)
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    target = memory_dir / "feedback_no_mocked_db.md"
    fake_gemini.script(
        Reply(
            function_calls=(relay_tool("Write", {"file_path": str(target), "content": FEEDBACK}),)
        ),
        "Saved one feedback memory.",
    )
    extractor = AgentExtractor(make_provider(gemini, ledger), MemoryStore(memory_dir))
    result = asyncio.run(extractor.extract(CONVERSATION, new_messages=2))

    assert result.ok, result.error
    assert result.written == [target] and target.read_text() == FEEDBACK
    assert "no_mocked_db" in (memory_dir / "MEMORY.md").read_text()
    requests = fake_gemini.main_requests()
    assert len(requests) == 2
    assert fake_gemini.side_requests() == []  # a concrete model: no routing request
    for request in requests:
        assert request.model == "gemini-2.5-flash"  # hostModel "haiku": the small tier
        names = set(request.function_names())
        assert names >= {"mcp_memdir_Write", "mcp_memdir_Read"}, names
        assert all(n.startswith("mcp_memdir_") for n in names), names  # no shell, no file tools
        assert system_prompt(request) == extractor.system  # memdir's prompt, nothing of Gemini's
        assert "mocked migration" in request.text()
        assert "user-gemini-md-marker" not in request.text()
    (response,) = requests[1].function_responses()
    assert "feedback_no_mocked_db.md" in str(response["response"])
    assert sorted(p.name for p in marks.iterdir()) == []  # no user hook or server ever ran
    assert not (gemini.home / ".gemini" / "tmp").exists()  # nothing in the user's sessions
    (row,) = ledger.rows()
    assert row["error"] is None and row["purpose"] == "extract" and row["host"] == "gemini"
    assert row["model"] == "gemini-2.5-flash"
    assert row["input_tokens"] > 0 and row["output_tokens"] > 0 and row["cost_usd"] > 0
    assert row["cost_estimated"] is True and row["usage_estimated"] is False
    assert result.run is not None and result.run.cost_usd == pytest.approx(
        row["cost_usd"], abs=1e-6
    )


def test_writes_outside_the_memory_dir_and_refused_commands_are_refused_by_memdir(
    gemini: GeminiHost, fake_gemini: FakeGemini, tmp_path: Path, ledger: CostLedger
) -> None:
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    outside = tmp_path / "outside.md"
    fake_gemini.script(
        Reply(
            function_calls=(
                relay_tool("Write", {"file_path": str(outside), "content": "x"}),
                relay_tool("Bash", {"command": f"rm -rf {memory_dir}"}),
                FunctionCall("run_shell_command", {"command": f"rm -rf {memory_dir}"}),
                FunctionCall("write_file", {"file_path": str(outside), "content": "x"}),
            )
        ),
        "Nothing saved.",
    )
    extractor = AgentExtractor(make_provider(gemini, ledger), MemoryStore(memory_dir))
    result = asyncio.run(extractor.extract(CONVERSATION, new_messages=2))
    assert not outside.exists() and memory_dir.is_dir()
    assert result.run is not None
    assert sorted(c.name for c in result.run.denials) == ["Bash", "Write"]
    responses = fake_gemini.main_requests()[1].function_responses()
    assert len(responses) == 4
    builtin = [r for r in responses if not r["name"].startswith("mcp_memdir_")]
    assert len(builtin) == 2 and all("not found" in str(r["response"]) for r in builtin)


def test_plain_and_structured_completions_and_the_model_switch(
    gemini: GeminiHost, fake_gemini: FakeGemini, ledger: CostLedger
) -> None:
    provider = make_provider(gemini, ledger)
    plain = asyncio.run(
        provider.complete(CompletionRequest(system="s", messages=[Message("user", "hi")]))
    )
    assert plain.text == "OK." and plain.usage.input_tokens > 0
    schema = {
        "type": "object",
        "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
        "required": ["selected_memories"],
    }
    fake_gemini.script('{"selected_memories": ["a.md"]}')
    named = make_provider(gemini, ledger)
    named.model = "gemini-2.5-flash-lite"
    picked = asyncio.run(
        named.complete(
            CompletionRequest(system="select", messages=[Message("user", "q")], json_schema=schema)
        )
    )
    assert picked.parsed_json == {"selected_memories": ["a.md"]}
    first, second = fake_gemini.main_requests()
    assert first.model == "gemini-2.5-flash" and first.function_names() == []
    assert second.model == "gemini-2.5-flash-lite"
    assert '"selected_memories"' in system_prompt(second)  # the schema went into the prompt
    assert [r["model"] for r in ledger.rows()] == ["gemini-2.5-flash", "gemini-2.5-flash-lite"]


def test_complete_with_tools_captures_the_first_responses_calls_and_runs_none(
    gemini: GeminiHost, fake_gemini: FakeGemini, tmp_path: Path, ledger: CostLedger
) -> None:
    target = tmp_path / "memory" / "x.md"
    write = relay_tool("Write", {"file_path": str(target), "content": "x"})
    fake_gemini.script(Reply(text="writing", function_calls=(write,)), "never asked for")
    specs = [ToolSpec("Write", "write a memory file", {"type": "object", "properties": {}})]
    request = CompletionRequest(system="s", messages=[Message("user", "go")], tools=specs)
    completion = asyncio.run(make_provider(gemini, ledger).complete(request))
    assert completion.stop_reason == "tool_use" and completion.text == "writing"
    assert [(c.name, c.input) for c in completion.tool_calls] == [("Write", write.args)]
    assert len(fake_gemini.main_requests()) == 1 and fake_gemini.pending() == 1
    assert not target.exists()
    (row,) = ledger.rows()
    assert row["error"] is None and row["input_tokens"] > 0


def test_a_model_that_never_stops_calling_is_ended_at_the_turn_limit(
    gemini: GeminiHost, fake_gemini: FakeGemini, tmp_path: Path, ledger: CostLedger
) -> None:
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    fake_gemini.script(
        *(Reply(function_calls=(relay_tool("Read", {"file_path": str(memory_dir)}),)),) * 12
    )
    provider = make_provider(gemini, ledger)
    extractor = AgentExtractor(provider, MemoryStore(memory_dir), max_turns=3)
    result = asyncio.run(extractor.extract(CONVERSATION, new_messages=2))
    assert len(fake_gemini.main_requests()) == 3
    assert result.run is not None and result.run.stop_reason == "max_turns"
    (row,) = ledger.rows()
    assert row["error"] is None and row["input_tokens"] > 0


def test_a_spent_budget_reaches_no_model(
    gemini: GeminiHost, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=0.01)
    ledger.record({"session": "s0", "cost_usd": 0.0125})
    with pytest.raises(BudgetExhaustedError):
        asyncio.run(
            make_provider(gemini, ledger).complete(
                CompletionRequest(system="s", messages=[Message("user", "x")])
            )
        )
    assert fake_gemini.requests == []


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
    case: str, message: str, gemini: GeminiHost, fake_gemini: FakeGemini, tmp_path: Path
) -> None:
    env = dict(gemini.env, MEMDIR_GEMINI_CLI=str(gemini.cli))
    if case == "absent":
        env["MEMDIR_GEMINI_CLI"] = str(tmp_path / "no-such-gemini")
    elif case == "not logged in":
        env.pop("GEMINI_API_KEY")
    elif case == "failing":
        script = tmp_path / "gemini-wrapper"
        script.write_text("#!/bin/sh\necho 'segfault-ish' >&2; exit 3\n")
        script.chmod(0o755)
        env["MEMDIR_GEMINI_CLI"] = str(script)
    else:
        env["GOOGLE_GEMINI_BASE_URL"] = "http://127.0.0.1:9"  # nothing listens: the CLI retries
    ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)
    provider = HostCliProvider("haiku", env=env, ledger=ledger, timeout=4 if case == "slow" else 60)
    with pytest.raises(HostModelUnavailableError, match=message) as caught:
        asyncio.run(
            provider.complete(CompletionRequest(system="s", messages=[Message("user", "x")]))
        )
    assert "\n" not in str(caught.value)
    if case == "failing":
        assert "segfault-ish" in str(caught.value)
    if case != "absent":
        assert [r["error"] for r in ledger.rows()] == [str(caught.value)]
