"""Regression: importing onnxruntime wrote a device id and an event database under
``~/.cache/Microsoft/DeveloperTools/.onnxruntime/`` (found by the Gemini CLI exploration, where
the recall daemon ran with the user's HOME). memdir's embedder turns that off when it loads the
model; a user who sets ``ORT_DISABLE_TELEMETRY`` themselves keeps their value."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
from memdir.recall.embed import MiniLMEmbedder
print(MiniLMEmbedder().embed(["the staging database is reset every Monday"]).shape)
"""


# onnxruntime writes nothing when it believes it runs under CI (`CI=true`, `GITHUB_ACTIONS`,
# `TF_BUILD`): the CI that runs this suite sets one, so the control below would see nothing and
# the check above would pass for a reason that is not memdir's.
UNSET = ("ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME", "CI", "GITHUB_ACTIONS", "TF_BUILD")


def embed_in_a_fresh_home(home: Path, **extra: str) -> list[Path]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(HOME=str(home), **extra)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert "(1, 384)" in proc.stdout
    return sorted(p for p in home.rglob("*") if p.is_file())


def test_loading_the_model_writes_no_onnxruntime_device_id(tmp_path: Path) -> None:
    assert embed_in_a_fresh_home(tmp_path) == []


def test_a_users_own_setting_is_left_alone(tmp_path: Path) -> None:
    # also proves the check above can fail: with telemetry left on, onnxruntime writes its files
    written = embed_in_a_fresh_home(tmp_path, ORT_DISABLE_TELEMETRY="0")
    assert any(p.name == "deviceid" for p in written), written
