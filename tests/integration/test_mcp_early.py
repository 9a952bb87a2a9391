"""``memdir mcp`` answers the handshake before the MCP SDK loads (``adapters/mcp_early.py``).

- The packaged manifest must equal what the SDK itself answers, for every handshake protocol
  version: regenerate it with ``python tests/integration/test_mcp_early.py --write`` when this
  fails after an SDK upgrade or a tool change.
- A real client sees one answer per request (the SDK's duplicates are dropped), every tool works
  behind the relays, and the server still ends on stdin EOF.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import memdir
from memdir.adapters.mcp_early import DISCOVER, LISTS, MANIFEST
from tests.integration.mcp_wire import initialize

SRC = Path(memdir.__file__).resolve().parents[1]


def spawn(tmp: Path, *, early: bool, args: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    home = tmp / ("home-early" if early else "home-sdk")
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "PYTHONPATH": str(SRC)}
    if not early:
        env["MEMDIR_MCP_EARLY"] = "0"
    return subprocess.Popen(
        [sys.executable, "-m", "memdir", "mcp", "--dir", str(tmp / "memory"), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def converse(tmp: Path, messages: list[dict[str, Any]], *, early: bool) -> list[dict[str, Any]]:
    """Send ``messages`` one by one (each request waits for its answer); every line received."""
    proc = spawn(tmp, early=early)
    assert proc.stdin is not None and proc.stdout is not None
    received: list[dict[str, Any]] = []
    with proc:
        for message in messages:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            if "id" in message:
                while True:
                    reply = json.loads(proc.stdout.readline())
                    received.append(reply)
                    if reply.get("id") == message["id"]:
                        break
        proc.stdin.close()
        received.extend(json.loads(line) for line in proc.stdout)  # anything after the last
        assert proc.wait(timeout=30) == 0
    return received


def handshake(version: str) -> list[dict[str, Any]]:
    return [
        initialize(version),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(LISTS, start=2)),
    ]


def sdk_manifest(tmp: Path) -> dict[str, Any]:
    """What the SDK answers (early answers off), per handshake protocol version."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    versions: dict[str, Any] = {}
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        replies = {r["id"]: r["result"] for r in converse(tmp, handshake(version), early=False)}
        init = dict(replies[1])
        assert init.pop("protocolVersion") == version
        init.pop("serverInfo")
        versions[version] = {"initialize": init, **{m: replies[i] for i, m in enumerate(LISTS, 2)}}
    return {"latest": LATEST_HANDSHAKE_VERSION, "versions": versions}


def test_the_manifest_is_what_the_sdk_answers(tmp_path: Path) -> None:
    assert json.loads(MANIFEST.read_text()) == sdk_manifest(tmp_path), (
        "regenerate: python tests/integration/test_mcp_early.py --write"
    )


def test_early_answers_are_the_sdk_answers_once_each(tmp_path: Path) -> None:
    for version in ("2025-06-18", "1999-01-01"):  # a known and an unknown protocol version
        early = converse(tmp_path, handshake(version), early=True)
        plain = converse(tmp_path, handshake(version), early=False)
        assert [r["id"] for r in early] == [1, 2, 3, 4]  # one answer per request, in order
        assert early == plain


def test_a_discover_probe_is_refused_at_once_and_the_handshake_follows(tmp_path: Path) -> None:
    """Claude Code probes ``server/discover`` first and waits ~3 s for an answer before it falls
    back to ``initialize``: the probe is refused at once, the SDK's own later answer dropped."""
    probe = {"jsonrpc": "2.0", "id": "probe-1", "method": DISCOVER, "params": {}}
    call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "memory_list", "arguments": {}},
    }
    replies = converse(tmp_path, [probe, *handshake("2025-11-25"), call], early=True)
    assert [r["id"] for r in replies] == ["probe-1", 1, 2, 3, 4, 5]
    assert replies[0]["error"]["code"] == -32601
    assert replies[1]["result"]["protocolVersion"] == "2025-11-25"
    # The SDK never saw the probe, so it serves a plain handshake session (no envelope needed).
    assert "error" not in replies[5] and not replies[5]["result"].get("isError"), replies[5]


def test_stdin_eof_with_a_request_owed_loses_nothing_the_sdk_would_answer(
    tmp_path: Path,
) -> None:
    """EOF ends the process at once only when nothing is owed; with a call still owed, it ends
    once the call is answered. The SDK alone may drop that call (it ends on EOF with the call
    still running, as found on a loaded CI machine): memdir answers at least what it does."""
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "memory_list", "arguments": {}},
    }
    answered: dict[bool, set[int]] = {}
    for early in (True, False):
        proc = spawn(tmp_path, early=early)
        assert proc.stdin is not None and proc.stdout is not None
        with proc:
            for message in (*handshake("2025-06-18"), call):
                proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.close()  # all at once, then EOF: nothing waits for an answer first
            answered[early] = {json.loads(line)["id"] for line in proc.stdout}
            assert proc.wait(timeout=30) == 0
    assert answered[True] == {1, 2, 3, 4, 7}
    assert answered[True] >= answered[False]


