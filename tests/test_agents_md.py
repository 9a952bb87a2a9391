"""Standing instructions in AGENTS.md: private memory never lands in a file git would commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memdir import marked_section
from memdir.agents_md import apply_plan, plan_section, resolve_target, would_commit
from memdir.errors import BundleError

# Assembled at run time so this file holds no credential-shaped literal.
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def memory(root: Path, rel: str, name: str, kind: str, body: str, extra: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\ndescription: when {name.lower()}\ntype: {kind}\n{extra}---\n{body}\n",
        encoding="utf-8",
    )


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    memory(
        root,
        "feedback_db.md",
        "Real databases in tests",
        "feedback",
        "No mocks.\n\n**Why:** a mock hid a broken migration.",
    )
    memory(root, "user_role.md", "User is a data scientist", "user", "Explain backend terms.")
    memory(root, "team/squash.md", "Squash merges only", "feedback", "Always squash.")
    memory(root, "project_q2.md", "Q2 freeze", "project", "Not a standing instruction.")
    memory(root, "old.md", "Old rule", "feedback", "Gone.", "expires: 2020-01-01\n")
    memory(root, "leaky.md", "Deploy token", "feedback", f"use {TOKEN}")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("CLAUDE.local.md\n", encoding="utf-8")
    return root


def test_a_committed_file_gets_team_memories_only(mem: Path, repo: Path) -> None:
    (repo / "AGENTS.md").write_text("# Project\n\nhello", encoding="utf-8")
    plan = plan_section(mem, repo / "AGENTS.md")
    assert plan.committed
    assert plan.included == ("team/squash.md",)
    assert set(plan.private_left_out) == {"feedback_db.md", "user_role.md"}
    assert [(path, bool(found)) for path, found in plan.secrets_left_out] == [("leaky.md", True)]
    apply_plan(plan)
    text = (repo / "AGENTS.md").read_text(encoding="utf-8")
    assert "Squash merges only" in text and "data scientist" not in text and TOKEN not in text
    assert "Old rule" not in text and "Q2 freeze" not in text


def test_an_ignored_file_takes_private_memories(mem: Path, repo: Path) -> None:
    target = repo / "CLAUDE.local.md"
    assert not would_commit(target)
    plan = plan_section(mem, target)
    assert set(plan.included) == {"team/squash.md", "feedback_db.md", "user_role.md"}
    apply_plan(plan)
    text = target.read_text(encoding="utf-8")
    assert text.index("Squash") < text.index("Real databases") < text.index("data scientist")
    assert "**Why:** a mock hid a broken migration." in text
    assert target.stat().st_mode & 0o777 == 0o600  # private memories: a new file is 0600
    assert TOKEN not in text


def test_include_private_is_the_explicit_way_into_a_committed_file(mem: Path, repo: Path) -> None:
    plan = plan_section(mem, repo / "AGENTS.md", include_private=True)
    assert "user_role.md" in plan.included and plan.private_left_out == ()
    assert [p for p, _ in plan.secrets_left_out] == ["leaky.md"]


def test_outside_git_private_memories_go_in(mem: Path, tmp_path: Path) -> None:
    target = tmp_path / "plain" / "AGENTS.md"
    target.parent.mkdir()
    assert not would_commit(target)
    assert "user_role.md" in plan_section(mem, target).included


def test_a_tracked_file_counts_as_committed_even_if_ignored_later(repo: Path) -> None:
    target = repo / "CLAUDE.local.md"
    target.write_text("x\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "add", "-f", "CLAUDE.local.md"], check=True)
    assert would_commit(target)


def test_a_rerun_changes_nothing_and_remove_gives_back_the_bytes(mem: Path, repo: Path) -> None:
    target = repo / "AGENTS.md"
    original = "# Project\r\n\r\nhello"
    target.write_bytes(original.encode())
    target.chmod(0o644)
    apply_plan(plan_section(mem, target))
    assert target.stat().st_mode & 0o777 == 0o644
    again = plan_section(mem, target)
    assert not again.changed
    memory(mem, "team/review.md", "Two reviewers", "feedback", "Always two.")
    third = plan_section(mem, target)
    assert third.changed and third.text is not None and "Two reviewers" in third.text
    apply_plan(third)
    apply_plan(plan_section(mem, target, remove=True))
    assert target.read_bytes() == original.encode()


def test_remove_deletes_a_file_memdir_created(mem: Path, repo: Path) -> None:
    target = repo / "GEMINI.md"
    apply_plan(plan_section(mem, target))
    assert target.is_file()
    apply_plan(plan_section(mem, target, remove=True))
    assert not target.exists()


def test_the_section_stays_within_its_budget(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    for i in range(60):
        memory(root, f"team/rule{i:02d}.md", f"Rule {i:02d}", "feedback", "Because. " * 60)
    target = tmp_path / "AGENTS.md"
    plan = plan_section(root, target, budget=3000)
    assert plan.text is not None
    span = marked_section.find(plan.text)
    assert span is not None and span.end - span.start <= 3000
    assert plan.over_budget and len(plan.included) + len(plan.over_budget) == 60
    assert f"…and {len(plan.over_budget)} more" in plan.text


def test_nothing_to_say_leaves_the_file_alone(tmp_path: Path) -> None:
    plan = plan_section(tmp_path / "empty-mem", tmp_path / "AGENTS.md")
    assert not plan.changed and plan.text is None
    apply_plan(plan)
    assert not (tmp_path / "AGENTS.md").exists()


def test_a_symlink_out_of_the_checkout_is_not_followed(tmp_path: Path) -> None:
    checkout = tmp_path / "repo"
    checkout.mkdir()
    (tmp_path / "authorized_keys").write_text("ssh-ed25519 AAAA\n", encoding="utf-8")
    (checkout / "AGENTS.md").symlink_to(tmp_path / "authorized_keys")
    with pytest.raises(BundleError, match="outside"):
        resolve_target(checkout / "AGENTS.md", checkout)
    (checkout / "CLAUDE.md").write_text("x\n", encoding="utf-8")
    (checkout / "LINK.md").symlink_to(checkout / "CLAUDE.md")
    assert resolve_target(checkout / "LINK.md", checkout) == (checkout / "CLAUDE.md").resolve()


def test_a_non_utf8_file_is_refused(mem: Path, tmp_path: Path) -> None:
    target = tmp_path / "AGENTS.md"
    target.write_bytes(b"\xff\xfe binary")
    with pytest.raises(BundleError, match="not UTF-8"):
        plan_section(mem, target)
    assert target.read_bytes() == b"\xff\xfe binary"
