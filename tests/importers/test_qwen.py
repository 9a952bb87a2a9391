"""``memdir import qwen``: Qwen Code's managed auto memory (its cross-project memories and each
project's), in the format Qwen's own memory agent writes (its prompt's frontmatter example:
name, description, type), imported once, deduplicated, undone byte for byte."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from memdir.cli.main import main
from memdir.errors import ImportSourceError
from memdir.importers.service import get_source
from memdir.model import MemoryType

AWS = "AKIA" + "IOSFODNN7EXAMPLQ"  # shaped like an AWS key id (the documented example is allowed)


def memory(path: Path, name: str, description: str, kind: str, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n")


@pytest.fixture
def qwen_home(tmp_path: Path) -> Path:
    home = tmp_path / ".qwen"
    memory(
        home / "memories" / "user_role.md",
        "User role", "the user is a backend engineer who prefers Go", "user",
        "The user is a backend engineer; prefers Go over Python for services.",
    )  # fmt: skip
    project = home / "projects" / "-work-billing" / "memory"
    memory(
        project / "feedback_db_tests.md",
        "No DB mocks", "integration tests hit a real database", "feedback",
        "Integration tests must use the real PostgreSQL, never mocks.\n\n**Why:** a mocked "
        "migration hid a broken schema.\n**How to apply:** in tests/integration/.",
    )  # fmt: skip
    memory(
        project / "staging_key.md", "Staging key", "a key", "reference",
        f"The staging upload key is {AWS}.",
    )  # fmt: skip
    (project / "MEMORY.md").write_text("- [No DB mocks](feedback_db_tests.md) — real database\n")
    (home / "projects" / "-work-billing" / "chats").mkdir()  # not memory: never read
    (home / "projects" / "-work-billing" / "chats" / "s.jsonl").write_text("{}\n")
    return home


def test_reads_the_user_and_every_projects_memories(qwen_home: Path) -> None:
    items = list(get_source("qwen").read(qwen_home))
    by_name = {i.name: i for i in items}
    assert set(by_name) == {"User role", "No DB mocks", "Staging key"}
    assert by_name["User role"].type == MemoryType.USER
    assert by_name["User role"].extra["source_project"] == "qwen-user"
    assert by_name["No DB mocks"].type == MemoryType.FEEDBACK
    assert by_name["No DB mocks"].source_id == "-work-billing/feedback_db_tests.md"


def test_the_default_follows_qwen_home(tmp_path: Path) -> None:
    source = get_source("qwen")
    assert source.default_path(tmp_path, {}) == tmp_path / ".qwen"
    assert source.default_path(tmp_path, {"QWEN_HOME": str(tmp_path / "q")}) == tmp_path / "q"


def test_a_dir_without_memory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ImportSourceError, match="no Qwen Code memory"):
        list(get_source("qwen").read(tmp_path))


def _memdir(tmp_path: Path, qwen_home: Path, *argv: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(tmp_path / "home"), "QWEN_HOME": str(qwen_home)}
    code = main(
        ["--dir", str(tmp_path / "mem"), "--json", *argv], env=env, cwd=tmp_path, stdout=out,
        stderr=err,
    )  # fmt: skip
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else err.getvalue()


def test_import_keeps_no_credential_reruns_to_nothing_and_undoes(
    tmp_path: Path, qwen_home: Path
) -> None:
    (tmp_path / "home").mkdir()
    code, result = _memdir(tmp_path, qwen_home, "import", "qwen")
    assert code == 0, result
    assert result["counts"]["write"] == 2 and result["counts"]["skipped_credential"] == 1
    written = {p.name: p.read_bytes() for p in (tmp_path / "mem").glob("*.md")}
    assert AWS.encode() not in b"".join(written.values())
    assert any(b"source: qwen" in text for text in written.values())
    code, again = _memdir(tmp_path, qwen_home, "import", "qwen")
    assert code == 0 and again["counts"].get("write", 0) == 0
    assert _memdir(tmp_path, qwen_home, "import", "--undo")[0] == 0
    assert list((tmp_path / "mem").glob("*.md")) == []


def test_loose_yaml_a_cjk_name_and_a_symlink_out(tmp_path: Path) -> None:
    """What a model or a careless user leaves in Qwen's memory dir: an unquoted colon in the
    description, a CJK name, a symlink out of the dir (never followed), a binary file."""
    home = tmp_path / ".qwen"
    project = home / "projects" / "-work-app" / "memory"
    project.mkdir(parents=True)
    (project / "loose.md").write_text(
        "---\nname: 部署流程\ndescription: deploys: always via make ship\ntype: project\n---\n\n"
        "Deploys go through make ship.\n"
    )
    outside = tmp_path / "secret.md"
    outside.write_text("---\nname: outside\ndescription: x\ntype: user\n---\n\nnot ours\n")
    (project / "link.md").symlink_to(outside)
    (project / "blob.md").write_bytes(b"\x00\xff\xfe" * 100)
    items = list(get_source("qwen").read(home))
    names = {i.name for i in items if not i.skip}
    assert "部署流程" in names and "outside" not in names
    assert all("not ours" not in i.body for i in items)
    assert [i.source_id for i in items if i.skip] == ["-work-app/blob.md"]  # said, not imported
