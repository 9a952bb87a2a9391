"""The MCP server in-process (``mcp.Client(server)``): every tool, its errors, resources, prompt."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from memdir import applies_when, errors
from memdir.adapters.mcp_server import (
    build_server,
    check_loopback,
    default_selector_factory,
    describe,
)
from memdir.recall.keyword import KeywordSelector
from memdir.store import MemoryStore

TOOLS = {
    "memory_recall",
    "memory_read",
    "memory_list",
    "memory_save",
    "memory_edit",
    "memory_delete",
    "memory_rename",
    "memory_index",
}


def _secret_guard(rel: str, text: str) -> None:
    if "sk-live-" in text:
        raise errors.SecretFoundError(["api-key"], path=rel)


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "mem", guards=[_secret_guard])


@pytest.fixture
def server(store: MemoryStore) -> MCPServer:
    # A fresh Client per test body: anyio task groups cannot span fixture setup and teardown.
    return build_server(store, selector=KeywordSelector())


async def call(client: Client, tool: str, /, **args: Any) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    return result.structured_content


async def fail(client: Client, tool: str, /, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text


def snapshot(root: Path) -> dict[str, bytes]:
    base = root.parent
    return {
        p.relative_to(base).as_posix(): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


async def seed(client: Client) -> None:
    await call(
        client,
        "memory_save",
        name="Coffee",
        description="user takes oat milk",
        type="user",
        body="Oat milk, no sugar.",
    )
    await call(
        client,
        "memory_save",
        name="Deploy freeze",
        description="no deploys on Fridays",
        type="project",
        body="Release freeze every Friday.",
        path="work/freeze.md",
    )
    await call(
        client,
        "memory_save",
        name="Tests",
        description="prefer real services in tests",
        type="feedback",
        body="Use a real database, not mocks.",
    )


async def test_tool_surface(server: MCPServer) -> None:
    async with Client(server) as client:
        listed = await client.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        recall = next(t for t in listed.tools if t.name == "memory_recall")
        assert recall.input_schema["properties"]["limit"]["maximum"] == 5
        hints = {t.name: t.annotations for t in listed.tools}
    read_only = {n for n, a in hints.items() if a is not None and a.read_only_hint}
    assert read_only == {"memory_recall", "memory_read", "memory_list", "memory_index"}
    destructive = {n for n, a in hints.items() if a is not None and a.destructive_hint}
    assert destructive == {"memory_delete", "memory_save"}
    save = next(t for t in listed.tools if t.name == "memory_save")
    assert set(save.input_schema["required"]) == {"name", "description", "type", "body"}


async def test_save_read_list_index(server: MCPServer, store: MemoryStore) -> None:
    async with Client(server) as client:
        await seed(client)
        read = await call(client, "memory_read", path="coffee.md")
        assert (read["name"], read["type"], read["body"]) == (
            "Coffee",
            "user",
            "Oat milk, no sugar.\n",
        )
        assert read["age"] == "today" and read["freshness_note"] is None
        assert read["hash"] == store.file_hash("coffee.md")
        listed = await call(client, "memory_list")
        assert {m["path"] for m in listed["memories"]} == {
            "coffee.md",
            "work/freeze.md",
            "tests.md",
        }
        only = await call(client, "memory_list", type="project")
        assert [m["path"] for m in only["memories"]] == ["work/freeze.md"]
        index = await call(client, "memory_index")
        assert "- [Coffee](coffee.md) — user takes oat milk" in index["content"]
        assert "(work/freeze.md)" in index["content"] and index["truncated"] is False


async def test_save_overwrite_keeps_created_and_replaces_body(
    server: MCPServer, store: MemoryStore
) -> None:
    async with Client(server) as client:
        await seed(client)
        memory = store.read("coffee.md")
        memory.created = "2020-01-02"
        store.save(memory)
        text = await fail(
            client,
            "memory_save",
            name="Coffee",
            description="d",
            type="user",
            body="x",
            path="coffee.md",
        )
        assert "already exists" in text
        out = await call(
            client,
            "memory_save",
            name="Coffee",
            description="black now",
            type="user",
            body="Black coffee.",
            path="coffee.md",
            overwrite=True,
        )
        assert out == {"path": "coffee.md", "created": False}
        after = store.read("coffee.md")
        assert (after.created, after.body, after.description) == (
            "2020-01-02",
            "Black coffee.\n",
            "black now",
        )
        assert "black now" in (store.root / "MEMORY.md").read_text()


BAD_SAVES: list[tuple[dict[str, Any], str]] = [
    ({"type": "opinion"}, "invalid input: unknown memory type 'opinion'"),
    ({"description": "  "}, "invalid input: a memory needs a one-line description"),
    ({"name": " "}, "invalid input"),
    ({"path": "../escape.md"}, "unsafe path"),
    ({"path": "/etc/escape.md"}, "unsafe path"),
    ({"path": "%2e%2e/escape.md"}, "unsafe path"),
    ({"path": "notes.txt"}, "unsafe path: memory files end in .md"),
    ({"path": "MEMORY.md"}, "refused: MEMORY.md is the index"),
    ({"body": "token sk-live-abc"}, "refused: refusing to write"),
    # the saving agent's applies_when: the schema's list of strings, then what YAML can hold
    ({"applies_when": "adding a dependency"}, "Input should be a valid list"),
    ({"applies_when": ["ok", 3]}, "Input should be a valid string"),
    ({"applies_when": {"when": "always"}}, "Input should be a valid list"),
    ({"applies_when": ["ok", "bad \ud800"]}, "not valid Unicode"),
    ({"applies_when": ["token sk-live-abc"]}, "refused: refusing to write"),
]


@pytest.mark.parametrize(("change", "expected"), BAD_SAVES)
async def test_bad_save_is_an_error_and_writes_nothing(
    server: MCPServer, store: MemoryStore, change: dict[str, Any], expected: str
) -> None:
    async with Client(server) as client:
        await seed(client)
        before = snapshot(store.root)
        args = {"name": "N", "description": "d", "type": "user", "body": "b"} | change
        text = await fail(client, "memory_save", **args)
        assert expected in text
        assert "sk-live-abc" not in text
        assert snapshot(store.root) == before


TRAVERSALS = ["../x.md", "a/../../x.md", "/etc/passwd", "%2e%2e/x.md", "link/x.md", "a\\..\\x.md"]


@pytest.mark.parametrize("path", TRAVERSALS)
@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("memory_read", {}),
        ("memory_edit", {"old_string": "a", "new_string": "b"}),
        ("memory_delete", {}),
        ("memory_rename", {"new_path": "moved.md"}),
    ],
)
async def test_traversal_refused(
    server: MCPServer,
    store: MemoryStore,
    tmp_path: Path,
    path: str,
    tool: str,
    extra: dict[str, Any],
) -> None:
    async with Client(server) as client:
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "x.md").write_text("a secret outside\n")
        (tmp_path / "x.md").write_text("a file beside the memory dir\n")
        await seed(client)
        os.symlink(outside, store.root / "link")
        before = snapshot(store.root)
        args = ({"old_path": path} if tool == "memory_rename" else {"path": path}) | extra
        assert (await fail(client, tool, **args)).startswith("Error executing tool")
        assert "unsafe path" in await fail(client, tool, **args)
        assert snapshot(store.root) == before


async def test_list_limit_keeps_newest_and_reports_total(
    server: MCPServer, store: MemoryStore
) -> None:
    async with Client(server) as client:
        await seed(client)
        old = time.time() - 86_400
        os.utime(store.path_of("coffee.md"), (old, old))
        out = await call(client, "memory_list", limit=2)
        assert out["total"] == 3 and len(out["memories"]) == 2
        assert "coffee.md" not in [m["path"] for m in out["memories"]]
        assert "greater than or equal to 1" in await fail(client, "memory_list", limit=0)


async def test_read_missing_and_invalid_list_type(server: MCPServer) -> None:
    async with Client(server) as client:
        assert "not found: no such memory: nope.md" in await fail(
            client, "memory_read", path="nope.md"
        )
        assert "unknown memory type 'x'" in await fail(client, "memory_list", type="x")


async def test_edit(server: MCPServer, store: MemoryStore) -> None:
    async with Client(server) as client:
        await call(
            client,
            "memory_save",
            name="Twice",
            description="d",
            type="user",
            body="one cat, two cat\n",
        )
        before = store.read_text("twice.md")
        text = await fail(
            client, "memory_edit", path="twice.md", old_string="cat", new_string="dog"
        )
        assert "edit failed" in text and "occurs 2 times" in text
        assert store.read_text("twice.md") == before
        text = await fail(client, "memory_edit", path="twice.md", old_string="bird", new_string="x")
        assert "was not found" in text
        await call(
            client, "memory_edit", path="twice.md", old_string="one cat", new_string="one dog"
        )
        assert "one dog, two cat" in store.read_text("twice.md")
        await call(
            client,
            "memory_edit",
            path="twice.md",
            old_string="cat",
            new_string="emu",
            replace_all=True,
        )
        assert "one dog, two emu" in store.read_text("twice.md")
        text = await fail(
            client, "memory_edit", path="twice.md", old_string="emu", new_string="sk-live-zzz"
        )
        assert "refused" in text and "sk-live-zzz" not in text


async def test_delete_and_rename(server: MCPServer, store: MemoryStore) -> None:
    async with Client(server) as client:
        await seed(client)
        index = store.root / "MEMORY.md"
        assert await call(
            client, "memory_rename", old_path="coffee.md", new_path="prefs/coffee.md"
        ) == {"old_path": "coffee.md", "new_path": "prefs/coffee.md"}
        assert "(prefs/coffee.md)" in index.read_text() and "(coffee.md)" not in index.read_text()
        before = snapshot(store.root)
        assert "already exists" in await fail(
            client, "memory_rename", old_path="tests.md", new_path="prefs/coffee.md"
        )
        assert "not found" in await fail(
            client, "memory_rename", old_path="gone.md", new_path="new.md"
        )
        assert "refused" in await fail(client, "memory_delete", path="MEMORY.md")
        assert snapshot(store.root) == before
        assert await call(client, "memory_delete", path="tests.md") == {"path": "tests.md"}
        assert not (store.root / "tests.md").exists() and "tests.md" not in index.read_text()
        assert "not found" in await fail(client, "memory_delete", path="tests.md")


async def test_private_credentials_are_saved_with_a_warning(tmp_path: Path) -> None:
    """Regression (#8 item 11): a credential in private memory was accepted silently."""
    from memdir.team.guard import write_guards

    root = tmp_path / "mem"
    key = "AKIA" + "ZQ4HN7XKT2MB6RWC"  # joined at run time: no key-shaped literal here
    server = build_server(MemoryStore(root, guards=write_guards(root)), selector=KeywordSelector())
    async with Client(server) as client:
        saved = await call(
            client, "memory_save", name="AWS", description="d", type="reference", body=key
        )
        assert saved["path"] == "aws.md" and (root / "aws.md").is_file()
        (warning,) = saved["warnings"]
        assert warning.startswith("aws.md holds what looks like a credential (AWS access key)")
        edited = await call(
            client, "memory_edit", path="aws.md", old_string=key, new_string="rotated"
        )
        assert "warnings" not in edited  # the credential is gone
        moved = await call(client, "memory_rename", old_path="aws.md", new_path="cloud.md")
        assert "warnings" not in moved
        text = await fail(
            client, "memory_save", name="T", description="d", type="reference", body=key,
            path="team/aws.md",
        )  # fmt: skip
        assert "refused" in text and "AWS access key" in text and key not in text


async def test_index_truncation_warning(server: MCPServer, store: MemoryStore) -> None:
    async with Client(server) as client:
        store.root.mkdir(parents=True, exist_ok=True)
        lines = [f"- [m{i}](m{i}.md) — note {i}" for i in range(250)]
        (store.root / "MEMORY.md").write_text("\n".join(lines) + "\n")
        index = await call(client, "memory_index")
        assert index["truncated"] is True and index["line_count"] == 250
        assert "WARNING: MEMORY.md is 250 lines (limit: 200)" in index["content"]
        assert "m199.md" in index["content"] and "m200.md" not in index["content"]


async def test_recall_picks_relevant_with_age(server: MCPServer, store: MemoryStore) -> None:
    async with Client(server) as client:
        await seed(client)
        old = time.time() - 10 * 86_400
        os.utime(store.path_of("work/freeze.md"), (old, old))
        out = await call(client, "memory_recall", query="can we deploy on friday?")
        assert [m["path"] for m in out["memories"]] == ["work/freeze.md"]
        hit = out["memories"][0]
        assert hit["content"] == store.read_text("work/freeze.md") and not hit["truncated"]
        assert (hit["name"], hit["type"], hit["age"]) == ("Deploy freeze", "project", "10 days ago")
        assert "10 days old" in hit["freshness_note"]
        out = await call(client, "memory_recall", query="zebra migration patterns")
        assert out["memories"] == []
        assert "less than or equal to 5" in await fail(client, "memory_recall", query="x", limit=6)
        assert (await call(client, "memory_recall", query="  "))["memories"] == []


async def test_recall_limit(server: MCPServer) -> None:
    async with Client(server) as client:
        for i in range(7):
            await call(
                client,
                "memory_save",
                name=f"Milk {i}",
                description="milk preference",
                type="user",
                body=f"milk {i}",
            )
        out = await call(client, "memory_recall", query="milk", limit=3)
        assert len(out["memories"]) == 3  # a single word is enough for an explicit recall


async def test_recall_caps_a_long_memory(server: MCPServer, store: MemoryStore) -> None:
    body = "".join(f"line {i} about the billing cutover\n" for i in range(400))
    async with Client(server) as client:
        await call(client, "memory_save", name="Billing", description="billing cutover notes",
                   type="project", body=body)  # fmt: skip
        hit = (await call(client, "memory_recall", query="billing cutover"))["memories"][0]
    assert hit["truncated"] is True
    kept = hit["content"].split("[Memory truncated")[0]
    assert len(kept.encode()) <= 4096 and kept.endswith("\n")
    assert store.read_text("billing.md").startswith(kept)


async def test_resources_and_prompt_follow_writes(server: MCPServer, store: MemoryStore) -> None:
    async with Client(server) as client:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert uris == {"memdir://index", "memdir://instructions"}
        empty = await client.read_resource("memdir://index")
        assert empty.contents[0].text == ""  # type: ignore[union-attr]
        await seed(client)
        index = await client.read_resource("memdir://index")
        assert "(coffee.md)" in index.contents[0].text  # type: ignore[union-attr]
        instructions = await client.read_resource("memdir://instructions")
        mechanics = instructions.contents[0].text  # type: ignore[union-attr]
        assert "memory_recall" in mechanics and "<name>feedback</name>" in mechanics
        assert str(store.root) in mechanics
        prompt = await client.get_prompt("memdir")
        text = prompt.messages[0].content.text  # type: ignore[union-attr]
        assert "memory_save" in text and "(work/freeze.md)" in text


@pytest.mark.parametrize(
    ("exc", "label"),
    [
        (errors.UnsafePathError("p"), "unsafe path: p"),
        (errors.PathTraversalError("p"), "unsafe path: p"),
        (errors.MemoryNotFoundError("p"), "not found: p"),
        (errors.MemoryExistsError("p"), "already exists: p"),
        (errors.FrontmatterError("p"), "invalid input: p"),
        (errors.EditError("p"), "edit failed: p"),
        (errors.ConflictError("p"), "conflict: p"),
        (errors.LockHeldError("p"), "busy: p"),
        (errors.ToolDenied("p"), "refused: p"),
        (errors.UnreadableFileError("p"), "unreadable: p"),
        (errors.ProviderError("p"), "error: p"),
    ],
)
def test_error_labels(exc: errors.MemdirError, label: str) -> None:
    assert describe(exc) == label


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "127.0.0.2"])
def test_loopback_hosts_allowed(host: str) -> None:
    assert check_loopback(host) == host


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "example.com", "::"])
def test_non_loopback_hosts_refused(host: str) -> None:
    with pytest.raises(errors.ConfigError, match="loopback"):
        check_loopback(host)


