"""``memdir mcp`` as a real child process, driven by the ``mcp`` SDK's own client.

One server process per test (each costs an interpreter start): every tool over stdio, good and
bad input, with the files on disk checked after each call; then the HTTP transport on loopback,
and the refusal to bind anywhere else.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import memdir
from memdir import applies_when
from memdir.cli.main import main
from memdir.frontmatter import parse_memory

SRC = str(Path(memdir.__file__).resolve().parents[1])


def child_env(tmp_path: Path) -> dict[str, str]:
    """Exactly what the server needs: stdio children do not inherit the full environment."""
    home = tmp_path / "child-home"
    home.mkdir(exist_ok=True)
    # PYTHONPATH: the memdir under test, not whichever one the interpreter has installed
    return {"HOME": str(home), "PATH": os.environ["PATH"], "HF_HUB_OFFLINE": "1", "PYTHONPATH": SRC}


def server_args(memory_dir: Path, *extra: str, dir_after: bool = False) -> list[str]:
    """``memdir --dir D mcp ...`` (global flag) or ``memdir mcp --dir D ...`` (config style)."""
    if dir_after:
        return ["-m", "memdir", "mcp", "--dir", str(memory_dir), *extra]
    return ["-m", "memdir", "--dir", str(memory_dir), "mcp", *extra]


@asynccontextmanager
async def stdio_server(tmp_path: Path, memory_dir: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=server_args(memory_dir, dir_after=True),
        env=child_env(tmp_path),
        cwd=str(tmp_path),
    )
    with open(tmp_path / "server-stderr.txt", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield client


async def ok(client: Client, tool: str, /, **args: Any) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    return result.structured_content


async def error(client: Client, tool: str, /, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, result.structured_content
    text = result.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text


def tree(base: Path) -> dict[str, bytes]:
    return {
        p.relative_to(base).as_posix(): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file() and not p.name.startswith(".") and "cache" not in p.parts
    }


async def test_every_tool_over_stdio(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    outside = tmp_path / "outside.md"
    outside.write_text("not a memory\n")
    async with stdio_server(tmp_path, mem) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == {
            "memory_recall",
            "memory_read",
            "memory_list",
            "memory_save",
            "memory_edit",
            "memory_delete",
            "memory_rename",
            "memory_index",
        }

        saved = await ok(
            client,
            "memory_save",
            name="Deploy freeze",
            type="project",
            description="no production deploys on Fridays",
            body="Release freeze every Friday.\n**Why:** weekend on-call is thin.",
        )
        assert saved == {"path": "deploy_freeze.md", "created": True}
        await ok(
            client,
            "memory_save",
            name="Coffee",
            type="user",
            description="user takes oat milk",
            body="Oat milk, no sugar.",
            path="prefs/coffee.md",
        )
        assert (mem / "deploy_freeze.md").read_text().startswith("---\nname: Deploy freeze\n")
        assert "(prefs/coffee.md) — user takes oat milk" in (mem / "MEMORY.md").read_text()

        read = await ok(client, "memory_read", path="prefs/coffee.md")
        assert (read["type"], read["body"]) == ("user", "Oat milk, no sugar.\n")
        listed = await ok(client, "memory_list", type="project")
        assert [m["path"] for m in listed["memories"]] == ["deploy_freeze.md"]
        index = await ok(client, "memory_index")
        assert "(deploy_freeze.md)" in index["content"] and not index["truncated"]

        recalled = await ok(client, "memory_recall", query="can we ship to production on friday?")
        assert [m["path"] for m in recalled["memories"]][:1] == ["deploy_freeze.md"]

        await ok(
            client,
            "memory_edit",
            path="prefs/coffee.md",
            old_string="no sugar",
            new_string="one sugar",
        )
        assert "one sugar" in (mem / "prefs/coffee.md").read_text()
        await ok(client, "memory_rename", old_path="prefs/coffee.md", new_path="coffee.md")
        assert "(coffee.md)" in (mem / "MEMORY.md").read_text()
        assert not (mem / "prefs/coffee.md").exists()

        before = tree(tmp_path)
        bad = [
            ("memory_read", {"path": "../outside.md"}, "unsafe path"),
            (
                "memory_save",
                {
                    "name": "x",
                    "description": "d",
                    "type": "user",
                    "body": "b",
                    "path": "../outside.md",
                    "overwrite": True,
                },
                "unsafe path",
            ),
            ("memory_delete", {"path": str(outside)}, "unsafe path"),
            ("memory_read", {"path": "nope.md"}, "not found"),
            (
                "memory_save",
                {"name": "x", "description": "d", "type": "opinion", "body": "b"},
                "unknown memory type 'opinion'",
            ),
            ("memory_list", {"type": "opinion"}, "unknown memory type"),
            (
                "memory_edit",
                {"path": "deploy_freeze.md", "old_string": "e", "new_string": "E"},
                "occurs",
            ),
            (
                "memory_edit",
                {"path": "deploy_freeze.md", "old_string": "absent", "new_string": "x"},
                "not found",
            ),
            (
                "memory_rename",
                {"old_path": "coffee.md", "new_path": "deploy_freeze.md"},
                "already exists",
            ),
            ("memory_delete", {"path": "MEMORY.md"}, "refused"),
            (
                "memory_save",
                {
                    "name": "Token",
                    "description": "d",
                    "type": "reference",
                    "body": "AKIA" + "ZQ4HN7XKT2MB6RWC",  # joined: no key-shaped literal
                    "path": "team/aws.md",
                },
                "refused",
            ),
            ("memory_recall", {"query": "x", "limit": 50}, "less than or equal to 5"),
        ]
        for tool, args, expected in bad:
            assert expected in await error(client, tool, **args), (tool, args)
        assert tree(tmp_path) == before  # nothing written, inside or outside

        assert await ok(client, "memory_delete", path="coffee.md") == {"path": "coffee.md"}
        assert not (mem / "coffee.md").exists()
        assert "coffee.md" not in (mem / "MEMORY.md").read_text()

        index_resource = await client.read_resource("memdir://index")
        assert "(deploy_freeze.md)" in index_resource.contents[0].text  # type: ignore[union-attr]
        prompt = await client.get_prompt("memdir")
        assert "memory_save" in prompt.messages[0].content.text  # type: ignore[union-attr]


# A memory whose words a request about renaming a menu item never uses; the rules' list names
# user-facing text and UI building, and neither lets recall keep it for that request.
LOKALISE = {
    "name": "Strings live in Lokalise",
    "description": "UI copy is managed in Lokalise; never hand-edit the locale JSON files",
    "type": "feedback",
    "body": "The nightly sync overwrites src/locales/*.json.\n**Why:** hand edits were lost "
    "twice.\n**How to apply:** change the key in Lokalise, then run `make pull-strings`.\n",
}
AGENTS_LIST = [
    "fixing a typo or changing the wording of a button, label or message",
    "renaming a menu item or page title",
    "adding a new language to the app",
]
NO_SHARED_WORD = "Rename the Billing menu item to Invoices"
OTHERS = [
    ("Deploy freeze", "no production deploys on Fridays", "project", "Release freeze."),
    ("Coffee", "user takes oat milk", "user", "Oat milk, no sugar."),
    ("Real database in tests", "integration tests hit a real Postgres", "feedback", "No mocks."),
    ("Weekly sync", "team sync is Tuesdays 10:00 CET", "reference", "Agenda in the drive."),
]


async def _cli(tmp_path: Path, memory_dir: Path, *argv: str) -> Any:
    """``memdir --json --dir D …`` in a thread (the CLI runs its own event loop)."""
    out, err = io.StringIO(), io.StringIO()
    env = {"HOME": str(tmp_path / "cli-home"), "HF_HUB_OFFLINE": "1"}
    args = ["--json", "--dir", str(memory_dir), *argv]
    code = await asyncio.to_thread(main, args, env=env, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


async def test_the_saving_agents_applies_when_over_stdio_recalls_a_no_shared_word_request(
    tmp_path: Path,
) -> None:
    """memory_save with applies_when (the host agent's own situations), over the SDK's client:
    stored as the agent wrote it, marked as the agent's (recall reads the rules' list first); bad
    lists are tool errors that write nothing; and the list is what makes ``memdir recall`` and
    memory_recall surface the memory for a request that shares no word with it (the same memory
    with the rules' list does not)."""
    words = set(re.findall(r"[a-z]{4,}", " ".join(LOKALISE.values()).lower()))  # content words
    assert not words & set(re.findall(r"[a-z]{4,}", NO_SHARED_WORD.lower()))
    mem = tmp_path / "memory"
    async with stdio_server(tmp_path, mem) as client:
        for name, description, type_, body in OTHERS:
            await ok(
                client, "memory_save", name=name, description=description, type=type_, body=body
            )
        before = tree(tmp_path)
        bad = [
            ("not a list", "valid list"),
            (["fine", 7], "valid string"),
            ([["nested"]], "valid string"),
            ({"when": "always"}, "valid list"),
        ]
        for value, expected in bad:
            assert expected in await error(client, "memory_save", **LOKALISE, applies_when=value)
        assert tree(tmp_path) == before

        saved = await ok(client, "memory_save", **LOKALISE, applies_when=AGENTS_LIST)
        assert saved == {"path": "strings_live_in_lokalise.md", "created": True}
        text = (mem / saved["path"]).read_text(encoding="utf-8")
        stored = parse_memory(text, saved["path"]).extra
        rules = applies_when.derive(
            LOKALISE["type"], LOKALISE["name"], LOKALISE["description"], LOKALISE["body"]
        )
        assert rules  # recall reads them before the agent's list, which the file holds alone
        assert stored == {
            applies_when.FIELD: AGENTS_LIST,
            applies_when.BY_FIELD: applies_when.BY_AGENT,
        }
        # the server's model reads new memories in the background (a query reads its best
        # candidates within a deadline first): on a loaded machine the first answer may come
        # from the fast stage alone, so ask until the model has read it, as a user would again
        deadline = time.monotonic() + 60
        while True:
            recalled = await ok(client, "memory_recall", query=NO_SHARED_WORD)
            top = [m["path"] for m in recalled["memories"]][:1]
            if top == [saved["path"]] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        assert top == [saved["path"]]

    surfaced = await _cli(tmp_path, mem, "recall", NO_SHARED_WORD)
    assert [Path(row["path"]).name for row in surfaced] == [saved["path"]]
    explained = (await _cli(tmp_path, mem, "recall", "--explain", NO_SHARED_WORD))[0]
    assert explained["selected"] and "renaming a menu item or page title" in explained["why"]

    # The same dir written without the agent's list (the rules' alone): not surfaced.
    rules_only = tmp_path / "rules-only"
    for name, description, type_, body in [*OTHERS, tuple(LOKALISE.values())]:
        await _cli(tmp_path, rules_only, "add", name, "-d", description, "-t", type_, "-b", body)
    assert applies_when.FIELD in (rules_only / saved["path"]).read_text(encoding="utf-8")
    assert await _cli(tmp_path, rules_only, "recall", NO_SHARED_WORD) == []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"server did not listen on {port}")


