"""The claude-code provider's process handling, with a stand-in CLI that replays stream-json
recorded from the real CLI (the real CLI runs in tests/realhost/test_host_model.py)."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

import pytest

from memdir.errors import HostModelUnavailableError, ProviderConfigError
from memdir.llm.base import CompletionRequest, Message
from memdir.llm.claude_code import ClaudeCodeProvider, find_cli
from memdir.llm.factory import provider_from_spec
from memdir.llm.ledger import CostLedger

DATA = Path(__file__).parent / "data" / "claude_code"
REQUEST = CompletionRequest(system="be brief", messages=[Message("user", "hello")])


def replaying_cli(tmp_path: Path, recording: str, *, then: str = "") -> Path:
    """A `claude` that records its argv, env and stdin, then prints a recorded stream."""
    script = tmp_path / "claude"
    log = tmp_path / "call.json"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"json.dump({{'argv': sys.argv[1:], 'env': dict(os.environ), 'stdin': sys.stdin.read()}},"
        f" open({str(log)!r}, 'w'))\n"
        f"sys.stdout.write(open({str(DATA / recording)!r}).read()); sys.stdout.flush()\n"
        + (f"import time; time.sleep({then})\n" if then else "")
    )
    script.chmod(0o755)
    return script


def provider(cli: Path, tmp_path: Path, **kw: object) -> ClaudeCodeProvider:
    ledger = CostLedger(tmp_path / "costs.jsonl", budget_usd=1.0)
    env = {"PATH": "/usr/bin:/bin", "MEMDIR_CLAUDE_CLI": str(cli), "CLAUDECODE": "1"}
    return ClaudeCodeProvider("haiku", env=env, ledger=ledger, cwd=tmp_path, **kw)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _allow(allow_real_providers: None) -> None:
    pass


def test_a_plain_call_maps_the_reply_and_records_the_cost(tmp_path: Path) -> None:
    p = provider(replaying_cli(tmp_path, "text.jsonl"), tmp_path)
    completion = asyncio.run(p.complete(REQUEST))
    assert completion.text == "ok from fake" and completion.usage.input_tokens == 120
    call = json.loads((tmp_path / "call.json").read_text())
    assert call["stdin"] == "hello"
    assert call["env"]["MEMDIR_CHILD"] == "1" and "CLAUDECODE" not in call["env"]
    argv = call["argv"]
    assert argv[argv.index("--model") + 1] == "haiku"
    assert argv[argv.index("--tools") + 1] == "" and "--mcp-config" not in argv
    assert argv[argv.index("--max-budget-usd") + 1] == "1.0000"
    assert p.ledger is not None
    (row,) = p.ledger.rows()
    assert row["cost_usd"] == pytest.approx(0.000027) and row["error"] is None


def test_the_ledger_keeps_the_cost_the_cli_reported_to_the_last_digit(tmp_path: Path) -> None:
    # seen in CI: a run of $0.0051175 was booked as $0.005117, so the day's spend in the ledger
    # drifted from what the calls cost (the digits vary with the prompt's length)
    recording = tmp_path / "seven_digits.jsonl"
    text = (DATA / "text.jsonl").read_text()
    recording.write_text(text.replace('"total_cost_usd":0.000027', '"total_cost_usd":0.0051175'))
    p = provider(replaying_cli(tmp_path, str(recording)), tmp_path)
    asyncio.run(p.complete(REQUEST))
    assert p.ledger is not None
    (row,) = p.ledger.rows()
    assert row["cost_usd"] == 0.0051175
    assert p.ledger.spend().cost_usd == pytest.approx(p.cost_usd, rel=1e-12)


def test_an_auth_refusal_stops_the_cli_instead_of_waiting_out_its_retries(
    tmp_path: Path,
) -> None:
    # The stand-in prints the recorded 401 retry events and would then hang for a minute.
    p = provider(replaying_cli(tmp_path, "auth_retry.jsonl", then="60"), tmp_path, timeout=30)
    with pytest.raises(HostModelUnavailableError, match="not logged in"):
        asyncio.run(p.complete(REQUEST))


def test_a_logged_out_cli_is_unavailable(tmp_path: Path) -> None:
    p = provider(replaying_cli(tmp_path, "not_logged_in.jsonl"), tmp_path)
    with pytest.raises(HostModelUnavailableError, match="not logged in"):
        asyncio.run(p.complete(REQUEST))
    assert p.ledger is not None and "not logged in" in p.ledger.rows()[0]["error"]


def test_find_cli_and_the_factory(tmp_path: Path) -> None:
    assert find_cli({"PATH": str(tmp_path)}) is None
    cli = replaying_cli(tmp_path, "text.jsonl")
    assert find_cli({"PATH": str(tmp_path)}) == str(cli)
    assert find_cli({"MEMDIR_CLAUDE_CLI": str(tmp_path / "nope")}) is None
    built = provider_from_spec("claude-code:sonnet", {"PATH": str(tmp_path)})
    assert isinstance(built, ClaudeCodeProvider) and built.model == "sonnet"


def test_the_test_suite_cannot_build_it_by_accident(monkeypatch: pytest.MonkeyPatch) -> None:
    import memdir.llm.base

    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", False)
    with pytest.raises(ProviderConfigError):
        provider_from_spec("claude-code:haiku", {})


def test_argv_is_safe_for_any_system_prompt(tmp_path: Path) -> None:
    p = provider(replaying_cli(tmp_path, "text.jsonl"), tmp_path)
    tricky = "--tools Bash; $(rm -rf /) `x` \n-p"
    asyncio.run(p.complete(CompletionRequest(system=tricky, messages=[Message("user", "hi")])))
    argv = json.loads((tmp_path / "call.json").read_text())["argv"]
    assert argv[argv.index("--system-prompt") + 1] == tricky
    assert shlex.join(argv).count("--tools") == 2  # ours, and the one inside the quoted prompt


def test_a_stream_line_longer_than_asyncios_default_buffer_is_read(tmp_path: Path) -> None:
    """A tool result or reply of hundreds of KiB is one stream-json line (the default
    StreamReader limit is 64 KiB: readline would fail and the call would be lost)."""
    big = "x" * 300_000
    lines = (DATA / "text.jsonl").read_text().splitlines()
    result = json.loads(lines[-1])
    result["result"] = big
    recording = tmp_path / "big.jsonl"
    recording.write_text("\n".join([*lines[:-1], json.dumps(result)]) + "\n")
    p = provider(replaying_cli(tmp_path, str(recording)), tmp_path)
    assert asyncio.run(p.complete(REQUEST)).text == big