async def test_default_recall_uses_the_offline_local_selector(
    store: MemoryStore, tmp_path: Path
) -> None:
    server = build_server(store, cache_dir=tmp_path / "cache")
    async with Client(server) as client:
        await seed(client)
        out = await call(client, "memory_recall", query="can we ship a release this friday?")
        assert [m["path"] for m in out["memories"]][:1] == ["work/freeze.md"]
    assert any((tmp_path / "cache").iterdir())  # the derived search index lives outside


@pytest.mark.parametrize("cache", [True, False])
def test_selector_factory_falls_back_to_keywords(
    store: MemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool
) -> None:
    from memdir.recall.local import LocalSelector

    factory = default_selector_factory(store, tmp_path / "cache" if cache else None)
    assert isinstance(factory(), LocalSelector if cache else KeywordSelector)
    monkeypatch.setitem(sys.modules, "memdir.recall.local", None)  # the extra is missing
    assert isinstance(factory(), KeywordSelector)


@pytest.mark.parametrize(("mechanics", "expected"), [("Custom mechanics.", "Custom mechanics."),
                                                     ("", "<name>feedback</name>")])  # fmt: skip
async def test_instructions_use_the_given_mechanics(
    store: MemoryStore, mechanics: str, expected: str
) -> None:
    server = build_server(store, selector=KeywordSelector(), mechanics=lambda: mechanics)
    async with Client(server) as client:
        text = (await client.read_resource("memdir://instructions")).contents[0].text  # type: ignore[union-attr]
    assert expected in text and "memory_recall" in text