def test_tools_work_behind_the_relays(tmp_path: Path) -> None:
    save = {
        "name": "memory_save",
        "arguments": {"name": "Oat milk", "description": "coffee", "type": "user", "body": "Oat."},
    }
    messages = [
        *handshake("2025-06-18"),
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": save},
        {"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": {"cursor": "x"}},
    ]
    replies = converse(tmp_path, messages, early=True)
    by_id = {r["id"]: r for r in replies}
    assert by_id[9]["result"]["structuredContent"] == {"path": "oat_milk.md", "created": True}
    assert (tmp_path / "memory" / "oat_milk.md").read_text().startswith("---\nname: Oat milk\n")
    # a paginated list is the SDK's to answer: an error or a page, but never left unanswered
    assert "result" in by_id[10] or "error" in by_id[10]


def _sdk_loaded(pid: int) -> bool:
    """Whether the process has loaded the SDK (its pydantic-core extension is mapped; Linux, as
    CI: elsewhere this fails rather than pass unchecked)."""
    return "pydantic_core" in Path(f"/proc/{pid}/maps").read_text()


def test_the_sdk_loads_only_when_a_request_needs_it(tmp_path: Path) -> None:
    """A session that never calls a memory tool never pays the SDK's import (about a second of
    CPU on the host's cores); the first tool call loads it and is answered."""
    proc = spawn(tmp_path, early=True)
    assert proc.stdin is not None and proc.stdout is not None
    with proc:
        for message in handshake("2025-06-18"):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            if "id" in message:
                assert json.loads(proc.stdout.readline())["id"] == message["id"]
        time.sleep(2.0)  # the SDK would have loaded by now (it takes ~1 s) were it started
        assert not _sdk_loaded(proc.pid)
        call = {"name": "memory_list", "arguments": {}}
        request = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call}
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 9 and "result" in reply, reply
        assert _sdk_loaded(proc.pid)
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


def test_preload_loads_the_sdk_and_the_index_before_any_tool_call(tmp_path: Path) -> None:
    """``--preload`` (the MCP-only hosts' servers): the SDK loads and the recall index starts a
    moment after the handshake, so the agent's first ``memory_recall`` finds them ready."""
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "deploy.md").write_text(
        "---\nname: deploy with make ship\ndescription: how releases go out\ntype: project\n"
        "---\nWe deploy with `make ship`, never `kubectl apply` by hand.\n",
        encoding="utf-8",
    )
    proc = spawn(tmp_path, early=True, args=("--preload",))
    assert proc.stdin is not None and proc.stdout is not None
    with proc:
        for message in handshake("2025-06-18"):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            if "id" in message:
                assert json.loads(proc.stdout.readline())["id"] == message["id"]
        cache = tmp_path / "home-early" / ".memdir"
        deadline = time.monotonic() + 60
        while not (_sdk_loaded(proc.pid) and list(cache.rglob("*search*"))):
            assert time.monotonic() < deadline, "the SDK or the index never started unasked"
            time.sleep(0.2)
        call = {"name": "memory_recall", "arguments": {"query": "how do we deploy?"}}
        request = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call}
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 9 and "make ship" in json.dumps(reply), reply
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0


if __name__ == "__main__":
    import tempfile

    if sys.argv[1:] == ["--write"]:
        with tempfile.TemporaryDirectory() as tmp:
            manifest = sdk_manifest(Path(tmp))
        MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        print(f"wrote {MANIFEST}")


def test_the_console_script_answers_early_only_for_a_stdio_server() -> None:
    from memdir.adapters.mcp_early import is_stdio_mcp

    for served in (
        ["mcp"],
        ["mcp", "--dir", "/m"],
        ["--dir", "/m", "mcp", "--preload"],
        ["--json", "--settings=/s.json", "mcp"],
        ["--dir", "mcp", "mcp"],  # a dir named mcp
    ):
        assert is_stdio_mcp(served), served
    for other in (
        ["add", "mcp", "-d", "a memory titled mcp"],
        ["mcp", "--transport", "http"],
        ["mcp", "--help"],
        ["--dir", "mcp"],
        ["mcp", "mcp"],
        ["hook", "mcp"],
        [],
    ):
        assert not is_stdio_mcp(other), other


def test_a_command_that_mentions_mcp_keeps_its_stdout(tmp_path: Path) -> None:
    """``memdir add mcp ...`` goes through the same console script: no relays, its own output."""
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "--json", "--dir", str(tmp_path / "m"), "add", "mcp",
         "-t", "project", "-d", "the mcp server of the team", "-b", "Serve it with memdir mcp."],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"].endswith(".md")


def test_a_broken_settings_file_is_said_at_start_even_with_the_handshake_answered(
    tmp_path: Path,
) -> None:
    """The relays answer the handshake before the CLI reads the settings; a broken file still
    ends the server at once with its one-line error, not silently at stdin's EOF."""
    bad = tmp_path / "settings.json"
    bad.write_text("{broken")
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "--settings", str(bad), "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stderr is not None and proc.stdout is not None
    try:
        assert proc.wait(timeout=60) == 2  # stdin still open: it ended by itself
        assert f"settings file {bad} is not valid JSON" in proc.stderr.read().decode()
    finally:
        proc.kill()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
