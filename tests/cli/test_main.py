"""Global CLI conventions: --version, a typed relative --dir, Unicode memory names end to end."""

from __future__ import annotations

import io
import json
from pathlib import Path

from memdir import __version__
from memdir.cli.main import main


def _run(tmp_path: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(tmp_path / "home")}
    code = main(list(argv), env=env, cwd=tmp_path, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    assert _run(tmp_path, "--version") == (0, f"memdir {__version__}\n", "")


def test_relative_dir_is_the_directory_under_the_working_directory(tmp_path: Path) -> None:
    code, out, err = _run(
        tmp_path,
        "--json",
        "--dir",
        "./mem",
        "add",
        "Déploiement",
        "-d",
        "Le déploiement se fait le vendredi",
        "-t",
        "project",
        "-b",
        "body",
    )
    assert code == 0, err
    assert json.loads(out)["path"] == "déploiement.md"
    assert (tmp_path / "mem" / "déploiement.md").is_file()
    code, out, _ = _run(tmp_path, "--json", "--dir", "mem", "where")
    assert json.loads(out)["paths"]["memory_dir"] == str(tmp_path / "mem")


def test_two_chinese_memories_do_not_collide(tmp_path: Path) -> None:
    for name in ("数据库测试规范", "部署流程"):
        code, _out, err = _run(
            tmp_path, "--json", "--dir", "mem", "add", name, "-d", name, "-t", "project", "-b", "b"
        )
        assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "mem").glob("*.md") if p.name != "MEMORY.md") == [
        "数据库测试规范.md",
        "部署流程.md",
    ]
