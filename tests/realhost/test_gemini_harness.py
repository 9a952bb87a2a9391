"""The Gemini harness itself: the real ``gemini -p`` against the fake v1beta API (print, resume,
json), lifecycle hooks whose context reaches the model, and an MCP tool call round trip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.realhost.fake_gemini import FunctionCall, Reply
from tests.realhost.gemini_host import GeminiHost

# A hook that is not memdir: it answers SessionStart and BeforeAgent with additionalContext.
CONTEXT_HOOK = """\
import json, sys
event = json.load(sys.stdin)["hook_event_name"]
print(json.dumps({"hookSpecificOutput": {"hookEventName": event,
                                          "additionalContext": f"ctx-from-{event} <b>"}}))
"""


def test_bare_prompt_and_resume_reach_the_fake(
    gemini: GeminiHost,
) -> None:
    gemini.api.script("the answer is forty-two")
    first = gemini.prompt("what is the answer? (marker-alpha)")
    assert first.stdout.strip() == "the answer is forty-two"
    (main,) = gemini.api.main_requests()
    assert main.user_texts()[-1] == "what is the answer? (marker-alpha)"
    assert main.headers.get("x-goog-api-key", "").startswith("memdir-test-dummy")
    # The model-routing classifier asked for JSON and got a schema-valid default.
    assert any(r.wants_json for r in gemini.api.side_requests())

    gemini.api.clear()
    result = gemini.json("and again? (marker-beta)", resume=True)
    assert result["response"] == "OK."
    assert any("main" in m["roles"] for m in result["stats"]["models"].values())
    resumed = gemini.api.main_requests()[-1].text()
    # --resume latest replays the first turn to the model, then the new prompt.
    assert "marker-alpha" in resumed and "the answer is forty-two" in resumed
    assert "marker-beta" in resumed
    # the resumed session is on disk under its id; on a busy machine Gemini 0.61 itself (no
    # memdir installed here) sometimes writes the resumed session to a second file beside the
    # first, so the harness finds it by id rather than counting on one file
    heads = [p.read_text().splitlines()[0] for p in gemini.session_files()]
    assert sum(result["session_id"] in head for head in heads) >= 1, heads


def test_session_start_and_before_agent_context_reach_the_model(gemini: GeminiHost) -> None:
    script = gemini.root / "context_hook.py"
    script.write_text(CONTEXT_HOOK)
    command = {"type": "command", "command": f"'{sys.executable}' '{script}'", "timeout": 20000}
    gemini.settings({"hooks": {e: [{"hooks": [command]}] for e in ("SessionStart", "BeforeAgent")}})
    gemini.prompt("hello (marker-gamma)")
    (main,) = gemini.api.main_requests()
    texts = main.user_texts()
    # SessionStart's context is prepended to the prompt, BeforeAgent's is a part after it; the
    # CLI escapes '<' and '>' inside additionalContext.
    start = "<hook_context>ctx-from-SessionStart &lt;b&gt;</hook_context>\n\nhello (marker-gamma)"
    assert start in texts
    assert texts[-1] == "<hook_context>ctx-from-BeforeAgent &lt;b&gt;</hook_context>"
    assert "ctx-from" not in main.system_text()


def test_a_scripted_function_call_reaches_memdirs_mcp_server(gemini: GeminiHost) -> None:
    gemini.settings(
        {"mcpServers": {"memdir": {"command": "memdir", "args": ["mcp"], "trust": True}}}
    )
    memory = {
        "name": "ci-image",
        "description": "which image CI uses",
        "type": "project",
        "body": "CI jobs run on the ubuntu-24.04 image (cobalt-finch).",
    }
    call = FunctionCall("mcp_memdir_memory_save", memory)
    gemini.api.script(Reply(function_calls=(call,)), "Saved.")
    assert gemini.prompt("Remember which image CI uses.").stdout.strip().endswith("Saved.")
    first, second = gemini.api.main_requests()
    assert "mcp_memdir_memory_save" in first.function_names()
    (response,) = second.function_responses()
    assert response["id"] == call.id and response["name"] == call.name
    # MCP results come back as text wrapped in <untrusted_context> under "output".
    output = response["response"]["output"]
    assert output.startswith("<untrusted_context>\n") and output.endswith("\n</untrusted_context>")
    assert json.loads(output.split("\n", 1)[1].rsplit("\n", 1)[0]) == {
        "path": "ci_image.md",
        "created": True,
    }


def test_a_missing_cli_fails_the_suite_with_the_install_command(tmp_path: Path) -> None:
    """CI installs the CLI: without it these tests fail (an error naming the fix), never skip."""
    test = f"{Path(__file__)}::{test_bare_prompt_and_resume_reach_the_fake.__name__}"
    env = {**os.environ, "MEMDIR_TEST_GEMINI": str(tmp_path / "no-such-gemini")}
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
