"""Re-record ``tests/fixtures/hosts/codex/`` from the pinned Codex CLI against the fake API.

    PYTHONPATH=src python -m tests.realhost.record_codex_fixtures [OUT_DIR]

Runs three scripted sessions in a scratch sandbox (recording hooks at every event, a tiny MCP
server, auto-compaction at 2,000 tokens, then a manual compaction through ``codex app-server``)
and writes what Codex sent each hook and the rollout files, anonymised: paths under the sandbox
become ``/home/user/...``, ids and timestamps are renumbered in order of appearance, and long
host-authored texts (Codex's system prompt, skills list, sandbox notes) become ``<elided N
chars>``. Only the fake's scripted words remain, so the files hold no real user data. Run it when
``codex.version`` moves and diff the result.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.realhost.codex_host import CodexHost, find_cli
from tests.realhost.fake_openai import FakeOpenAI, FunctionCall, Reply

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE.parent / "fixtures" / "hosts" / "codex"
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "PostCompact", "SessionEnd")
KEEP_CHARS = 240

RECORD_HOOK = """\
import json, pathlib, sys
data = json.loads(sys.stdin.read())
event = data["hook_event_name"]
out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
(out / f"{len(list(out.iterdir())):02d}-{event}.json").write_text(json.dumps(data))
if event in ("SessionStart", "UserPromptSubmit"):
    context = f"[memory context for {event}]"
    output = {"hookEventName": event, "additionalContext": context}
    print(json.dumps({"hookSpecificOutput": output}))
"""
TINY_MCP = """\
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg["method"]
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "notes", "version": "0"}}
    elif method == "tools/list":
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        result = {"tools": [{"name": "note_save", "description": "save a note",
                             "inputSchema": schema, "annotations": {"readOnlyHint": True}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "{\\"saved\\": true}"}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_OPAQUE = re.compile(r"\b(resp|msg|fc|fco|call|rs|req)_[0-9a-f]{24}\b")
_DAY_DIR = re.compile(r"sessions/\d{4}/\d\d/\d\d/")
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d(\.\d+Z)?")


class Anonymiser:
    """Consistent renaming across every file of one recording."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.names: dict[str, str] = {}

    def _name(self, kind: str, value: str) -> str:
        if value not in self.names:
            count = sum(1 for v in self.names.values() if v.startswith(kind))
            self.names[value] = f"{kind}{count + 1}"
        return self.names[value]

    def text(self, value: str) -> str:
        value = value.replace(self.root + "/home", "/home/user").replace(self.root, "/work")
        value = value.replace(sys.executable, "python3")
        value = _UUID.sub(lambda m: f"00000000-0000-7000-8000-{self._id(m.group(0))}", value)
        value = _OPAQUE.sub(lambda m: f"{m.group(1)}_{self._name(m.group(1), m.group(0))}", value)
        value = _DAY_DIR.sub("sessions/2026/01/01/", value)
        return _STAMP.sub(lambda m: "2026-01-01T00:00:00" + (".000Z" if m.group(1) else ""), value)

    def _id(self, uuid: str) -> str:
        number = self._name("u", uuid)[1:]
        return number.rjust(12, "0")

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        if isinstance(value, str):
            scrubbed = self.text(value)
            if len(scrubbed) > KEEP_CHARS and not scrubbed.startswith("["):
                return f"<elided {len(scrubbed)} chars: {scrubbed[:60]!r}...>"
            return scrubbed
        if isinstance(value, int) and not isinstance(value, bool) and value > 1_600_000_000:
            return 1_767_225_600_000 if value > 10**11 else 1_767_225_600  # epoch s / ms
        if isinstance(value, float) and value > 1_600_000_000:
            return 1_767_225_600.0
        return value


def record(out: Path) -> None:
    cli = find_cli()
    if cli is None:
        raise SystemExit("the pinned Codex CLI is not installed: bash scripts/install-test-deps.sh")
    with tempfile.TemporaryDirectory(prefix="codex-fixtures-") as scratch, FakeOpenAI() as api:
        root = Path(scratch)
        host = CodexHost(cli=cli, api=api, root=root)
        (root / "record_hook.py").write_text(RECORD_HOOK)
        (root / "tiny_mcp.py").write_text(TINY_MCP)
        captures = root / "captures"
        command = shlex.join([sys.executable, str(root / "record_hook.py"), str(captures)])
        host.write_hooks(
            {e: [{"hooks": [{"type": "command", "command": command}]}] for e in EVENTS}
        )
        host.trust_hooks()
        host.add_mcp_server("notes", sys.executable, [str(root / "tiny_mcp.py")])

        # Session 1: reasoning, text, an MCP call, a shell call, a final answer.
        api.script(
            Reply(
                text="I will save that.",
                reasoning="The user stated a durable project fact.",
                calls=(FunctionCall.mcp("notes", "note_save", {"text": "CI uses ubuntu-24.04"}),),
            ),
            Reply(calls=(FunctionCall("exec_command", {"cmd": "echo checked"}),)),
            "Saved: CI uses ubuntu-24.04.",
        )
        host.exec("Remember that CI uses the ubuntu-24.04 image.")
        # Session 1, resumed with a tiny auto-compaction limit: PreCompact/PostCompact (auto).
        host.add_top_level("model_auto_compact_token_limit = 2000")
        api.summary = "SUMMARY: the user said CI uses ubuntu-24.04; it was saved."
        api.script("Yes: ubuntu-24.04.")
        host.exec("Which image does CI use?", resume=True)
        # Manual compaction (the TUI's /compact) through the app-server API.
        thread_id = json.loads(host.rollouts()[0].open().readline())["payload"]["id"]
        host.app_server(
            ("thread/resume", {"threadId": thread_id}),
            ("thread/compact/start", {"threadId": thread_id}),
            until="turn/completed",
        )

        anon = Anonymiser(root)
        hooks_out, rollouts_out = out / "hooks", out / "rollouts"
        for d in (hooks_out, rollouts_out):
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
        for path in sorted(captures.iterdir()):
            data = anon.value(json.loads(path.read_text()))
            (hooks_out / path.name).write_text(json.dumps(data, indent=2) + "\n")
        for n, rollout in enumerate(host.rollouts(), 1):
            lines = [anon.value(json.loads(line)) for line in rollout.read_text().splitlines()]
            (rollouts_out / f"session-{n}.jsonl").write_text(
                "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
            )


if __name__ == "__main__":
    record(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT)
