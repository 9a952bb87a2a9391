"""Hostile memories and repositories: the check never reads outside the repository, never hangs,
never raises into recall, and says what it skipped."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from memdir.evidence import screen
from memdir.evidence.anchors import MAX_ANCHORS, derive
from tests.evidence.conftest import DB_V1, DB_V2, Repo


def write(path: Path, body: str, repo: Repo | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: x\ndescription: x\ntype: project\n---\n{body}\n")
    if repo is not None:
        repo.written_now(path)
    return path


def test_paths_outside_the_repository_are_skipped_never_read(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    (repo.root / "link").symlink_to("/etc")
    repo.commit("a link out of the repo", {})
    mem = write(
        tmp_path / "m" / "h.md",
        "See `../../etc/passwd`, `/etc/shadow`, `~/.ssh/id_rsa`, `link/passwd` and src/db.py.",
        repo,
    )
    [out] = screen([mem], repo.root, None, budget=10)
    ev = out.evidence
    assert {v.anchor for v in ev.verdicts} == {"src/db.py"}
    assert any("(..)" in s for s in ev.skipped) and any("absolute" in s for s in ev.skipped)
    assert any(s.startswith("link/passwd") for s in ev.skipped)  # not a path git knows


def test_control_characters_and_a_huge_memory_are_bounded(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    many = " ".join(f"`name_{i}`" for i in range(100_000))
    found = derive(many + " `a\x00b` src/a\nb.py")
    assert len(found.anchors) == MAX_ANCHORS
    assert any("over" in s for s in found.skipped) and any("NUL" in s for s in found.skipped)
    mem = write(tmp_path / "m" / "huge.md", many, repo)
    started = time.monotonic()
    [out] = screen([mem], repo.root, None, budget=0.5)
    assert time.monotonic() - started < 5
    # none of them was ever in the repository: no verdict but "unchecked" (when the half
    # second ran out before git answered for all 24 — a loaded machine), never a hold
    assert {v.state for v in out.evidence.verdicts} <= {"unchecked"}
    assert not out.evidence.held_back


def test_the_time_budget_leaves_anchors_unchecked_and_uncached(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = write(tmp_path / "m" / "db.md", "`connect_db` and `close_db` in `src/db.py`.", repo)
    [out] = screen([mem], repo.root, tmp_path / "cache", budget=0.0)
    assert not out.evidence.held_back
    assert any("time budget" in s for s in out.evidence.skipped)
    assert (
        not (tmp_path / "cache" / "evidence.json").exists()
        or "connect_db" not in (tmp_path / "cache" / "evidence.json").read_text()
    )


def test_not_git_corrupt_git_shallow_and_detached(repo: Repo, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    mem = write(tmp_path / "m" / "db.md", "`connect_db` lives in `src/db.py`.")
    [out] = screen([mem], plain, None)
    assert out.evidence.verdicts == []  # outside git: src/db.py is not in the project
    assert "not a git repository" in " ".join(out.evidence.skipped)

    repo.commit("db", {"src/db.py": DB_V1})
    repo.written_now(mem)
    second = repo.commit("more", {"src/other.py": "x = 1\n"})
    repo.git("checkout", "-q", "--detach", second)
    [out] = screen([mem], repo.root, None, budget=10)
    assert {v.state for v in out.evidence.verdicts} == {"current"}

    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(shallow)], check=True
    )
    [out] = screen([mem], shallow, None, budget=10)  # the base commit is not there
    assert not out.evidence.held_back

    corrupt = tmp_path / "corrupt"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(corrupt)], check=True)
    (corrupt / ".git" / "HEAD").write_text("garbage\n")
    [out] = screen([mem], corrupt, None, budget=10)  # git gives up: the files, by content
    assert not out.evidence.held_back and out.evidence.skipped


def test_a_submodule_and_a_binary_file_do_not_break_the_check(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    (repo.root / "blob.bin").write_bytes(os.urandom(4096) + b"\x00connect_db")
    repo.commit("binary", {})
    mem = write(tmp_path / "m" / "db.md", "`connect_db` is in `src/db.py`; see `blob.bin`.", repo)
    repo.commit("binary changes", {"blob.bin": "now text\n"})
    [out] = screen([mem], repo.root, None, budget=10)
    states = {v.anchor: v.state for v in out.evidence.verdicts}
    assert states["connect_db"] == "current" and states["src/db.py"] == "current"
    assert states["blob.bin"] == "changed"


def test_an_unreadable_memory_is_reported_not_raised(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    [out] = screen([tmp_path / "missing.md"], repo.root, None)
    assert out.evidence.skipped == ["the memory file cannot be read"]


def test_a_hostile_rev_and_a_submodule_are_refused_or_skipped(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = write(
        tmp_path / "m" / "db.md", "`connect_db` in `src/db.py`; see `vendor/lib/a.py`.", repo
    )
    for rev in ("--output=/tmp/pwned", "HEAD\nx", "-c core.pager=sh"):
        [out] = screen([mem], repo.root, None, rev=rev)
        assert out.evidence.verdicts == [] and "is not a commit" in out.evidence.skipped[0]
    assert not Path("/tmp/pwned").exists()

    lib = Repo(tmp_path / "lib")
    lib.commit("lib", {"a.py": "def connect_db():\n    pass\n"})
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib.root),
             "vendor/lib")  # fmt: skip
    repo.commit("vendor lib", {})
    repo.written_now(mem)
    [out] = screen([mem], repo.root, None, budget=10)
    states = {v.anchor: v.state for v in out.evidence.verdicts}
    assert states == {"connect_db": "current", "src/db.py": "current"}  # not into the submodule


def test_a_file_over_the_size_limit_is_compared_by_object_id_never_read(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memdir.evidence.repo as repo_module

    monkeypatch.setattr(repo_module, "MAX_BLOB", 1024)  # a "huge" file, small enough for a test
    repo.commit("data", {"data/big.csv": "a,b\n" * 1000, "data/small.csv": "a,b\n"})
    mem = write(tmp_path / "m" / "d.md", "Fixtures: `data/big.csv` and `data/small.csv`.", repo)
    repo.commit("more rows", {"data/big.csv": "a,b\n" * 2000})
    asked: list[bytes] = []
    real_run = repo_module.Git.run

    def run(self: repo_module.Git, *args: str, stdin: bytes | None = None) -> bytes | None:
        if args[:2] == ("cat-file", "--batch") and stdin:
            asked.append(stdin)
        return real_run(self, *args, stdin=stdin)

    monkeypatch.setattr(repo_module.Git, "run", run)
    [out] = screen([mem], repo.root, None, budget=10)
    states = {v.anchor: v.state for v in out.evidence.verdicts}
    assert states == {"data/big.csv": "changed", "data/small.csv": "current"}
    assert asked == []  # the big file's bytes were never asked for


def test_a_chinese_memory_with_a_loose_header_is_checked(repo: Repo, tmp_path: Path) -> None:
    repo.commit("db", {"src/数据库.py": DB_V1})
    mem = tmp_path / "m" / "数据库.md"
    mem.parent.mkdir(parents=True)
    mem.write_text(  # the loose YAML a model writes: an unquoted colon in the description
        "---\nname: 数据库驱动\ndescription: 驱动: psycopg2\ntype: project\n---\n"
        "`src/数据库.py` 用 `psycopg2` 连接数据库，永远不要改回 `mysqlclient`。\n"
    )
    repo.written_now(mem)
    repo.commit("asyncpg", {"src/数据库.py": DB_V2})
    [out] = screen([mem], repo.root, None, budget=10)
    states = {v.anchor: v.state for v in out.evidence.verdicts}
    assert states == {"src/数据库.py": "current", "psycopg2": "gone"}
    assert out.evidence.held_back


def test_a_chinese_never_again_is_not_held_back_for_the_absence_it_asks_for(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("db", {"src/db.py": DB_V1})
    mem = write(tmp_path / "m" / "never.md", "永远不要再用 `psycopg2`：它会泄漏连接。", repo)
    repo.commit("asyncpg", {"src/db.py": DB_V2})
    [out] = screen([mem], repo.root, None, budget=10)
    assert {v.anchor: (v.state, v.depends) for v in out.evidence.verdicts} == {
        "psycopg2": ("gone", False)
    }
    assert not out.evidence.held_back
