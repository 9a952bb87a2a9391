"""The memdir memory tool against the Anthropic SDK's own local implementation (the contract).

Every case runs the same command sequence through ``BetaLocalFilesystemMemoryTool`` (in its own
tmp dir) and through ``MemdirMemoryTool``, and asserts identical result and error texts. The only
normalisation: our root listing also shows MEMORY.md, the index memdir maintains.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest
from anthropic import Anthropic
from anthropic.lib.tools import ToolError
from anthropic.tools.memory import BetaAbstractMemoryTool, BetaLocalFilesystemMemoryTool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.adapters.memory_commands import MemoryCommands
from memdir.adapters.memory_tool import MemdirAsyncMemoryTool, MemdirMemoryTool
from memdir.errors import SecretFoundError, UnsafePathError
from memdir.store import MemoryStore

Cmd = dict[str, Any]


def _view(path: str, rng: list[int] | None = None) -> Cmd:
    cmd: Cmd = {"command": "view", "path": path}
    if rng is not None:
        cmd["view_range"] = rng
    return cmd


def _create(path: str, text: str) -> Cmd:
    return {"command": "create", "path": path, "file_text": text}


def _replace(path: str, old: str, new: str) -> Cmd:
    return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}


def _insert(path: str, line: int, text: str) -> Cmd:
    return {"command": "insert", "path": path, "insert_line": line, "insert_text": text}


def _delete(path: str) -> Cmd:
    return {"command": "delete", "path": path}


def _rename(old: str, new: str) -> Cmd:
    return {"command": "rename", "old_path": old, "new_path": new}


NOTE = "alpha\nbeta\ngamma\nbeta\ndelta\n"
MD = "---\nname: Coffee\ndescription: user likes oat milk\ntype: user\n---\nOat milk, no sugar.\n"

CASES: dict[str, list[Cmd]] = {
    "create_and_view_file": [_create("/memories/notes.txt", NOTE), _view("/memories/notes.txt")],
    "view_range": [
        _create("/memories/n.txt", NOTE),
        _view("/memories/n.txt", [2, 3]),
        _view("/memories/n.txt", [3, -1]),
        _view("/memories/n.txt", [0, 1]),
    ],
    "view_root_and_nested_two_levels": [
        _create("/memories/a/b/c/deep.md", MD),
        _create("/memories/a/top.txt", "x" * 2000),
        _create("/memories/z.md", ""),
        _view("/memories"),
        _view("/memories/a"),
        _view("/memories/"),
    ],
    "view_skips_hidden": [
        _create("/memories/.secret", "h"),
        _create("/memories/v.txt", "v"),
        _view("/memories"),
    ],
    "view_missing": [_view("/memories/nope.md")],
    "path_without_prefix": [_view("/etc/passwd"), _create("relative.md", "x")],
    "dotdot_escape": [_view("/memories/../x"), _create("/memories/../../etc/x.md", "x")],
    "dotdot_inside_is_resolved": [_create("/memories/a/../b.md", "b\n"), _view("/memories/b.md")],
    "create_existing": [_create("/memories/x.md", "1"), _create("/memories/x.md", "2")],
    "create_onto_dir_and_root": [
        _create("/memories/d/f.md", "f"),
        _create("/memories/d", "x"),
        _create("/memories", "x"),
    ],
    "str_replace_ok": [_create("/memories/n.txt", NOTE), _replace("/memories/n.txt", "gamma", "G")],
    "str_replace_snippet_edges": [
        _create("/memories/n.txt", NOTE),
        _replace("/memories/n.txt", "alpha", "A\nA2"),
        _replace("/memories/n.txt", "delta\n", "D"),
    ],
    "str_replace_missing_text": [
        _create("/memories/n.txt", NOTE),
        _replace("/memories/n.txt", "omega", "x"),
        _view("/memories/n.txt"),
    ],
    "str_replace_not_unique": [
        _create("/memories/n.txt", NOTE),
        _replace("/memories/n.txt", "beta", "B"),
        _replace("/memories/n.txt", "a", "B"),
        _view("/memories/n.txt"),
    ],
    "str_replace_missing_file_and_dir": [
        _create("/memories/d/f.md", "f"),
        _replace("/memories/nope.md", "a", "b"),
        _replace("/memories/d", "a", "b"),
    ],
    "insert_ok": [
        _create("/memories/n.txt", NOTE),
        _insert("/memories/n.txt", 0, "first"),
        _insert("/memories/n.txt", 6, "last\n"),
        _insert("/memories/n.txt", 2, "two\nlines"),
        _view("/memories/n.txt"),
    ],
    "insert_range_errors": [
        _create("/memories/n.txt", NOTE),
        _insert("/memories/n.txt", -1, "x"),
        _insert("/memories/n.txt", 6, "x"),
        _insert("/memories/nope.txt", 0, "x"),
    ],
    "insert_crlf_and_no_trailing_newline": [
        _create("/memories/w.txt", "one\r\ntwo"),
        _insert("/memories/w.txt", 1, "mid"),
        _view("/memories/w.txt"),
    ],
    "insert_into_empty": [
        _create("/memories/e.txt", ""),
        _insert("/memories/e.txt", 0, "x"),
        _view("/memories/e.txt"),
    ],
    "delete_file_and_dir": [
        _create("/memories/x.md", MD),
        _create("/memories/d/e/f.md", MD),
        _delete("/memories/x.md"),
        _delete("/memories/d"),
        _view("/memories/d"),
    ],
    "delete_missing_and_root": [
        _delete("/memories/nope.md"),
        _delete("/memories"),
        _delete("/memories/"),
    ],
    "rename_file": [
        _create("/memories/old.md", MD),
        _rename("/memories/old.md", "/memories/sub/new.md"),
        _view("/memories/sub/new.md"),
        _view("/memories/old.md"),
    ],
    "rename_errors": [
        _create("/memories/a.md", "a"),
        _create("/memories/b.md", "b"),
        _rename("/memories/a.md", "/memories/b.md"),
        _rename("/memories/nope.md", "/memories/c.md"),
        _rename("/memories", "/memories/x"),
        _rename("/memories/a.md", "/outside.md"),
    ],
    "view_range_out_of_bounds": [
        _create("/memories/n.txt", NOTE),
        _view("/memories/n.txt", [4, 100]),
        _view("/memories/n.txt", [50, 60]),
        _view("/memories/n.txt", [3]),
    ],
    "unicode_and_empty_old_str": [
        _create("/memories/u.md", "café ☕\nnaïve 😀 line\n"),
        _replace("/memories/u.md", "😀", "🙂"),
        _replace("/memories/u.md", "", "x"),
        _view("/memories/u.md"),
    ],
    "rename_dir": [
        _create("/memories/d/one.md", MD),
        _create("/memories/d/sub/two.txt", "2"),
        _rename("/memories/d", "/memories/e"),
        _view("/memories/e"),
        _view("/memories/d"),
    ],
}


def _run(tool: BetaAbstractMemoryTool, cmds: list[Cmd]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for cmd in cmds:
        try:
            out.append(("ok", tool.call(cmd)))
        except ToolError as exc:
            out.append(("error", exc.content))
    return out


def _without_index(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    index_line = re.compile(r"\t/memories/+MEMORY\.md$")
    return "\n".join(ln for ln in text.split("\n") if not index_line.search(ln))


@pytest.fixture
def tools(tmp_path: Path) -> tuple[BetaLocalFilesystemMemoryTool, MemdirMemoryTool, MemoryStore]:
    sdk = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path / "sdk"))
    store = MemoryStore(tmp_path / "ours" / "memory")
    return sdk, MemdirMemoryTool(store), store


@pytest.mark.parametrize("name", list(CASES))
def test_same_texts_as_sdk(
    name: str, tools: tuple[BetaLocalFilesystemMemoryTool, MemdirMemoryTool, MemoryStore]
) -> None:
    sdk, ours, _store = tools
    expected = _run(sdk, CASES[name])
    got = [(kind, _without_index(text)) for kind, text in _run(ours, CASES[name])]
    assert got == expected


@pytest.mark.parametrize("name", list(CASES))
async def test_async_tool_same_texts_as_sdk(tmp_path: Path, name: str) -> None:
    sdk = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path / "sdk"))
    ours = MemdirAsyncMemoryTool(MemoryStore(tmp_path / "ours"))
    got: list[tuple[str, Any]] = []
    for cmd in CASES[name]:
        try:
            got.append(("ok", _without_index(await ours.call(cmd))))
        except ToolError as exc:
            got.append(("error", exc.content))
    assert got == _run(sdk, CASES[name])


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and not p.name.startswith(".")
    }


FILE_CASES = [
    "delete_file_and_dir",
    "rename_file",
    "rename_dir",
    "create_and_view_file",
    "insert_ok",
]


@pytest.mark.parametrize("name", FILE_CASES)
def test_same_files_as_sdk(
    name: str, tools: tuple[BetaLocalFilesystemMemoryTool, MemdirMemoryTool, MemoryStore]
) -> None:
    sdk, ours, store = tools
    _run(sdk, CASES[name])
    _run(ours, CASES[name])
    mine = {k: v for k, v in _files(store.root).items() if k != "MEMORY.md"}
    assert mine == _files(sdk.memory_root)


BAD_PATHS = [
    "/memories/../escaped.md",
    "/memories/a/../../escaped.md",
    "/memories/%2e%2e/escaped.md",
    "/memories/%2E%2E%2Fescaped.md",
    "/memories/..%2fescaped.md",
    "/etc/escaped.md",
    "/tmp/escaped.md",
    "/memories/link/escaped.md",
    "/memories/link",
    "/memories/a\\..\\..\\escaped.md",
    "/memories/nul\x00.md",
    "memories/escaped.md",
]


def _commands_for(path: str) -> list[Cmd]:
    return [
        _create(path, "pwned"),
        _view(path),
        _replace(path, "safe", "pwned"),
        _insert(path, 0, "pwned"),
        _delete(path),
        _rename("/memories/safe.md", path),
        _rename(path, "/memories/moved.md"),
    ]


@pytest.mark.parametrize("path", BAD_PATHS)
def test_traversal_refused_and_nothing_written_outside(tmp_path: Path, path: str) -> None:
    root = tmp_path / "mem"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "escaped.md").write_text("safe\n")
    store = MemoryStore(root)
    tool = MemdirMemoryTool(store)
    tool.call(_create("/memories/safe.md", "safe\n"))
    os.symlink(outside, root / "link")
    before_out = _files(outside)
    before_in = _files(root)
    for cmd in _commands_for(path):
        with pytest.raises(ToolError) as info:
            tool.call(cmd)
        assert "escape" in str(info.value.content) or "must start with" in str(info.value.content)
    assert _files(outside) == before_out
    assert _files(root) == before_in
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mem", "outside"]


def test_listing_skips_symlink_pointing_out(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("x")
    store = MemoryStore(tmp_path / "mem")
    tool = MemdirMemoryTool(store)
    tool.call(_create("/memories/in.md", "i"))
    os.symlink(outside, store.root / "link")
    listing = tool.call(_view("/memories"))
    assert isinstance(listing, str)
    assert "/memories/in.md" in listing
    assert "link" not in listing


def _index(store: MemoryStore) -> str:
    return (store.root / "MEMORY.md").read_text()


def test_writes_keep_memory_md_in_step(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    tool = MemdirMemoryTool(store)
    tool.call(_create("/memories/coffee.md", MD))
    assert "- [Coffee](coffee.md) — user likes oat milk" in _index(store)
    tool.call(_replace("/memories/coffee.md", "user likes oat milk", "user drinks black coffee"))
    assert "(coffee.md) — user drinks black coffee" in _index(store)
    assert "oat milk" not in _index(store)
    tool.call(_rename("/memories/coffee.md", "/memories/prefs/coffee.md"))
    assert "(prefs/coffee.md)" in _index(store)
    assert "(coffee.md)" not in _index(store)
    tool.call(_create("/memories/prefs/tea.md", "no frontmatter\n"))
    tool.call(_rename("/memories/prefs", "/memories/drinks"))
    assert "(drinks/coffee.md)" in _index(store) and "[tea](drinks/tea.md)" in _index(store)
    assert "prefs/" not in _index(store)
    tool.call(_delete("/memories/drinks"))
    assert "drinks/" not in _index(store)
    assert not (store.root / "drinks").exists()


def test_guard_refusal_reaches_the_model_and_writes_nothing(tmp_path: Path) -> None:
    def no_secrets(rel: str, text: str) -> None:
        if "sk-live" in text:
            raise SecretFoundError(["api-key"], path=rel)

    store = MemoryStore(tmp_path / "mem", guards=[no_secrets])
    tool = MemdirMemoryTool(store)
    tool.call(_create("/memories/ok.md", "fine\n"))
    attempts = [
        _create("/memories/k.md", "key sk-live-123"),
        _replace("/memories/ok.md", "fine", "sk-live-123"),
        _insert("/memories/ok.md", 1, "sk-live-123"),
    ]
    for cmd in attempts:
        with pytest.raises(ToolError) as info:
            tool.call(cmd)
        assert "potential secrets (api-key)" in str(info.value.content)
        assert "sk-live-123" not in str(info.value.content)
    assert not (store.root / "k.md").exists()
    assert (store.root / "ok.md").read_text() == "fine\n"


def test_concurrent_inserts_lose_no_line(tmp_path: Path) -> None:
    """Read-modify-write commands hold the store lock: parallel inserts all land."""
    store = MemoryStore(tmp_path / "mem")
    MemdirMemoryTool(store).call(_create("/memories/log.md", ""))

    def worker(n: int) -> None:
        tool = MemdirMemoryTool(store)  # one tool per thread, as separate agents would have
        for i in range(15):
            tool.call(_insert("/memories/log.md", 0, f"w{n}-{i}"))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = store.read_text("log.md").splitlines()
    assert sorted(lines) == sorted(f"w{n}-{i}" for n in range(4) for i in range(15))


@pytest.mark.parametrize("tool_cls", [MemdirMemoryTool, MemdirAsyncMemoryTool])
async def test_for_dir_installs_the_team_secret_guard(tmp_path: Path, tool_cls: type) -> None:
    tool = tool_cls.for_dir(tmp_path / "mem")
    leak = _create("/memories/team/aws.md", "key AKIAQ3JZ7WL2XK5RV4NM\n")
    private = _create("/memories/aws.md", "key AKIAQ3JZ7WL2XK5RV4NM\n")
    with pytest.raises(ToolError) as info:
        result = tool.call(leak)
        if tool_cls is MemdirAsyncMemoryTool:
            await result
    assert "potential secrets (AWS access key)" in str(info.value.content)
    assert not (tmp_path / "mem" / "team" / "aws.md").exists()
    done = tool.call(private)  # private memory is the user's own: not scanned
    text = await done if tool_cls is MemdirAsyncMemoryTool else done
    assert text == "File created successfully at: /memories/aws.md"


def test_to_dict_is_the_builtin_memory_tool(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(MemoryStore(tmp_path / "mem"))
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}


def _message(content: list[dict[str, Any]], stop: str, n: int) -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def test_drives_through_the_sdk_tool_runner(tmp_path: Path) -> None:
    """A scripted API (mock transport): two tool_use blocks, then end_turn. No network.

    The good call writes (and indexes) a memory; the traversal comes back to the model as an
    ``is_error`` tool result with the SDK's text, and nothing is written outside.
    """
    requests: list[dict[str, Any]] = []
    create = {"command": "create", "path": "/memories/coffee.md", "file_text": MD}
    escape = {"command": "create", "path": "/memories/../escaped.md", "file_text": "x"}
    replies = [
        _message(
            [
                {"type": "tool_use", "id": "toolu_1", "name": "memory", "input": create},
                {"type": "tool_use", "id": "toolu_2", "name": "memory", "input": escape},
            ],
            "tool_use",
            1,
        ),
        _message([{"type": "text", "text": "Saved."}], "end_turn", 2),
    ]

    def handler(request: httpx2.Request) -> httpx2.Response:
        requests.append(json.loads(request.content))
        return httpx2.Response(200, json=replies[len(requests) - 1])

    client = Anthropic(
        api_key="test-key",
        base_url="http://127.0.0.1:9",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    store = MemoryStore(tmp_path / "mem")
    runner = client.beta.messages.tool_runner(
        model="claude-test",
        max_tokens=100,
        messages=[{"role": "user", "content": "I take oat milk"}],
        tools=[MemdirMemoryTool(store)],
    )
    final = runner.until_done()
    assert final.content[0].type == "text"
    assert len(requests) == 2
    assert {"type": "memory_20250818", "name": "memory"} in requests[0]["tools"]
    ok, refused = requests[1]["messages"][-1]["content"]
    assert ok["type"] == "tool_result" and ok["tool_use_id"] == "toolu_1"
    assert not ok.get("is_error")
    assert "File created successfully at: /memories/coffee.md" in json.dumps(ok)
    assert refused["tool_use_id"] == "toolu_2" and refused["is_error"] is True
    assert "Path /memories/../escaped.md would escape /memories directory" in json.dumps(refused)
    assert store.read("coffee.md").name == "Coffee"
    assert "(coffee.md)" in _index(store)
    assert not (tmp_path / "escaped.md").exists()


PIECES = st.sampled_from(["..", ".", "/", "\\", "%2e", "%2E", "%2f", "%00", "a", "b.md", "~",
                          ":", "\x00", "．", "／", "link", "%", "\n"])  # fmt: skip
TRICKY = st.lists(PIECES, max_size=8).map("".join)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tail=TRICKY)
def test_any_memories_path_is_refused_or_inside(tmp_path: Path, tail: str) -> None:
    root = tmp_path / "mem"
    commands = MemoryCommands(MemoryStore(root))
    if not (root / "link").is_symlink():
        os.symlink(tmp_path, root / "link")
    try:
        rel = commands.rel("/memories/" + tail)
    except UnsafePathError:
        return
    target = Path(os.path.realpath(root / rel))
    assert target == Path(os.path.realpath(root)) or target.is_relative_to(os.path.realpath(root))
