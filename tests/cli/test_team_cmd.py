"""``memdir team`` commands that need no running server: token management, configuration errors.

The commands that talk to a server run end to end in ``tests/integration/test_team_sync.py``.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

from memdir.cli.main import main


def run_cli(args: list[str], env: dict[str, str]) -> tuple[int, Any]:
    """Exit code and parsed JSON output (or stderr text when there is no output)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(["--json", *args], env=env, cwd=Path(env["HOME"]), stdout=out, stderr=err)
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else err.getvalue()


def test_cli_token_lifecycle(tmp_path: Path) -> None:
    env = {"HOME": os.environ["HOME"], "MEMDIR_HOME": str(tmp_path / "m")}
    db = ["--db", str(tmp_path / "tokens.db")]
    code, first = run_cli(["team", "token", "create", "--repo", "a/b", "--repo", "c/d", *db], env)
    assert code == 0 and first["repos"] == ["a/b", "c/d"] and first["token"].startswith("mdt_")
    code, second = run_cli(["team", "token", "create", "--repo", "a/b", "--label", "ci", *db], env)
    assert code == 0 and second["token"] != first["token"]
    assert run_cli(["team", "token", "revoke", first["id"], *db], env)[0] == 0
    code, listed = run_cli(["team", "token", "list", *db], env)
    assert {(t["id"], t["revoked"]) for t in listed} == {(first["id"], True), (second["id"], False)}
    assert all("token" not in t for t in listed)
    code, err = run_cli(["team", "token", "revoke", "nope", *db], env)
    assert code == 2 and "nope" in err
    code, err = run_cli(["team", "token", "create", "--repo", "../etc", *db], env)
    assert code == 2 and "owner/repo" in err


def test_cli_without_configuration_explains_what_is_missing(tmp_path: Path) -> None:
    env = {"HOME": os.environ["HOME"], "MEMDIR_HOME": str(tmp_path / "m")}
    code, err = run_cli(["--dir", str(tmp_path / "mem"), "team", "push"], env)
    assert code == 2 and "MEMDIR_TEAM_SYNC_URL" in err and "MEMDIR_TEAM_TOKEN" in err
