"""The README's main job, end to end: store, index, manifest, offline recall, MCP over stdio."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

from memdir.cli.main import main


def test_demo_runs_offline_end_to_end(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    code = main(["--json", "demo"], env=env, cwd=tmp_path, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    report = json.loads(out.getvalue())
    root = Path(report["memory_dir"])
    assert sorted(p.name for p in root.glob("*.md")) == [
        "MEMORY.md",
        "database_tests.md",
        "latency_dashboard.md",
        "release_freeze.md",
        "user_role.md",
    ]
    assert report["index"].count("\n") == 4
    assert report["recall"]["picked"][0] == "database_tests.md"
    assert "latency_dashboard.md" not in report["recall"]["picked"]
    mcp = report["mcp"]
    assert not mcp["is_error"]
    assert {"memory_recall", "memory_save", "memory_read", "memory_index"} <= set(mcp["tools"])
    assert mcp["recalled"][0] == "database_tests.md"
