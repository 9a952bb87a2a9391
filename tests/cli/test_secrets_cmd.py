"""``memdir secrets scan|redact`` through the real CLI entry point; values never reach output."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from memdir.team.secrets import REDACTED, RULES_BY_ID
from tests.team.samples import SPECS


class Cli:
    def __init__(self, tmp_path: Path):
        self.home = tmp_path / "home"
        self.home.mkdir(exist_ok=True)
        self.cwd = tmp_path / "work"
        self.cwd.mkdir()
        self.memory = tmp_path / "memory"
        (self.memory / "team").mkdir(parents=True)

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        args = ["--dir", str(self.memory), *argv]
        code = main(args, env={"HOME": str(self.home)}, cwd=self.cwd, stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def json(self, *argv: str) -> tuple[int, Any]:
        code, out, err = self("--json", *argv)
        assert code in (0, 1), err
        return code, json.loads(out)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


@pytest.fixture
def tokens() -> dict[str, str]:
    rng = random.Random(99)
    return {rule_id: spec.token(rng) for rule_id, spec in SPECS.items()}


def _no_leak(values: dict[str, str], *outputs: str) -> None:
    for rule_id, value in values.items():
        for out in outputs:
            assert value not in out, f"{rule_id} value leaked"


def test_scan_defaults_to_the_memory_dir_including_team(cli: Cli, tokens: dict[str, str]) -> None:
    (cli.memory / "MEMORY.md").write_text("- [Deploy](deploy.md) - how we deploy\n")
    (cli.memory / "deploy.md").write_text("---\nname: Deploy\n---\nuse the pipeline\n")
    aws = tokens["aws-access-token"]
    (cli.memory / "team" / "creds.md").write_text(f"---\nname: Creds\n---\n\nkey: {aws}\n")
    code, data = cli.json("secrets", "scan")
    assert code == 1
    assert data["scanned_files"] == 3
    assert data["findings"] == [
        {
            "file": str(cli.memory / "team" / "creds.md"),
            "line": 5,
            "rule_id": "aws-access-token",
            "label": RULES_BY_ID["aws-access-token"].label,
        }
    ]
    _no_leak(tokens, json.dumps(data))


def test_every_rule_is_reported_and_no_value_is_printed(cli: Cli, tokens: dict[str, str]) -> None:
    lines = [f"{rule_id}: {value}" for rule_id, value in sorted(tokens.items())]
    (cli.memory / "team" / "all.md").write_text("\n".join(lines) + "\n")
    for mode in ("--json", "--text"):
        code, out, err = cli(mode, "secrets", "scan")
        assert code == 1
        _no_leak(tokens, out, err)
    code, data = cli.json("secrets", "scan")
    assert {f["rule_id"] for f in data["findings"]} == set(RULES_BY_ID)
    code, text, _ = cli("--text", "secrets", "scan")
    assert "aws-access-token" in text and RULES_BY_ID["private-key"].label in text
    assert f"{len(data['findings'])} potential secret(s) in 1 of 1 file(s)" in text


def test_clean_memory_exits_zero(cli: Cli) -> None:
    (cli.memory / "note.md").write_text("---\nname: Note\n---\nnothing secret here\n")
    code, out, _ = cli("--text", "secrets", "scan")
    assert code == 0
    assert "no secrets found in 1 file(s)" in out


def test_explicit_files_and_dirs_relative_to_cwd(cli: Cli, tokens: dict[str, str]) -> None:
    (cli.cwd / "notes").mkdir()
    (cli.cwd / "notes" / "a.txt").write_text(tokens["github-pat"] + "\n")
    (cli.cwd / "b.env").write_text("TOKEN=" + tokens["stripe-access-token"] + "\n")
    (cli.memory / "team" / "x.md").write_text(tokens["npm-access-token"])  # not scanned
    code, data = cli.json("secrets", "scan", "notes", "b.env")
    assert code == 1
    assert [(Path(f["file"]).name, f["rule_id"]) for f in data["findings"]] == [
        ("a.txt", "github-pat"),
        ("b.env", "stripe-access-token"),
    ]


def test_missing_path_is_a_clear_error(cli: Cli) -> None:
    code, out, err = cli("secrets", "scan", "nope")
    assert code == 2
    assert "no such file or directory" in err and out == ""


def test_redact_prints_the_file_without_values(cli: Cli, tokens: dict[str, str]) -> None:
    key = tokens["anthropic-api-key"]
    path = cli.cwd / "note.md"
    path.write_text(f"Use '{key}' for the eval runs.\nSecond line.\n")
    code, out, err = cli("--text", "secrets", "redact", "note.md")
    assert code == 0
    assert out == f"Use '{REDACTED}' for the eval runs.\nSecond line.\n"
    code, data = cli.json("secrets", "redact", str(path))
    assert data["findings"] == 1
    assert data["text"] == out
    _no_leak(tokens, out, err, json.dumps(data))
    assert path.read_text().count(key) == 1  # the file itself is left alone


def test_redact_missing_file(cli: Cli) -> None:
    code, _, err = cli("secrets", "redact", "missing.md")
    assert code == 2
    assert "no such file" in err


def test_scan_without_a_memory_dir_finds_nothing(cli: Cli) -> None:
    (cli.memory / "team").rmdir()
    cli.memory.rmdir()
    code, data = cli.json("secrets", "scan")
    assert code == 0
    assert data == {"scanned_files": 0, "roots": [], "findings": []}