async def test_overwrite_by_name_keeps_created_and_replaces_corrupt_files(
    server: MCPServer, store: MemoryStore
) -> None:
    args = {"name": "Coffee", "description": "d", "type": "user", "overwrite": True}
    async with Client(server) as client:
        await seed(client)
        memory = store.read("coffee.md")
        memory.created = "2020-01-02"
        store.save(memory)
        out = await call(client, "memory_save", **args, body="Black.")
        assert out == {"path": "coffee.md", "created": False}
        assert store.read("coffee.md").created == "2020-01-02"
        (store.root / "coffee.md").write_text("---\nname: x\n- y\n---\nbroken\n")
        assert "invalid input" in await fail(client, "memory_read", path="coffee.md")
        out = await call(client, "memory_save", **args, body="Fixed.")
        assert out == {"path": "coffee.md", "created": False}
        assert store.read("coffee.md").body == "Fixed.\n"


def test_cli_default_port_matches_the_server() -> None:
    from memdir.adapters.mcp_server import DEFAULT_HTTP_PORT
    from memdir.cli.main import build_parser

    args = build_parser().parse_args(["mcp", "--transport", "http"])
    assert (args.port, args.host, args.transport) == (DEFAULT_HTTP_PORT, "127.0.0.1", "http")


# -- issue #8 items 3, 4 and 5 -----------------------------------------------------------------


