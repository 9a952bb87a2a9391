"""The harness itself: the fake API speaks the Messages protocol (checked with the official SDK),
and the real CLI runs against it in print, continue and stream-json modes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anthropic

from tests.realhost.fakeapi import FakeAnthropic, Reply, ToolCall
from tests.realhost.host import ClaudeHost


def test_fake_api_answers_the_sdk_plain_and_streaming(fake_api: FakeAnthropic) -> None:
    client = anthropic.Anthropic(base_url=fake_api.base_url, api_key="dummy", max_retries=0)
    tools = [{"name": "lookup", "description": "d", "input_schema": {"type": "object"}}]
    fake_api.script("first", Reply(tool_calls=(ToolCall("lookup", {"q": "pears"}),)))
    plain = client.messages.create(
        model="m", max_tokens=10, tools=tools, messages=[{"role": "user", "content": "hi"}]
    )
    assert [b.type for b in plain.content] == ["text"] and plain.content[0].text == "first"
    with client.messages.stream(
        model="m", max_tokens=10, tools=tools, messages=[{"role": "user", "content": "go"}]
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert final.content[0].type == "tool_use" and final.content[0].input == {"q": "pears"}
    # A side request (no tools) never takes a scripted reply.
    fake_api.script("kept for the agent loop")
    side = client.messages.create(
        model="m", max_tokens=10, messages=[{"role": "user", "content": "title?"}]
    )
    assert side.content[0].text == "OK." and fake_api.pending() == 1
    count = client.messages.count_tokens(model="m", messages=[{"role": "user", "content": "x"}])
    assert count.input_tokens > 0
    assert [r.body["messages"][0]["content"] for r in fake_api.requests[:2]] == ["hi", "go"]


def test_real_cli_print_continue_and_stream_json(host: ClaudeHost) -> None:
    host.api.script("the answer is forty-two")
    first = host.prompt("what is the answer? (marker-alpha)")
    assert "the answer is forty-two" in first.stdout
    main = host.api.main_requests()
    assert main and "marker-alpha" in main[-1].text()
    assert main[-1].headers.get("x-api-key", "").startswith("sk-ant-api03-memdir-test")

    host.api.clear()
    events = host.stream_json("and again? (marker-beta)", resume=True)
    result = [e for e in events if e.get("type") == "result"]
    assert result and result[-1]["result"] == "OK."
    resumed = host.api.main_requests()[-1].text()
    # --continue replays the first turn to the model, then the new prompt.
    assert "marker-alpha" in resumed and "the answer is forty-two" in resumed
    assert "marker-beta" in resumed


def test_a_missing_cli_fails_the_suite_with_the_install_command(tmp_path: Path) -> None:
    """CI installs the CLI: without it the real-host tests fail (an error naming the fix), they
    never skip and let a green run hide that they did not run."""
    test = f"{Path(__file__)}::{test_real_cli_print_continue_and_stream_json.__name__}"
    env = {**os.environ, "MEMDIR_TEST_CLAUDE": str(tmp_path / "no-such-claude")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout
    assert "1 error" in proc.stdout and "skipped" not in proc.stdout
    assert "scripts/install-test-deps.sh" in proc.stdout