async def test_http_transport_on_loopback(tmp_path: Path) -> None:
    port = free_port()
    mem = tmp_path / "memory"
    proc = subprocess.Popen(
        [sys.executable, *server_args(mem, "--transport", "http", "--port", str(port))],
        env=child_env(tmp_path),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_listening(port, proc)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            saved = await ok(
                client,
                "memory_save",
                name="HTTP works",
                description="d",
                type="reference",
                body="over streamable HTTP",
            )
            assert saved["created"] is True
            read = await ok(client, "memory_read", path="http_works.md")
            assert read["body"] == "over streamable HTTP\n"
        assert (mem / "http_works.md").exists()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3"])
def test_http_refuses_non_loopback_bind(tmp_path: Path, host: str) -> None:
    done = subprocess.run(
        [sys.executable, *server_args(tmp_path / "m", "--transport", "http", "--host", host)],
        env=child_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "loopback" in done.stderr
    assert not (tmp_path / "m").exists()


async def test_instructions_follow_settings_from_the_environment(tmp_path: Path) -> None:
    env = child_env(tmp_path) | {"MEMDIR_TEAM": "1", "MEMDIR_EXTRA_GUIDELINES": "Cite sources."}
    params = StdioServerParameters(
        command=sys.executable,
        args=server_args(tmp_path / "memory"),
        env=env,
        cwd=str(tmp_path),
    )
    async with Client(params) as client:
        result = await client.read_resource("memdir://instructions")
    text = result.contents[0].text  # type: ignore[union-attr]
    assert "credentials in team memory" in text  # combined (team) mode, from MEMDIR_TEAM=1
    assert "Cite sources." in text
    assert str(tmp_path / "memory" / "team") in text
