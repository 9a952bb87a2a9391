"""Credentials in memory files through the real CLI: warned on write, listed by doctor."""

from __future__ import annotations

import io
import json
import random
import subprocess
from pathlib import Path

import pytest

from memdir.cli.main import main
from memdir.team.credential_report import credential_problems
from memdir.team.secrets import RULES_BY_ID
from tests.team.samples import SPECS

AWS_LABEL = RULES_BY_ID["aws-access-token"].label


class Cli:
    def __init__(self, tmp_path: Path):
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.home.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.env = {"HOME": str(self.home)}

    def __call__(self, *argv: str, **env: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            ["--json", *argv], env={**self.env, **env}, cwd=self.project, stdout=out, stderr=err
        )
        return code, out.getvalue(), err.getvalue()

    @property
    def memory(self) -> Path:
        code, out, _ = self("where")
        assert code == 0
        return Path(json.loads(out)["paths"]["memory_dir"])


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


@pytest.fixture
def aws_key() -> str:
    return SPECS["aws-access-token"].token(random.Random(8))


def test_add_warns_on_stderr_with_one_line_and_writes(cli: Cli, aws_key: str) -> None:
    """Regression (#8 item 11): ``memdir add`` stored a credential without a word."""
    code, out, err = cli("add", "AWS", "-d", "prod account", "-t", "reference", "-b", aws_key)
    assert code == 0 and json.loads(out)["path"] == "aws.md"
    lines = err.splitlines()
    assert lines == [
        "memdir: warning: aws.md holds what looks like a credential (AWS access key); private "
        "memory is not shared, but it is recalled into prompts -- consider removing it"
    ]
    assert aws_key not in out + err
    assert aws_key in (cli.memory / "aws.md").read_text()


def test_refuse_setting_makes_add_fail_with_exit_2(cli: Cli, aws_key: str) -> None:
    code, out, err = cli(
        "add", "AWS", "-d", "prod", "-t", "reference", "-b", aws_key,
        MEMDIR_PRIVATE_SECRETS="refuse",
    )  # fmt: skip
    assert code == 2 and out == ""
    assert "privateSecrets setting is 'refuse'" in err and aws_key not in err
    assert not (cli.memory / "aws.md").exists()
    settings = cli.home / ".memdir" / "settings.json"
    settings.write_text(json.dumps({"privateSecrets": "refuse"}))
    assert cli("add", "AWS", "-d", "prod", "-t", "reference", "-b", aws_key)[0] == 2
    settings.write_text(json.dumps({"privateSecrets": "sometimes"}))
    code, _, err = cli("add", "AWS", "-d", "prod", "-t", "reference", "-b", "plain")
    assert code == 2 and "privateSecrets must be 'warn' or 'refuse'" in err


def test_doctor_lists_private_and_team_files_holding_credentials(cli: Cli, aws_key: str) -> None:
    assert cli("add", "AWS", "-d", "prod", "-t", "reference", "-b", f"x\n{aws_key}")[0] == 0
    memory = cli.memory
    (memory / "team").mkdir()
    doc = "---\nname: T\ndescription: d\ntype: project\n---\n"
    (memory / "team" / "leak.md").write_text(doc + aws_key + "\n")  # e.g. written by hand
    (memory / "team" / "howto.md").write_text(doc + "AKIA" + "IOSFODNN7EXAMPLE\n")
    code, out, err = cli("doctor")
    assert code == 1
    found = {(p["kind"], p["path"], p["detail"]) for p in json.loads(out)["problems"]}
    line = (memory / "aws.md").read_text().splitlines().index(aws_key) + 1
    assert ("private-secret", "aws.md", f"line {line}: {AWS_LABEL}") in found
    assert ("secret", "team/leak.md", f"line 6: {AWS_LABEL}") in found
    assert not any(path == "team/howto.md" for _, path, _ in found)
    assert aws_key not in out + err


def test_report_skips_files_that_vanished(tmp_path: Path, aws_key: str) -> None:
    (tmp_path / "a.md").write_text(aws_key)
    files = [("a.md", tmp_path / "a.md"), ("gone.md", tmp_path / "gone.md")]
    assert credential_problems(files) == [
        {"kind": "private-secret", "path": "a.md", "detail": f"line 1: {AWS_LABEL}"}
    ]