async def test_a_bad_field_value_does_not_break_memory_list(
    server: MCPServer, store: MemoryStore
) -> None:
    # Before: `created: 2020-13-45` in one file made memory_list fail for the whole dir.
    store.root.mkdir(parents=True, exist_ok=True)
    (store.root / "bad.md").write_text("---\nname: B\ndescription: d\ncreated: 2020-13-45\n---\n")
    (store.root / "goal.md").write_text("---\nname: G\ndescription: Q2 goal: ship X\n---\n")
    async with Client(server) as client:
        out = await call(client, "memory_list")
    assert {m["path"] for m in out["memories"]} == {"bad.md", "goal.md"}
    assert {(p["path"], p["kind"]) for p in out["problems"]} == {
        ("bad.md", "bad-value"),
        ("goal.md", "frontmatter-quoted"),
    }


async def test_lone_surrogates_and_control_files_are_tool_errors(
    server: MCPServer, store: MemoryStore
) -> None:
    async with Client(server) as client:
        await seed(client)
        body = await fail(
            client, "memory_save", name="n", description="d", type="user", body="x \ud800 y"
        )
        assert "not valid Unicode" in body
        assert "unsafe path" in await fail(client, "memory_delete", path=".memdir.lock")
        assert "unsafe path" in await fail(client, "memory_read", path="bad\udcff.md")
    assert not (store.root / "n.md").exists()


