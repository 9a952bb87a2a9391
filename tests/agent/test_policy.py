"""Sandbox wrappers: each refusal is an error result naming the policy, and nothing is written."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.agent.policy import (
    AllowTools,
    JailWrites,
    OnlyFile,
    ReadOnlyShell,
    memory_agent_policy,
    single_file_policy,
)
from memdir.agent.tools import memory_rel
from memdir.agent.toolset import ToolBox, Toolset
from memdir.errors import UnsafePathError

PathFor = Callable[[Path, Path], str]

JAIL_REFUSED: list[tuple[str, PathFor]] = [
    ("dotdot", lambda mem, out: "../project/evil.md"),
    ("dotdot-abs", lambda mem, out: str(mem / ".." / "project" / "evil.md")),
    ("absolute-outside", lambda mem, out: str(out / "evil.md")),
    ("etc", lambda mem, out: "/etc/evil.md"),
    ("symlink-dir-out", lambda mem, out: str(mem / "link" / "evil.md")),
    ("symlink-file-out", lambda mem, out: str(mem / "notes-link.md")),
    ("url-encoded", lambda mem, out: "%2e%2e/project/evil.md"),
    ("backslash", lambda mem, out: "..\\project\\evil.md"),
    ("the-dir-itself", lambda mem, out: str(mem)),
    ("empty", lambda mem, out: ""),
    ("git-hook", lambda mem, out: str(mem / ".git" / "hooks" / "post-commit")),
    ("lock-file", lambda mem, out: ".memdir.lock"),
    ("not-markdown", lambda mem, out: "run.sh"),
]


@pytest.fixture
def jailed(tools: ToolBox, memory_dir: Path, outside: Path) -> Toolset:
    os.symlink(outside, memory_dir / "link")
    os.symlink(outside / "notes.txt", memory_dir / "notes-link.md")
    return memory_agent_policy(tools, memory_dir)


@pytest.mark.parametrize("tool", ["Write", "Edit"])
@pytest.mark.parametrize(("case", "path_for"), JAIL_REFUSED, ids=[c for c, _ in JAIL_REFUSED])
async def test_jail_refuses_paths_outside_the_memory_dir(
    jailed: Toolset, memory_dir: Path, outside: Path, tool: str, case: str, path_for: PathFor
) -> None:
    before = sorted(p.name for p in outside.iterdir())
    notes = (outside / "notes.txt").read_text()
    input = {"file_path": path_for(memory_dir, outside), "content": "x"}
    if tool == "Edit":
        input = {"file_path": input["file_path"], "old_string": "alpha", "new_string": "pwned"}
    result = await jailed.call(tool, input)
    assert result.is_error and result.denied
    assert "memory-dir-jail" in result.content
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "notes.txt").read_text() == notes


@pytest.mark.parametrize(
    "file_path", ["MEMORY.md", "user_role.md", "topics/deep/note.md", "{mem}/feedback.md"]
)
async def test_jail_allows_writes_inside(jailed: Toolset, memory_dir: Path, file_path: str) -> None:
    target = file_path.format(mem=memory_dir)
    result = await jailed.call("Write", {"file_path": target, "content": "- a line\n"})
    assert not result.is_error, result.content
    written = Path(target) if target.startswith("/") else memory_dir / target
    assert written.read_text() == "- a line\n"


async def test_reads_are_not_jailed(jailed: Toolset, outside: Path) -> None:
    result = await jailed.call("Read", {"file_path": str(outside / "notes.txt")})
    assert not result.is_error and "beta" in result.content


@pytest.mark.parametrize(
    ("command", "allowed"),
    [("ls", True), ("grep -c a notes.txt", True), ("rm notes.txt", False), ("ls > x", False)],
)
async def test_read_only_shell(jailed: Toolset, outside: Path, command: str, allowed: bool) -> None:
    result = await jailed.call("Bash", {"command": command})
    assert result.denied is not allowed
    if not allowed:
        assert "read-only-shell" in result.content and "rm is not permitted" in result.content
    assert (outside / "notes.txt").exists()


async def test_read_only_shell_wrapper_alone(tools: ToolBox) -> None:
    result = await ReadOnlyShell(tools).call("Bash", {"command": 7})
    assert result.denied and "must be a string" in result.content


async def test_allow_tools_hides_and_refuses(tools: ToolBox) -> None:
    policy = AllowTools({"Read"}, tools)
    assert [s.name for s in policy.specs()] == ["Read"]
    result = await policy.call("Grep", {"pattern": "x"})
    assert result.denied and "allowed-tools" in result.content and "Read" in result.content


async def test_memory_agent_policy_exposes_the_six_tools(jailed: Toolset) -> None:
    names = {s.name for s in jailed.specs()}
    assert names == {"Read", "Grep", "Glob", "Bash", "Edit", "Write"}


@pytest.fixture
def summary(memory_dir: Path) -> Path:
    path = memory_dir / "summary.md"
    path.write_text("# Current State\nstarting\n")
    return path


@pytest.mark.parametrize(
    ("tool", "path_for", "allowed"),
    [
        ("Edit", lambda mem: str(mem / "summary.md"), True),
        ("Edit", lambda mem: str(mem / "other.md"), False),
        ("Edit", lambda mem: "summary.md", False),
        ("Edit", lambda mem: str(mem / "sub" / ".." / "summary.md"), True),
        ("Edit", lambda mem: str(mem / "alias.md"), False),
        ("Write", lambda mem: str(mem / "summary.md"), False),
        ("Read", lambda mem: str(mem / "summary.md"), False),
    ],
)
async def test_single_file_policy(
    tools: ToolBox,
    memory_dir: Path,
    summary: Path,
    tool: str,
    path_for: Callable[[Path], str],
    allowed: bool,
) -> None:
    (memory_dir / "sub").mkdir()
    os.symlink(summary, memory_dir / "alias.md")
    policy = single_file_policy(tools, summary)
    input = {"file_path": path_for(memory_dir), "old_string": "starting", "new_string": "going"}
    result = await policy.call(tool, input)
    assert result.denied is not allowed, result.content
    assert ("going" in summary.read_text()) is allowed


async def test_only_file_passes_other_tools_through(tools: ToolBox, summary: Path) -> None:
    result = await OnlyFile(tools, summary).call("Read", {"file_path": str(summary)})
    assert not result.is_error


async def test_jail_writes_wrapper_limits_only_named_tools(
    tools: ToolBox, memory_dir: Path, outside: Path
) -> None:
    policy = JailWrites(tools, memory_dir, tools={"Write"})
    result = await policy.call("Read", {"file_path": str(outside / "notes.txt")})
    assert not result.is_error


async def test_markdown_only_can_be_lifted(tools: ToolBox, memory_dir: Path) -> None:
    policy = JailWrites(tools, memory_dir, markdown_only=False)
    result = await policy.call("Write", {"file_path": "logs/notes.txt", "content": "x"})
    assert not result.is_error, result.content


@given(st.text(alphabet=st.sampled_from(list("./ab%2eE\\~:\x00")), min_size=1, max_size=20))
def test_anything_the_jail_accepts_resolves_inside(
    tmp_path_factory: pytest.TempPathFactory, raw: str
) -> None:
    root = tmp_path_factory.getbasetemp() / "jail-prop"
    root.mkdir(exist_ok=True)
    try:
        rel = memory_rel(root, raw)
    except (UnsafePathError, ValueError):
        return
    resolved = Path(os.path.realpath(root / rel))
    assert resolved.is_relative_to(os.path.realpath(root)) and resolved != Path(
        os.path.realpath(root)
    )
