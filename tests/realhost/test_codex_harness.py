"""The Codex harness itself: the fake speaks the Responses API (checked with the official SDK),
and the real ``codex exec`` runs against it with hooks, hook trust, an MCP server and compaction.
Facts these tests pin are written up in ``docs/hosts-codex-findings.md``."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai

from tests.realhost.codex_host import CodexHost, hook_trust_hash
from tests.realhost.fake_openai import FakeOpenAI, FunctionCall, Reply

# A hook that is not memdir: it records its stdin and answers with additionalContext.
HOOK_SCRIPT = """\
import json, pathlib, sys
data = json.loads(sys.stdin.read())
event = data["hook_event_name"]
out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
(out / f"{event}-{len(list(out.glob(event + '-*')))}.json").write_text(json.dumps(data))
if event in ("SessionStart", "UserPromptSubmit"):
    context = f"context-from-{event}-{data.get('source', data.get('prompt'))}"
    output = {"hookEventName": event, "additionalContext": context}
    print(json.dumps({"hookSpecificOutput": output}))
"""
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "PostCompact", "SessionEnd")


def install_recording_hooks(codex: CodexHost) -> Path:
    """The script above at every event in ``~/.codex/hooks.json``; returns its capture dir."""
    script = codex.root / "record_hook.py"
    script.write_text(HOOK_SCRIPT)
    captures = codex.root / "captured"
    command = shlex.join([sys.executable, str(script), str(captures)])
    codex.write_hooks(
        {event: [{"hooks": [{"type": "command", "command": command}]}] for event in EVENTS}
    )
    return captures


def captured(captures: Path) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(captures.glob("*.json")) if captures.exists() else []:
        found.setdefault(path.name.rsplit("-", 1)[0], []).append(json.loads(path.read_text()))
    return found


def test_fake_answers_the_openai_sdk_responses_and_chat(fake_openai: FakeOpenAI) -> None:
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="dummy", max_retries=0)
    fake_openai.script("plain", Reply(calls=(FunctionCall.mcp("memdir", "memory_recall", {}),)))
    assert client.responses.create(model="m", input="hi").output_text == "plain"
    tools: Any = [{"type": "function", "name": "memory_recall", "parameters": {"type": "object"}}]
    with client.responses.stream(model="m", input="go", tools=tools) as stream:
        final = stream.get_final_response()
    (call,) = final.output
    assert call.type == "function_call" and call.name == "memory_recall"
    fake_openai.script(Reply(calls=(FunctionCall("lookup", {"q": 1}),)))
    chunks = list(
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True
        )
    )
    calls = [c for ch in chunks if ch.choices for c in ch.choices[0].delta.tool_calls or []]
    assert calls[0].function is not None and calls[0].function.name == "lookup"
    assert client.models.list().data == []
    assert [r.path for r in fake_openai.model_requests()] == [
        "/v1/responses",
        "/v1/responses",
        "/v1/chat/completions",
    ]


def test_bare_exec_gets_the_fake_reply_and_the_request_is_logged(codex: CodexHost) -> None:
    codex.api.script("the answer is forty-two")
    proc = codex.exec("what is the answer? (marker-alpha)")
    assert proc.stdout.strip() == "the answer is forty-two"
    (request,) = codex.api.model_requests()
    assert request.path == "/v1/responses" and request.body["stream"] is True
    assert request.message_texts("user")[-1] == "what is the answer? (marker-alpha)"
    assert request.headers["authorization"] == "Bearer sk-memdir-test-dummy-key-not-real"
    assert len(codex.rollouts()) == 1
    # Nothing but the model request was attempted (the proxy logs and refuses everything else).
    assert codex.api.escapes == []


def test_trusted_hook_context_reaches_the_request_as_developer_messages(codex: CodexHost) -> None:
    captures = install_recording_hooks(codex)
    assert {h["trustStatus"] for h in codex.hooks_list()} == {"untrusted"}
    codex.trust_hooks()
    codex.api.script("first reply")
    codex.exec("hello (marker-beta)")

    (request,) = codex.api.model_requests()
    developer = request.message_texts("developer")
    assert "context-from-SessionStart-startup" in developer
    assert "context-from-UserPromptSubmit-hello (marker-beta)" in developer
    seen = captured(captures)
    assert set(seen) == {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}
    (start,) = seen["SessionStart"]
    assert start["source"] == "startup" and start["transcript_path"] == str(codex.rollouts()[0])
    assert seen["Stop"][0]["last_assistant_message"] == "first reply"
    assert seen["SessionEnd"][0]["reason"] == "other"


def test_exec_skips_untrusted_hooks_silently_unless_trust_is_bypassed(codex: CodexHost) -> None:
    captures = install_recording_hooks(codex)
    plain = codex.exec("untrusted")
    assert captured(captures) == {}
    assert not [line for line in plain.stderr.splitlines() if line.startswith("hook:")]
    codex.exec("bypassed", bypass_hook_trust=True)
    assert "context-from-SessionStart-startup" in codex.api.model_requests()[-1].text()
    # Editing a trusted hook makes it "modified": not run again until re-trusted.
    codex.trust_hooks()
    command = codex.hooks_list()[0]["command"]
    codex.write_hooks(
        {"SessionStart": [{"hooks": [{"type": "command", "command": command + " "}]}]}
    )
    assert [h["trustStatus"] for h in codex.hooks_list()] == ["modified"]


def test_trust_hash_is_computable_without_codex(codex: CodexHost) -> None:
    """What ``memdir doctor`` can check offline: the key and hash Codex stores for a hook."""
    codex.write_hooks(
        {
            "SessionStart": [
                {
                    "matcher": "startup|resume",
                    "hooks": [{"type": "command", "command": "memdir hook é", "timeout": 7}],
                }
            ],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "memdir hook end"}]}],
        }
    )
    listed = {h["eventName"]: h for h in codex.hooks_list()}
    start, end = listed["sessionStart"], listed["sessionEnd"]
    assert start["key"] == f"{codex.codex_home / 'hooks.json'}:session_start:0:0"
    assert start["currentHash"] == hook_trust_hash(
        "SessionStart", "memdir hook é", timeout=7, matcher="startup|resume"
    )
    assert end["timeoutSec"] == 1
    assert end["currentHash"] == hook_trust_hash("SessionEnd", "memdir hook end", timeout=1)


def test_an_mcp_tool_call_reaches_memdir_and_its_output_comes_back(codex: CodexHost) -> None:
    # Without "approve", `exec` (approval "never") refuses every tool without readOnlyHint.
    codex.add_mcp_server("memdir", str(codex.bin / "memdir"), ["mcp"], approval="approve")
    save = FunctionCall.mcp(
        "memdir",
        "memory_save",
        {
            "name": "ci-image",
            "description": "which image CI uses",
            "type": "project",
            "body": "CI jobs run on the ubuntu-24.04 image (cobalt-finch).",
        },
    )
    codex.api.script(Reply(calls=(save,)), "Saved.")
    assert codex.exec("Remember the CI image.").stdout.strip() == "Saved."

    first, second = codex.api.model_requests()
    assert "mcp__memdir__memory_save" in first.tool_names()
    (output,) = second.function_outputs()
    assert output["call_id"] == save.call_id
    # Codex's text of a tool result: "Wall time: <s> seconds\nOutput:\n<the tool's JSON>".
    assert output["output"].endswith('\nOutput:\n{"path":"ci_image.md","created":true}')
    assert (codex.memory_dir() / "ci_image.md").read_text().count("cobalt-finch") == 1


def test_auto_compaction_fires_pre_and_post_compact_then_session_start(codex: CodexHost) -> None:
    captures = install_recording_hooks(codex)
    codex.trust_hooks()
    codex.add_top_level("model_auto_compact_token_limit = 2000")
    codex.exec("first (marker-gamma)")
    codex.exec("second", resume=True)

    (compaction,) = codex.api.compaction_requests()
    assert "first (marker-gamma)" in compaction.message_texts("user")
    after = codex.api.model_requests()[-1]
    assert any(codex.api.summary in t for t in after.message_texts("user"))
    seen = captured(captures)
    assert [e["trigger"] for e in seen["PreCompact"]] == ["auto"]
    assert [e["trigger"] for e in seen["PostCompact"]] == ["auto"]
    assert sorted(e["source"] for e in seen["SessionStart"]) == ["compact", "resume", "startup"]


def test_a_missing_codex_cli_fails_with_the_install_command(tmp_path: Path) -> None:
    """CI installs the CLI: without it these tests fail naming the fix, they never skip."""
    test = (
        f"{Path(__file__)}::{test_bare_exec_gets_the_fake_reply_and_the_request_is_logged.__name__}"
    )
    env = {**os.environ, "MEMDIR_TEST_CODEX": str(tmp_path / "no-such-codex")}
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