async def test_save_writes_applies_when_and_overwrite_keeps_a_persons_list(
    server: MCPServer, store: MemoryStore
) -> None:
    async with Client(server) as client:
        await seed(client)
        assert any("tests" in s for s in store.read("tests.md").extra["applies_when"])
        memory = store.read("tests.md")
        memory.extra["applies_when"] = ["when writing integration tests"]
        store.save(memory)
        await call(
            client,
            "memory_save",
            name="Tests",
            description="prefer real services in tests",
            type="feedback",
            body="Use a real database and a real queue.",
            path="tests.md",
            overwrite=True,
        )
        assert store.read("tests.md").extra["applies_when"] == ["when writing integration tests"]


HOSTILE_SITUATIONS = [
    "key: value # not a comment",
    "'single' and \"double\" quotes",
    "---",
    "first line\nsecond line\r\n\tthird",
    "- a dash, [a list], {a: map}, &anchor *alias !tag %directive @at `tick` | >",
    "true",
    "添加依赖项或者修改用户界面文字时",
    "\x1b[2J\x1b[31mred\x00 \u202eevil\u202c text",
    "z" * 10_000,
]


LUNCH = {"name": "Lunch", "description": "the team eats at noon", "type": "project"}


@pytest.mark.parametrize("situation", HOSTILE_SITUATIONS)
async def test_the_agents_applies_when_is_stored_bounded_and_reads_back(
    server: MCPServer, store: MemoryStore, situation: str
) -> None:
    async with Client(server) as client:
        situations = [situation, "booking a meeting room"]
        await call(client, "memory_save", **LUNCH, body="Lunch at noon.", applies_when=situations)
    memory = store.read("lunch.md")
    assert applies_when.derive("project", "Lunch", "the team eats at noon", "Lunch at noon.") == []
    expected = applies_when.normalise([situation, "booking a meeting room"])
    assert len(expected) == 2 and all(len(s) <= applies_when.MAX_CHARS for s in expected)
    assert all(ch.isprintable() for s in expected for ch in s)
    assert memory.extra == {
        applies_when.FIELD: expected,
        applies_when.BY_FIELD: applies_when.BY_AGENT,
    }
    text = (store.root / "lunch.md").read_text(encoding="utf-8")
    assert text.count("\n---\n") == 1 and text.endswith("\n---\nLunch at noon.\n")


