"""Re-record ``tests/fixtures/hosts/gemini/`` from the real Gemini CLI (run by hand, not a test).

    PYTHONPATH=src python -m tests.realhost.record_gemini_fixtures

A capture hook on every lifecycle event writes its stdin (and the GEMINI_* variables it got) to
``hook-input/<Event>.<source|trigger|reason>.json`` and answers SessionStart and BeforeAgent with a
little ``additionalContext`` (so the session shows where it lands). Three sessions drive it: a
prompt whose reply carries a thought and an MCP ``memory_save`` call, a ``--resume latest`` that
compresses (a tiny ``model.compressionThreshold``), and ``-p /compress`` (the only headless way
to a ``manual`` trigger). The session file they leave is kept as ``session/recorded.jsonl``.
Sandbox paths are rewritten to ``/tmp/gemini-fixture`` so the files do not change with the tmp dir.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.realhost.fake_gemini import FakeGemini, FunctionCall, Reply
from tests.realhost.gemini_host import VERSION, GeminiHost, find_cli

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "hosts" / "gemini"
PLACEHOLDER = "/tmp/gemini-fixture"
EVENTS = ("SessionStart", "BeforeAgent", "AfterAgent", "PreCompress", "SessionEnd")
TOOL_EVENTS = ("BeforeTool", "AfterTool")

CAPTURE = """\
import json, os, sys
data = json.load(sys.stdin)
qualifier = data.get("source") or data.get("trigger") or data.get("reason")
name = data["hook_event_name"] + (f".{qualifier}" if qualifier else "") + ".json"
env = {k: v for k, v in os.environ.items() if k.startswith("GEMINI_") or k == "CLAUDE_PROJECT_DIR"}
env.pop("GEMINI_API_KEY", None)
path = os.path.join(sys.argv[1], name)
if not os.path.exists(path):
    with open(path, "w") as f:
        json.dump({"stdin": data, "env": dict(sorted(env.items()))}, f, indent=2)
context = {"SessionStart": "Memory index: ci_image.md <project>", "BeforeAgent": "Recalled: none"}
# Only at startup: a SessionStart context is prepended to the prompt, so "/compress" would no
# longer start with "/" and would not run as a command.
if data["hook_event_name"] in context and data.get("source") != "resume":
    text = context[data["hook_event_name"]]
    print(json.dumps({"hookSpecificOutput": {"additionalContext": text}}))
else:
    print("{}")
"""


def record(root: Path) -> None:
    cli = find_cli()
    if cli is None:
        raise SystemExit(f"the Gemini CLI {VERSION} is not installed")
    captured = root / "captured"
    captured.mkdir(parents=True)
    script = root / "capture.py"
    script.write_text(CAPTURE)
    hook = {"type": "command", "command": f"'{sys.executable}' '{script}' '{captured}'"}
    hooks = {e: [{"hooks": [dict(hook, name=f"capture-{e}")]}] for e in EVENTS + TOOL_EVENTS}
    memdir = {"command": "memdir", "args": ["mcp"], "trust": True}
    with FakeGemini() as api:
        host = GeminiHost(cli=cli, api=api, root=root)
        host.settings({"hooks": hooks, "mcpServers": {"memdir": memdir}})
        save = FunctionCall(
            "mcp_memdir_memory_save",
            {
                "name": "ci-image",
                "description": "which image CI uses",
                "type": "project",
                "body": "CI jobs run on the ubuntu-24.04 image (cobalt-finch).",
            },
        )
        thought = "**Saving the fact** The user wants the CI image remembered."
        api.script(Reply(thought=thought, function_calls=(save,)), "Saved.")
        host.prompt("Remember that CI jobs run on the ubuntu-24.04 image. " + "Context. " * 40)
        host.settings(
            {
                "hooks": hooks,
                "mcpServers": {"memdir": memdir},
                "model": {"compressionThreshold": 0.0001},
            }
        )
        api.script("ubuntu-24.04 (cobalt-finch).")
        host.prompt("Which image does CI use?", resume=True)
        host.prompt("/compress", resume=True)
        (session,) = host.session_files()
        write(captured, session, root)


def normalise(text: str, root: Path) -> str:
    return text.replace(str(root), PLACEHOLDER)


def write(captured: Path, session: Path, root: Path) -> None:
    (OUT / "hook-input").mkdir(parents=True, exist_ok=True)
    (OUT / "session").mkdir(parents=True, exist_ok=True)
    for path in sorted(captured.glob("*.json")):
        (OUT / "hook-input" / path.name).write_text(normalise(path.read_text(), root) + "\n")
    (OUT / "session" / "recorded.jsonl").write_text(normalise(session.read_text(), root))


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="gemini-fixture-") as tmp:
        record(Path(tmp))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
