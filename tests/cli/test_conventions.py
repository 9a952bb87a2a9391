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


def test_a_chinese_memory_dir_recalls_as_a_new_user_would(tmp_path: Path) -> None:
    memories = [
        (
            "数据库测试规范",
            "集成测试必须使用真实数据库，不要用模拟对象",
            "上次模拟测试通过了但生产迁移失败了。",
        ),
        ("部署流程", "CI 通过后用 make deploy-staging 部署到预发布环境", "部署后在频道里通知。"),
        ("退款规则", "超过 1000 欧元的退款需要财务部门的第二位审批人", "退款接口会检查。"),
    ]
    for name, description, body in memories:
        code, _out, err = _run(
            tmp_path,
            "--json",
            "--dir",
            "mem",
            "add",
            name,
            "-d",
            description,
            "-t",
            "project",
            "-b",
            body,
        )
        assert code == 0, err
    code, out, err = _run(
        tmp_path, "--json", "--dir", "mem", "recall", "集成测试可以用模拟数据库吗？"
    )
    assert code == 0, err
    assert [row["path"] for row in json.loads(out)][:1] == ["数据库测试规范.md"]
    code, out, err = _run(tmp_path, "--json", "--dir", "mem", "recall", "今天天气怎么样？")
    assert code == 0, err
    assert json.loads(out) == []
