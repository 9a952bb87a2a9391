"""FileRoot: the store's write guarantees for non-memory files (session notes), without an index."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.agent.fileroot import FileRoot
from memdir.agent.policy import single_file_policy
from memdir.agent.tools import memory_tools
from memdir.atomic import content_hash
from memdir.errors import ConflictError, EditError, MemoryNotFoundError, UnsafePathError


def test_write_and_edit_without_an_index(tmp_path: Path) -> None:
    root = FileRoot(tmp_path / "session")
    root.write_text("summary.md", "# Current State\nstarting\n")
    root.edit("summary.md", "starting", "done")
    assert (tmp_path / "session" / "summary.md").read_text() == "# Current State\ndone\n"
    assert not (tmp_path / "session" / "MEMORY.md").exists()


@pytest.mark.parametrize(
    ("action", "error"),
    [
        (lambda r: r.write_text("../out.md", "x"), UnsafePathError),
        (lambda r: r.edit("missing.md", "a", "b"), MemoryNotFoundError),
        (lambda r: r.edit("f.md", "zzz", "b"), EditError),
        (lambda r: r.edit("f.md", "a", "b"), EditError),
        (lambda r: r.edit("f.md", "", "b"), EditError),
        (lambda r: r.write_text("f.md", "new", expected_hash=content_hash("old")), ConflictError),
    ],
)
def test_failures_change_nothing(tmp_path: Path, action: object, error: type[Exception]) -> None:
    root = FileRoot(tmp_path)
    (tmp_path / "f.md").write_text("a a\n")
    with pytest.raises(error):
        action(root)  # type: ignore[operator]
    assert (tmp_path / "f.md").read_text() == "a a\n"
    assert not (tmp_path.parent / "out.md").exists()


async def test_session_memory_sandbox_edits_only_its_file(tmp_path: Path) -> None:
    root = FileRoot(tmp_path)
    (tmp_path / "summary.md").write_text("# Worklog\n- none\n")
    (tmp_path / "other.md").write_text("- none\n")
    policy = single_file_policy(memory_tools(root), tmp_path / "summary.md")
    ok = await policy.call(
        "Edit",
        {"file_path": str(tmp_path / "summary.md"), "old_string": "- none", "new_string": "- x"},
    )
    refused = await policy.call(
        "Edit",
        {"file_path": str(tmp_path / "other.md"), "old_string": "- none", "new_string": "- x"},
    )
    assert not ok.is_error and ok.written_path == tmp_path / "summary.md"
    assert refused.denied and (tmp_path / "other.md").read_text() == "- none\n"
