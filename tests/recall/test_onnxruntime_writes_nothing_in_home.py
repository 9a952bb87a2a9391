"""Regression: importing onnxruntime wrote a device id and an event database under
``~/.cache/Microsoft/DeveloperTools/.onnxruntime/`` (found by the Gemini CLI exploration, where
the recall daemon ran with the user's HOME). memdir's embedder turns that off when it loads the
model; a user who sets ``ORT_DISABLE_TELEMETRY`` themselves keeps their value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# onnxruntime writes its files from a background thread: under a loaded CI machine the process
# could exit before the write. The child waits (up to `wait` seconds) for the device id to appear,
# so the control below cannot miss it and the check above gives the thread the same time.
SCRIPT = """
import sys, time
from pathlib import Path
from memdir.recall.embed import MiniLMEmbedder
print(MiniLMEmbedder().embed(["the staging database is reset every Monday"]).shape)
deadline = time.monotonic() + float(sys.argv[1])
while time.monotonic() < deadline and not any(Path.home().rglob("deviceid")):
    time.sleep(0.1)
"""


def embed_in_a_fresh_home(home: Path, wait: float, **extra: str) -> list[Path]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME")
    }
    env.update(HOME=str(home), **extra)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(wait)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert "(1, 384)" in proc.stdout
    return sorted(p for p in home.rglob("*") if p.is_file())


def test_loading_the_model_writes_no_onnxruntime_device_id(tmp_path: Path) -> None:
    assert embed_in_a_fresh_home(tmp_path, wait=3.0) == []


def test_a_users_own_setting_is_left_alone(tmp_path: Path) -> None:
    # also proves the check above can fail: with telemetry left on, onnxruntime writes its files
    written = embed_in_a_fresh_home(tmp_path, wait=60.0, ORT_DISABLE_TELEMETRY="0")
    assert any(p.name == "deviceid" for p in written), written