async def test_the_agents_applies_when_of_500_items_keeps_its_first_items(
    server: MCPServer, store: MemoryStore
) -> None:
    many = [f"situation {i}" for i in range(500)]
    pnpm = {"name": "Use pnpm", "description": "the docs site uses pnpm, never npm"}
    async with Client(server) as client:
        await call(client, "memory_save", **pnpm, type="feedback", body="x", applies_when=many)
    rules = applies_when.derive("feedback", pnpm["name"], pnpm["description"], "x")
    memory = store.read("use_pnpm.md")
    stored = memory.extra[applies_when.FIELD]
    # the file holds the agent's own list; the rules' situations are read before it by recall
    assert stored == many[: applies_when.MAX_ITEMS]
    assert rules and applies_when.for_recall(rules, stored) == [*rules, *stored]


async def test_overwrite_with_applies_when_replaces_the_list_without_keeps_it(
    server: MCPServer, store: MemoryStore
) -> None:
    save = LUNCH
    async with Client(server) as client:
        await call(client, "memory_save", **save, body="Noon.", applies_when=["booking a room"])
        memory = store.read("lunch.md")
        memory.extra[applies_when.FIELD] = ["a person's own line"]
        memory.extra.pop(applies_when.BY_FIELD)
        store.save(memory)
        # with a list: the agent's replaces the person's (and is marked the agent's again)
        await call(
            client,
            "memory_save",
            **save,
            body="Noon sharp.",
            overwrite=True,
            applies_when=["ordering food for the team"],
        )
        assert store.read("lunch.md").extra == {
            applies_when.FIELD: ["ordering food for the team"],
            applies_when.BY_FIELD: applies_when.BY_AGENT,
        }
        # without one: the stored list and its mark stay
        await call(client, "memory_save", **save, body="12:30 now.", overwrite=True)
        after = store.read("lunch.md")
        assert after.body == "12:30 now.\n"
        assert after.extra == {
            applies_when.FIELD: ["ordering food for the team"],
            applies_when.BY_FIELD: applies_when.BY_AGENT,
        }
