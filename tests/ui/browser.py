"""Helpers for the tests that run the real thing: ``memdir ui`` as a process, and Debian's
Chromium driven by Playwright (never a downloaded browser)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.ui.conftest import Ui

CHROMIUM = os.environ.get("MEMDIR_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def running_ui(ui: Ui, *extra: str) -> Iterator[str]:
    """Start ``memdir ui --no-browser --port 0`` for ``ui``'s dir; yield the printed URL."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")},
        "HOME": str(ui.home),
        "MEMDIR_HOME": str(ui.home / ".memdir"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    argv = [sys.executable, "-m", "memdir", "--dir", str(ui.mem), "ui", "--no-browser", *extra]
    errors = ui.home / "ui.stderr"
    with errors.open("w") as err_file:
        proc = subprocess.Popen(
            argv, cwd=ui.project, env=env, stdout=subprocess.PIPE, stderr=err_file, text=True
        )
    try:
        url = None
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            found = re.search(r"http://\S+", line)
            url = found.group(0) if found else None
        if url is None:
            proc.kill()
            proc.wait()
            raise AssertionError(f"memdir ui printed no URL: {errors.read_text()}")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


def have_chromium() -> bool:
    return shutil.which(CHROMIUM) is not None or os.path.exists(CHROMIUM)
