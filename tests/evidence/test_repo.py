"""HEAD read from git's files (no process on the prompt path) agrees with git itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memdir.evidence.repo import read_head
from tests.evidence.conftest import Repo


def rev_parse(where: Path) -> tuple[Path, str]:
    out = subprocess.run(["git", "-C", str(where), "rev-parse", "--show-toplevel", "HEAD"],
                         capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    return Path(out[0]), out[1]


def test_read_head_agrees_with_git_for_branch_packed_detached_and_worktree(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("one", {"a.py": "x = 1\n"})
    (repo.root / "sub").mkdir()
    assert read_head(repo.root / "sub") == rev_parse(repo.root)  # from a subdirectory
    repo.git("pack-refs", "--all")  # the branch now lives in packed-refs only
    assert not (repo.root / ".git" / "refs" / "heads" / "main").exists()
    assert read_head(repo.root) == rev_parse(repo.root)
    second = repo.commit("two", {"b.py": "y = 2\n"})
    repo.git("checkout", "-q", "--detach", second)
    assert read_head(repo.root) == rev_parse(repo.root)
    repo.git("checkout", "-q", "main")
    repo.git("worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
    assert read_head(tmp_path / "wt") == rev_parse(tmp_path / "wt")


def test_an_unborn_branch_or_no_repository_is_left_to_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "empty")], check=True)
    assert read_head(tmp_path / "empty") is None
    (tmp_path / "fake" / ".git").mkdir(parents=True)
    (tmp_path / "fake" / ".git" / "HEAD").write_text("ref: ../../etc/passwd\n")
    assert read_head(tmp_path / "fake") is None
    (tmp_path / "fake" / ".git" / "HEAD").write_text("ref: refs/../../../etc/hostname\n")
    assert read_head(tmp_path / "fake") is None  # never read outside .git
