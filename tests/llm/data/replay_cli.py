"""A stand-in host CLI for the text-CLI providers: logs what it was given, then prints a
recorded run of the real CLI (tests/fixtures/hosts/<host>/headless-*.json).

Env: REPLAY_LOG (append one JSON record: argv, env, stdin, cwd, files under the cwd),
REPLAY_RECORD (the recording to print), REPLAY_FLOOD (print without end instead),
REPLAY_SLEEP (seconds to hang first, in a grandchild too, so a kill of the process group can be
checked; its pid goes in the log)."""

import json
import os
import subprocess
import sys
import time

stdin = sys.stdin.read()
cwd = os.getcwd()
files = {}
for root, _, names in os.walk(cwd):
    for name in names:
        path = os.path.join(root, name)
        with open(path, encoding="utf-8", errors="replace") as f:
            files[os.path.relpath(path, cwd)] = [f.read(), oct(os.stat(path).st_mode & 0o777)]
record = {"argv": sys.argv[1:], "env": dict(os.environ), "stdin": stdin, "cwd": cwd, "files": files}
sleep = float(os.environ.get("REPLAY_SLEEP") or 0)
if sleep:
    child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({sleep})"])
    record["grandchild"] = child.pid
with open(os.environ["REPLAY_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps(record) + "\n")
if sleep:
    time.sleep(sleep)
if os.environ.get("REPLAY_FLOOD"):  # print without end, on both pipes
    chunk = "x" * 65536
    while True:
        sys.stdout.write(chunk)
        sys.stderr.write(chunk)
with open(os.environ["REPLAY_RECORD"], encoding="utf-8") as f:
    run = json.load(f)
sys.stdout.write(run["stdout"])
sys.stderr.write(run["stderr"])
sys.exit(run["returncode"])
