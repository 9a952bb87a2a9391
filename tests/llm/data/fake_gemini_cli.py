"""A stand-in ``gemini`` for tests/llm/test_gemini_cli.py (the real CLI runs in tests/realhost).

Driven by a JSON plan in ``$FAKE_GEMINI_PLAN``; appends one JSON record per invocation (argv,
env, stdin, cwd, the settings and system prompt files, the files of its config home) to
``$FAKE_GEMINI_LOG``. Plan keys: ``calls`` (``[name, input]`` pairs made through memdir's relay
socket, the relay's parent wire format), ``events`` (JSON lines to print), ``stderr`` (text),
``sleep`` (seconds after printing), ``grandchild`` (start a sleeping process in the same group
and write its pid there), ``exit`` (status).
"""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

plan = json.loads(Path(os.environ["FAKE_GEMINI_PLAN"]).read_text())
home = Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini"
settings = json.loads((home / "settings.json").read_text())
stdin = sys.stdin.read()
with open(os.environ["FAKE_GEMINI_LOG"], "a") as f:
    record = {
        "argv": sys.argv[1:],
        "env": dict(os.environ),
        "stdin": stdin,
        "cwd": os.getcwd(),
        "settings": settings,
        "system": Path(os.environ["GEMINI_SYSTEM_MD"]).read_text(),
        "home_files": sorted(p.name for p in home.iterdir()),
    }
    f.write(json.dumps(record) + "\n")
if plan.get("calls"):
    relay = settings["mcpServers"]["memdir"]["args"][-1]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(relay)
    link = sock.makefile("rwb")
    for name, args in plan["calls"]:
        link.write(json.dumps({"op": "call", "name": name, "input": args}).encode() + b"\n")
        link.flush()
        with open(os.environ["FAKE_GEMINI_LOG"], "a") as f:
            f.write(json.dumps({"relay_result": json.loads(link.readline())}) + "\n")
if plan.get("grandchild"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Path(plan["grandchild"]).write_text(str(child.pid))
for event in plan.get("events", []):
    print(json.dumps(event), flush=True)
if plan.get("stderr"):
    sys.stderr.write(plan["stderr"])
time.sleep(plan.get("sleep", 0))
sys.exit(plan.get("exit", 0))
