"""Every surface against the same hostile names and planted links (tests/hostile.py).

Write surfaces must refuse each name with one clear error (CLI exit 2 and one stderr line, MCP and
memory tool ``is_error``), write nothing outside the memory dir, and leave memdir's control files
alone. Read surfaces must never show what a link out of the dir points at.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from mcp import Client

from memdir.adapters.mcp_server import build_server
from memdir.adapters.memory_tool import MemdirMemoryTool
from memdir.cli.main import main
from memdir.errors import MemdirError, PathTraversalError
from memdir.recall.keyword import KeywordSelector
from memdir.store import MemoryStore
from memdir.team.client_state import read_local
from memdir.team.keys import validate_team_key
from tests.hostile import CANARY, HOSTILE_NAMES, INDEX_AS_MEMORY, Hostile, plant, snapshot


class World:
    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.root = tmp_path / "mem"
        self.outside = tmp_path / "outside"
        self.outside_before = plant(self.root, self.outside)
        self.store = MemoryStore(self.root)
        self.store.create("Victim", "a memory to edit", "user", "alpha\n", rel="victim.md")
        self.lock_before = (self.root / ".memdir.lock").stat().st_ino

    def cli(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        env = {"HOME": str(self.tmp / "home")}
        code = main(["--dir", str(self.root), *argv], env=env, stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def assert_untouched(self) -> None:
        assert snapshot(self.outside) == self.outside_before
        assert sorted(p.name for p in self.tmp.iterdir()) == ["home", "mem", "outside"] or sorted(
            p.name for p in self.tmp.iterdir()
        ) == ["mem", "outside"]
        assert (self.root / ".memdir.lock").stat().st_ino == self.lock_before
        assert not (self.root / ".env").exists() and not (self.root / ".git").exists()
        assert (self.root / "victim.md").read_text().endswith("alpha\n")


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def _tool_path(name: str) -> str:
    return name if name.startswith("/") else "/memories/" + name


# -- write surfaces: each returns the error text, or fails the test if the call succeeded ------


def _store(fn: Callable[[MemoryStore], object]) -> Callable[[World, str], str]:
    def run(w: World, name: str) -> str:
        with pytest.raises(MemdirError) as info:
            fn(w.store)
        return str(info.value)

    return run


def _cli(*argv: str) -> Callable[[World, str], str]:
    def run(w: World, name: str) -> str:
        code, _out, err = w.cli(*[a.replace("{}", name) for a in argv])
        assert code == 2, err
        assert err.count("\n") == 1 and err.startswith("memdir: error: "), err
        assert "Traceback" not in err
        return err

    return run


def _mcp(tool: str, **args: Any) -> Callable[[World, str], str]:
    async def call(w: World, name: str) -> str:
        server = build_server(w.store, selector=KeywordSelector())
        filled = {k: (v.replace("{}", name) if isinstance(v, str) else v) for k, v in args.items()}
        async with Client(server) as client:
            result = await client.call_tool(tool, filled)
        assert result.is_error, result.content
        text = result.content[0].text  # type: ignore[union-attr]
        assert isinstance(text, str)
        return text

    def run(w: World, name: str) -> str:
        import anyio

        return anyio.run(call, w, name)

    return run


def _tool(make: Callable[[str], Any], method: str) -> Callable[[World, str], str]:
    def run(w: World, name: str) -> str:
        tool = MemdirMemoryTool(w.store)
        with pytest.raises(ToolError) as info:
            getattr(tool, method)(make(_tool_path(name)))
        message = str(info.value)
        message.encode("utf-8")  # must be sendable as UTF-8 JSON
        return message

    return run


def _team(w: World, name: str) -> str:
    with pytest.raises(PathTraversalError) as info:
        validate_team_key(w.root / "team", name)
    return str(info.value)


WRITE_SURFACES: dict[str, Callable[[World, str], str]] = {
    "store.write_text": lambda w, n: _store(lambda s: s.write_text(n, "x"))(w, n),
    "store.create": lambda w, n: _store(lambda s: s.create("n", "d", "user", "b", rel=n))(w, n),
    "store.edit": lambda w, n: _store(lambda s: s.edit(n, "alpha", "beta"))(w, n),
    "store.delete": lambda w, n: _store(lambda s: s.delete(n))(w, n),
    "store.rename from": lambda w, n: _store(lambda s: s.rename(n, "moved.md"))(w, n),
    "store.rename to": lambda w, n: _store(lambda s: s.rename("victim.md", n))(w, n),
    "store.read": lambda w, n: _store(lambda s: s.read_text(n))(w, n),
    "cli add": _cli("add", "n", "-d", "d", "-t", "user", "-b", "x", "--path", "{}"),
    "cli show": _cli("show", "{}"),
    "cli edit": _cli("edit", "{}", "--old", "alpha", "--new", "beta"),
    "cli rm": _cli("rm", "{}"),
    "cli mv from": _cli("mv", "{}", "moved.md"),
    "cli mv to": _cli("mv", "victim.md", "{}"),
    "mcp memory_save": _mcp(
        "memory_save", name="n", description="d", type="user", body="b", path="{}"
    ),
    "mcp memory_read": _mcp("memory_read", path="{}"),
    "mcp memory_edit": _mcp("memory_edit", path="{}", old_string="alpha", new_string="b"),
    "mcp memory_delete": _mcp("memory_delete", path="{}"),
    "mcp memory_rename from": _mcp("memory_rename", old_path="{}", new_path="moved.md"),
    "mcp memory_rename to": _mcp("memory_rename", old_path="victim.md", new_path="{}"),
    "tool view": _tool(lambda p: BetaMemoryTool20250818ViewCommand(command="view", path=p), "view"),
    "tool create": _tool(
        lambda p: BetaMemoryTool20250818CreateCommand(command="create", path=p, file_text="x"),
        "create",
    ),
    "tool str_replace": _tool(
        lambda p: BetaMemoryTool20250818StrReplaceCommand(
            command="str_replace", path=p, old_str="alpha", new_str="b"
        ),
        "str_replace",
    ),
    "tool insert": _tool(
        lambda p: BetaMemoryTool20250818InsertCommand(
            command="insert", path=p, insert_line=0, insert_text="x"
        ),
        "insert",
    ),
    "tool delete": _tool(
        lambda p: BetaMemoryTool20250818DeleteCommand(command="delete", path=p), "delete"
    ),
    "tool rename from": _tool(
        lambda p: BetaMemoryTool20250818RenameCommand(
            command="rename", old_path=p, new_path="/memories/moved.md"
        ),
        "rename",
    ),
    "tool rename to": _tool(
        lambda p: BetaMemoryTool20250818RenameCommand(
            command="rename", old_path="/memories/victim.md", new_path=p
        ),
        "rename",
    ),
    "team key": _team,
}


@pytest.mark.parametrize("hostile", HOSTILE_NAMES, ids=str)
@pytest.mark.parametrize("surface", sorted(WRITE_SURFACES))
def test_every_surface_refuses_every_hostile_name(
    world: World, surface: str, hostile: Hostile
) -> None:
    message = WRITE_SURFACES[surface](world, hostile.name)
    assert message.strip()
    assert CANARY not in message
    world.assert_untouched()


_MEMORY_WRITES = [
    "store.create",
    "store.rename from",
    "store.rename to",
    "cli add",
    "cli mv from",
    "cli mv to",
    "mcp memory_save",
    "mcp memory_rename from",
    "mcp memory_rename to",
    "tool rename from",
    "tool rename to",
]


@pytest.mark.parametrize("hostile", INDEX_AS_MEMORY, ids=str)
@pytest.mark.parametrize("surface", _MEMORY_WRITES)
def test_the_index_is_never_written_as_a_memory(
    world: World, surface: str, hostile: Hostile
) -> None:
    world.store.write_text(hostile.name, "- [Victim](victim.md) — hand-kept line\n")
    before = (world.root / hostile.name).read_bytes()
    WRITE_SURFACES[surface](world, hostile.name)
    assert (world.root / hostile.name).read_bytes() == before
    world.assert_untouched()


# -- read surfaces: a link out of the dir is reported, never shown ----------------------------


def _mcp_ok(tool: str, **args: Any) -> Callable[[World], str]:
    async def call(w: World) -> str:
        async with Client(build_server(w.store, selector=KeywordSelector())) as client:
            result = await client.call_tool(tool, args)
        return json.dumps(result.structured_content) + str(result.content)

    def run(w: World) -> str:
        import anyio

        return anyio.run(call, w)

    return run


def _cli_ok(*argv: str) -> Callable[[World], str]:
    def run(w: World) -> str:
        code, out, err = w.cli(*argv)
        assert code in (0, 1), err
        assert "Traceback" not in err
        return out + err

    return run


READ_SURFACES: dict[str, Callable[[World], str]] = {
    "store.scan": lambda w: repr(w.store.scan()),
    "cli list": _cli_ok("--json", "list"),
    "cli manifest": _cli_ok("manifest"),
    "cli recall": _cli_ok("--json", "recall", "secret canary outside", "--selector", "local"),
    "cli index check": _cli_ok("--json", "index", "check"),
    "cli doctor": _cli_ok("--json", "doctor"),
    "mcp memory_list": _mcp_ok("memory_list"),
    "mcp memory_recall": _mcp_ok("memory_recall", query="secret canary outside"),
    "mcp memory_index": _mcp_ok("memory_index"),
    "tool view root": lambda w: MemdirMemoryTool(w.store).view(
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories")
    ),
    "team push": lambda w: repr(read_local(w.root / "team")),
}


@pytest.mark.parametrize("surface", sorted(READ_SURFACES))
def test_links_out_of_the_dir_are_never_read(world: World, surface: str) -> None:
    (world.root / "MEMORY.md").unlink()
    (world.root / "MEMORY.md").symlink_to(world.outside / "secret.md")
    shown = READ_SURFACES[surface](world)
    assert CANARY not in shown
    world.assert_untouched()


def test_doctor_names_each_escaping_link(world: World) -> None:
    (world.root / "MEMORY.md").unlink()
    (world.root / "MEMORY.md").symlink_to(world.outside / "secret.md")
    code, out, _ = world.cli("--json", "doctor")
    assert code == 1
    problems = json.loads(out)["problems"]
    escapes = {
        Path(p["path"]).relative_to(world.root).as_posix()
        for p in problems
        if p["kind"] == "symlink-escape"
    }
    assert escapes == {"passwd.md", "team/passwd.md", "MEMORY.md"}
