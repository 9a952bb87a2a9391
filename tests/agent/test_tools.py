"""The memory tools on their own: bounded reads, regex search, globbing, store-backed writes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memdir.agent.toolset import ToolBox
from memdir.store import MemoryStore


async def call(tools: ToolBox, name: str, **input: Any) -> tuple[str, bool]:
    result = await tools.call(name, input)
    return result.content, result.is_error


async def test_read_numbers_lines_and_honours_offset_and_limit(
    tools: ToolBox, outside: Path
) -> None:
    text, err = await call(tools, "Read", file_path=str(outside / "notes.txt"), offset=2, limit=1)
    assert (text, err) == ("     2\tbeta", False)
    text, _ = await call(tools, "Read", file_path="notes.txt")
    assert text.splitlines() == ["     1\talpha", "     2\tbeta", "     3\tgamma"]


@pytest.mark.parametrize(
    ("setup", "file_path", "message"),
    [
        (None, "missing.txt", "does not exist"),
        ("dir", "sub", "is a directory"),
        ("binary", "blob.bin", "binary"),
        ("empty", "empty.txt", "is empty"),
    ],
)
async def test_read_reports_unreadable_files(
    tools: ToolBox, outside: Path, setup: str | None, file_path: str, message: str
) -> None:
    if setup == "dir":
        (outside / "sub").mkdir()
    elif setup == "binary":
        (outside / "blob.bin").write_bytes(b"a\x00b")
    elif setup == "empty":
        (outside / "empty.txt").write_text("")
    text, _ = await call(tools, "Read", file_path=file_path)
    assert message in text


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ({}, "missing required parameter 'file_path'"),
        ({"file_path": 3}, "must be a string"),
        ({"file_path": "notes.txt", "limit": "many"}, "must be an integer"),
        ({"file_path": "~/x"}, "absolute path"),
    ],
)
async def test_bad_input_is_an_error_result(
    tools: ToolBox, input: dict[str, Any], message: str
) -> None:
    result = await tools.call("Read", input)
    assert result.is_error and message in result.content


async def test_grep_modes(tools: ToolBox, outside: Path) -> None:
    (outside / "b.md").write_text("Beta test\n")
    files, _ = await call(tools, "Grep", pattern="beta", case_insensitive=True)
    assert files.splitlines() == [str(outside / "b.md"), str(outside / "notes.txt")]
    content, _ = await call(tools, "Grep", pattern="^b", output_mode="content", glob="*.txt")
    assert content == f"{outside / 'notes.txt'}:2:beta"
    count, _ = await call(tools, "Grep", pattern="a$", output_mode="count", path="notes.txt")
    assert count == f"{outside / 'notes.txt'}:3"
    none, _ = await call(tools, "Grep", pattern="zzz")
    assert none == "No matches found"
    bad, err = await call(tools, "Grep", pattern="(")
    assert err and "invalid regular expression" in bad


async def test_glob_lists_newest_first(tools: ToolBox, outside: Path) -> None:
    (outside / "a.md").write_text("a")
    (outside / "sub").mkdir()
    (outside / "sub" / "b.md").write_text("b")
    os.utime(outside / "a.md", (1, 1))
    text, _ = await call(tools, "Glob", pattern="**/*.md")
    assert text.splitlines() == [str(outside / "sub" / "b.md"), str(outside / "a.md")]


async def test_bash_runs_read_only_commands(tools: ToolBox) -> None:
    text, err = await call(tools, "Bash", command="cat notes.txt | wc -l")
    assert (text.strip(), err) == ("3", False)


async def test_bash_refuses_writes_even_without_a_policy(tools: ToolBox, outside: Path) -> None:
    result = await tools.call("Bash", {"command": "rm notes.txt"})
    assert result.is_error and result.denied
    assert (outside / "notes.txt").exists()


async def test_write_and_edit_go_through_the_store(
    tools: ToolBox, store: MemoryStore, memory_dir: Path
) -> None:
    body = "---\nname: Role\ndescription: user is a data scientist\ntype: user\n---\nData.\n"
    result = await tools.call("Write", {"file_path": str(memory_dir / "role.md"), "content": body})
    assert not result.is_error and result.written_path == memory_dir / "role.md"
    assert "(role.md)" in (memory_dir / "MEMORY.md").read_text()
    result = await tools.call(
        "Edit", {"file_path": "role.md", "old_string": "Data.", "new_string": "Data, ML."}
    )
    assert not result.is_error
    assert store.read("role.md").body == "Data, ML.\n"


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ({"old_string": "nothing", "new_string": "x"}, "not found"),
        ({"old_string": "a", "new_string": "a"}, "identical"),
        ({"old_string": "a", "new_string": "b"}, "occurs 2 times"),
    ],
)
async def test_edit_failures_are_reported(
    tools: ToolBox, memory_dir: Path, input: dict[str, Any], message: str
) -> None:
    (memory_dir / "f.md").write_text("a a\n")
    result = await tools.call("Edit", {"file_path": "f.md", **input})
    assert result.is_error and message in result.content
    assert (memory_dir / "f.md").read_text() == "a a\n"


async def test_write_outside_the_store_fails_at_the_tool(tools: ToolBox, outside: Path) -> None:
    result = await tools.call("Write", {"file_path": str(outside / "x.md"), "content": "x"})
    assert result.is_error and "not inside the memory directory" in result.content
    assert not (outside / "x.md").exists()


async def test_store_guard_refusal_reaches_the_model(memory_dir: Path, outside: Path) -> None:
    from memdir.agent.tools import memory_tools
    from memdir.errors import SecretFoundError

    def guard(rel: str, text: str) -> None:
        if "AKIA" in text:
            raise SecretFoundError(["aws-access-token"], path=rel)

    tools = memory_tools(MemoryStore(memory_dir, guards=[guard]), cwd=outside)
    result = await tools.call("Write", {"file_path": "k.md", "content": "key AKIA..."})
    assert result.is_error and "aws-access-token" in result.content
    assert not (memory_dir / "k.md").exists()


async def test_unknown_tool(tools: ToolBox) -> None:
    text, err = await call(tools, "Delete", file_path="x")
    assert err and "Unknown tool 'Delete'" in text


async def test_read_cuts_a_huge_line_without_losing_the_next(tools: ToolBox, outside: Path) -> None:
    (outside / "min.js").write_text("x" * 5_000_000 + "\nsecond\n")
    text, err = await call(tools, "Read", file_path="min.js")
    first, second = text.splitlines()
    assert not err and first.endswith("[line truncated]") and len(first) < 2100
    assert second == "     2\tsecond"


async def test_grep_stops_at_its_byte_budget(
    tools: ToolBox, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.agent import read_tools

    monkeypatch.setattr(read_tools, "MAX_GREP_TOTAL_BYTES", 20)
    for name in ("a.txt", "b.txt", "c.txt"):
        (outside / name).write_text("needle in here\n")
    text, _ = await call(tools, "Grep", pattern="needle")
    assert text.splitlines()[-1].startswith("[search stopped after 20 bytes")
    assert len(text.splitlines()) == 2


async def test_grep_over_a_memory_dir_never_reads_through_a_link_out_of_it(
    store: MemoryStore, outside: Path
) -> None:
    # Issue #8 item 1: the extraction agent searches the memory dir; a planted link to a file
    # outside it must not bring that file's content into the model's context.
    from memdir.agent.tools import memory_tools

    (outside / "secret.txt").write_text("CANARY root:x:0:0\n")
    store.write_text("note.md", "CANARY inside\n")
    (store.root / "passwd.md").symlink_to(outside / "secret.txt")
    tools = memory_tools(store)
    text, err = await call(tools, "Grep", pattern="CANARY", output_mode="content")
    assert not err and "inside" in text and "root:x" not in text


def test_read_and_grep_never_block_on_a_fifo(tools: ToolBox, outside: Path) -> None:
    """Issue #18.2: a FIFO in the project held the model's Read/Grep call until a writer came."""
    import asyncio

    from tests.fifo import returns_promptly

    fifo = outside / "pipe.txt"
    os.mkfifo(fifo)
    read = returns_promptly(lambda: asyncio.run(call(tools, "Read", file_path=str(fifo))), [fifo])
    assert read[1] and "not a regular file" in read[0]
    grep = returns_promptly(
        lambda: asyncio.run(call(tools, "Grep", pattern="alpha", path=str(outside))), [fifo]
    )
    assert not grep[1] and "notes.txt" in grep[0]
