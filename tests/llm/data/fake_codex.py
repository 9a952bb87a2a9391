"""A stand-in ``codex`` for tests/llm/test_codex_cli.py (the real CLI runs in tests/realhost).

Driven by a JSON plan in ``$FAKE_CODEX_PLAN``; appends one JSON record per invocation (argv,
env, stdin, cwd, the instructions and schema files) to ``$FAKE_CODEX_LOG``. Plan keys:
``servers`` (names for ``mcp list --json``, or ``"fail"``), ``calls`` (``[name, input]`` pairs
made through memdir's relay socket before any output, the relay's parent wire format),
``events`` (JSON lines to print), ``sleep`` (seconds after printing), ``grandchild`` (start a
sleeping process in the same group and write its pid there), ``exit`` (status).
"""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

plan = json.loads(Path(os.environ["FAKE_CODEX_PLAN"]).read_text())
argv = sys.argv[1:]


def log(record):
    with open(os.environ["FAKE_CODEX_LOG"], "a") as f:
        f.write(json.dumps(record) + "\n")


def override(key):
    for i, arg in enumerate(argv):
        if arg == "-c" and argv[i + 1].startswith(key + "="):
            return argv[i + 1].split("=", 1)[1]
    return None


if argv[:2] == ["mcp", "list"]:
    log({"argv": argv, "cwd": os.getcwd()})
    if plan.get("servers") == "fail":
        sys.stderr.write("Error: config.toml is broken\n")
        sys.exit(1)
    print(json.dumps([{"name": n, "enabled": True} for n in plan.get("servers", [])]))
    sys.exit(0)

stdin = sys.stdin.read()
instructions = override("model_instructions_file")
schema = argv[argv.index("--output-schema") + 1] if "--output-schema" in argv else None
log(
    {
        "argv": argv,
        "env": dict(os.environ),
        "stdin": stdin,
        "cwd": os.getcwd(),
        "instructions": Path(json.loads(instructions)).read_text() if instructions else None,
        "schema": json.loads(Path(schema).read_text()) if schema else None,
    }
)
relay_args = override("mcp_servers.memdir_relay.args")
if plan.get("calls"):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(json.loads(relay_args)[-1])
    f = sock.makefile("rwb")
    for name, args in plan["calls"]:
        f.write(json.dumps({"op": "call", "name": name, "input": args}).encode() + b"\n")
        f.flush()
        log({"relay_result": json.loads(f.readline())})
if plan.get("grandchild"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Path(plan["grandchild"]).write_text(str(child.pid))
for event in plan.get("events", []):
    print(json.dumps(event), flush=True)
time.sleep(plan.get("sleep", 0))
sys.exit(plan.get("exit", 0))
