"""Re-record ``tests/fixtures/hosts/{qwen,copilot}/`` from the real CLIs (run by hand, not a test).

    PYTHONPATH=src python -m tests.realhost.record_npm_fixtures [qwen|copilot ...]

A capture hook on every lifecycle event writes its stdin to ``hook-input/<event>.<n>.json`` and
answers with a marker context in the host's own output shape. Three runs drive it: a prompt whose
reply calls the shell tool (Qwen Code fires its prompt hook again for the continuation), a
continued session, and a compaction (``/compress``, ``/compact``). The transcript they leave is
kept as ``transcript.jsonl``, less Copilot CLI's bulky copies of its system prompt and message
list (:data:`BULKY`). Sandbox paths are rewritten to ``/tmp/<host>-fixture`` so the files do not
change with the tmp dir.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from tests.realhost.fake_openai import FakeOpenAI, FunctionCall, Reply
from tests.realhost.npm_host import KINDS, NpmHost

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
CAPTURE = """\
import json, os, sys
data = json.load(sys.stdin)
event = sys.argv[2]
n = len([f for f in os.listdir(sys.argv[1]) if f.startswith(event + ".")])
with open(os.path.join(sys.argv[1], f"{event}.{n}.json"), "w") as f:
    json.dump(data, f, indent=2)
if sys.argv[3] == "top":
    print(json.dumps({"additionalContext": f"MARKER-{event}"}))
else:
    out = {"hookEventName": event, "additionalContext": f"MARKER-{event}"}
    print(json.dumps({"hookSpecificOutput": out}))
"""
EVENTS = {
    "qwen": ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"),
    "copilot": ("sessionStart", "userPromptSubmitted", "agentStop", "preCompact", "sessionEnd"),
}
ECHO = {"command": "echo hi", "description": "say hi"}
SHELL = {
    "qwen": ("run_shell_command", ECHO),
    "copilot": ("bash", ECHO),
    "pi": ("bash", ECHO),
    "cline": ("run_commands", {"commands": ["echo hi"]}),
}
# Copilot CLI's copies of the whole system prompt and message list (~100 KB a run): left out
BULKY = ("system.message", "model.messages_snapshot", "model.model_call_success")
COMPACT = {"qwen": "/compress", "copilot": "/compact", "pi": "/compact", "cline": "/compact now"}


def _hooks(name: str, script: Path, into: Path) -> dict[str, object]:
    def command(event: str) -> str:
        shape = "top" if name == "copilot" else "nested"
        return f"{sys.executable} {script} {into} {event} {shape}"

    if name == "copilot":
        return {
            e: [{"type": "command", "bash": command(e), "timeoutSec": 30}] for e in EVENTS[name]
        }
    return {
        e: [
            {"matcher": "", "hooks": [{"type": "command", "command": command(e), "timeout": 30000}]}
        ]
        for e in EVENTS[name]
    }


def _placed(text: str, tmp: str, placeholder: str) -> str:
    """``text`` with the sandbox's path, and its sanitised form in memdir's dir names, fixed."""
    return text.replace(tmp, placeholder).replace(
        tmp.replace("/", "-"), placeholder.replace("/", "-")
    )


def _transcripts(name: str, host: NpmHost) -> list[Path]:
    """The session files the runs left, the one with the first run's prompt last."""
    if name == "cline":  # memdir's plugin writes each conversation's messages (one per run)
        found = sorted((host.home / ".memdir" / "cline" / "sessions").glob("*.json"))
        return [p for p in found if "Run echo hi" in p.read_text()]
    found = sorted(host.home.rglob("events.jsonl" if name == "copilot" else "*.jsonl"))
    found = [p for p in found if "chats" in p.parts or name != "qwen"]
    return [p for p in found if "sessions" in p.parts or name != "pi"]


def record(name: str) -> None:
    kind = KINDS[name]
    cli = kind.find_cli()
    if cli is None:
        raise SystemExit(kind.missing)
    out = OUT / name
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as api:
        host = NpmHost(kind=kind, cli=cli, api=api, root=Path(tmp))
        captured = Path(tmp) / "captured"
        captured.mkdir()
        script = Path(tmp) / "capture.py"
        script.write_text(CAPTURE)
        if name in ("pi", "cline"):  # no hook config: memdir's own extension or plugin
            host.extra_env["MEMDIR_HOST_MODEL"] = "off"
            host.memdir("install", name, "--user")
        else:
            settings = host.home / f".{name}" / "settings.json"
            value = json.loads(settings.read_text()) if settings.exists() else {}
            host.write_json(settings, {**value, "hooks": _hooks(name, script, captured)})
        call = FunctionCall(*SHELL[name])
        api.script(Reply(calls=(call,)), "Said hi.")
        host.prompt("Run echo hi, then remember that CI runs on ubuntu-24.04.")
        host.prompt("And the staging database listens on port 5433.", resume=True)
        host.prompt(COMPACT[name], resume=True, check=False)  # Qwen: "not beneficial" at this size
        host.prompt("What port does staging use?", resume=True)
        transcripts = _transcripts(name, host)
        shutil.rmtree(out, ignore_errors=True)
        (out / "hook-input" if name not in ("pi", "cline") else out).mkdir(parents=True)
        placeholder = f"/tmp/{name}-fixture"
        host.stop_daemon()
        for path in sorted(captured.iterdir()):
            text = _placed(path.read_text(), tmp, placeholder)
            (out / "hook-input" / path.name).write_text(text)
        lines = _placed(transcripts[-1].read_text(), tmp, placeholder).splitlines(keepends=True)
        kept = [
            line for line in lines if name == "cline" or json.loads(line).get("type") not in BULKY
        ]
        (out / ("messages.json" if name == "cline" else "transcript.jsonl")).write_text(
            "".join(kept)
        )
        print(f"{name} {kind.version}: {len(list(captured.iterdir()))} hook inputs, {out}")


if __name__ == "__main__":
    for host_name in sys.argv[1:] or sorted(KINDS):
        record(host_name)
