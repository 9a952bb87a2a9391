"""OpenCode's dialect: the JSON the plugin sends, the session file it writes, the install (a
plugin file memdir owns whole, an MCP entry in ``opencode.json``), the version it refuses, and
the plugin itself run by a real ``node`` with a fake OpenCode client and a fake memdir."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memdir.adapters.hooks import install
from memdir.adapters.hooks.dialect import Locations
from memdir.adapters.hosts import opencode
from memdir.adapters.hosts.opencode_plugin import MARKER, render_plugin, split_command
from memdir.errors import HookInputError, InstallError
from tests.adapters.hosts.opencode_session import OpenCodeSession

SESSION = "ses_dca7c973affe3Fhvaf1vyPB1RU"
NODE = shutil.which("node")


def test_parse_reads_memdirs_own_fields_and_checks_the_event_name() -> None:
    inp = opencode.parse(
        "user-prompt-submit",
        {"session_id": SESSION, "prompt": "hi", "cwd": "/p", "hook_event_name": "chat.message"},
    )
    assert (inp.session_id, inp.prompt, inp.cwd) == (SESSION, "hi", "/p")
    with pytest.raises(HookInputError):
        opencode.parse("stop", {"session_id": SESSION, "hook_event_name": "chat.message"})
    with pytest.raises(HookInputError):
        opencode.parse("stop", {"session_id": "../x"})
    assert opencode.parse("stop", {"session_id": SESSION, "agent_id": "ses_p"}).agent_id == "ses_p"


@pytest.mark.parametrize(
    ("raw", "typed"),
    [('"how do I deploy?"', "how do I deploy?"), ('say "hi"', 'say "hi"'),
     ('"a" and "b"', '"a" and "b"'), ('"', '"'), ("plain", "plain")],
)  # fmt: skip
def test_the_quotes_opencode_run_adds_are_taken_off(raw: str, typed: str) -> None:
    assert opencode.unquote(raw) == typed
    inp = opencode.parse("user-prompt-submit", {"session_id": SESSION, "prompt": raw})
    assert inp.prompt == typed


def test_render_gives_context_only_where_the_plugin_adds_it() -> None:
    assert json.loads(opencode.render("user-prompt-submit", "recalled")) == {"context": "recalled"}
    assert json.loads(opencode.render("session-start", "x" * 20_000))["context"].endswith("budget]")
    assert opencode.render("stop", "anything") == ""
    assert opencode.render("user-prompt-submit", "") == ""


def test_read_messages_keeps_the_conversation_not_memdirs_own_text(tmp_path: Path) -> None:
    session = OpenCodeSession(tmp_path, SESSION)
    session.turn("We ship on Fridays.", "Noted.", recall="Memories that may be relevant: X")
    session.tool_turn("List the files", "bash", {"command": "ls"}, "a.py\nb.py")
    session.compaction("SUMMARY of the above")
    entries = opencode.read_messages(session.path)
    texts = [b.get("text") for e in entries for b in e["message"]["content"]]
    assert texts[:2] == ["We ship on Fridays.", "Noted."]
    assert not any("Memories that may be relevant" in str(t) for t in texts)
    assert not any("SUMMARY" in str(t) for t in texts)
    tool = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_use"]
    assert tool == [
        {"type": "tool_use", "id": "call_1", "name": "bash", "input": {"command": "ls"}}
    ]
    result = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_result"]
    assert result[0]["content"] == "a.py\nb.py"
    assert len({e["uuid"] for e in entries}) == len(entries)  # stable, distinct cursors


@pytest.mark.parametrize("raw", [b"\xff\xfe", b"[" * 50_000, b'{"messages": {"a": 1}}', b"7"])
def test_read_messages_of_garbage_is_empty(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(raw)
    assert opencode.read_messages(path) == []


def test_split_command_separates_env_prefix_and_global_flags() -> None:
    argv, extra, flags = split_command(
        ["env", "MEMDIR_HOST_MODEL=off", "/v/bin/memdir", "--dir", "/m", "--claude"]
    )
    assert argv == ["/v/bin/memdir", "--dir", "/m", "--claude"]
    assert extra == {"MEMDIR_HOST_MODEL": "off"}
    assert flags == {"dir": "/m", "settings": None, "claude": True, "host": "opencode"}


@pytest.mark.parametrize(
    ("version", "refused"),
    [((1, 18), False), ((1, 99), False), ((2, 0), True), ((1, 17), True), (None, False)],
)
def test_check_version(version: tuple[int, int] | None, refused: bool) -> None:
    problem = opencode.check_version(version)
    assert (problem is not None) == refused
    if version == (2, 0):
        assert problem is not None and "2.x plugin API" in problem


def _fake_opencode(bin_dir: Path, version: str) -> dict[str, str]:
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "opencode"
    script.write_text(f"#!/bin/sh\necho {version}\n")
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}


def _loc(tmp_path: Path, env: dict[str, str]) -> Locations:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True, exist_ok=True)
    return Locations.from_env({**env, "HOME": str(home)}, home=home, project_root=project)


def test_installed_version_asks_the_opencode_on_path(tmp_path: Path) -> None:
    assert opencode.installed_version(_fake_opencode(tmp_path, "1.18.33")) == (1, 18)
    assert opencode.installed_version({"PATH": str(tmp_path / "none")}) is None
    loc = _loc(tmp_path, _fake_opencode(tmp_path / "b2", "2.1.0"))
    with pytest.raises(InstallError, match=r"2\.x plugin API"):
        opencode.DIALECT.check_install("project", loc)  # type: ignore[attr-defined]


def _install(loc: Locations, scope: str, memdir_home: Path) -> list[install.FileChange]:
    record = install.InstallRecord(memdir_home).load()
    changes = install.plan_install(opencode.DIALECT, scope, loc, ["/v/bin/memdir"], record)
    install.apply(changes, memdir_home=memdir_home, install=True)
    return changes


def _uninstall(loc: Locations, scope: str, memdir_home: Path) -> None:
    record = install.InstallRecord(memdir_home).load()
    changes = install.plan_uninstall(opencode.DIALECT, scope, loc, record)
    install.apply(changes, memdir_home=memdir_home, install=False)


def test_install_and_uninstall_are_byte_exact(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    loc = _loc(tmp_path, env)
    config = tmp_path / "xdg" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    original = '{\n    "model": "fake/m",\n    "provider": {}\n}\n'
    config.write_text(original)
    home = tmp_path / "memdir-home"
    _install(loc, "user", home)
    plugin = tmp_path / "xdg" / "opencode" / "plugins" / "memdir.js"
    assert plugin.read_text().startswith(MARKER)
    entry = json.loads(config.read_text())["mcp"]["memdir"]
    assert entry == {"type": "local", "command": ["/v/bin/memdir", "mcp"], "enabled": True}
    _install(loc, "user", home)  # again: unchanged
    _uninstall(loc, "user", home)
    assert config.read_text() == original
    assert not plugin.parent.exists()  # the plugins dir the install created is gone too
    _install(loc, "project", home)
    assert (loc.project_root / ".opencode" / "plugins" / "memdir.js").is_file()
    _uninstall(loc, "project", home)
    assert sorted(loc.project_root.iterdir()) == []


OPENCODE_GITIGNORE = "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore"


def _opencode_ran(project: Path) -> None:
    """What a real ``opencode run`` (1.x) leaves beside a project install: its "$schema" key in
    opencode.json and a .gitignore in .opencode/ (seen in tests/realhost/test_opencode_e2e.py)."""
    config = project / "opencode.json"
    value = json.loads(config.read_text())
    config.write_text(json.dumps({"$schema": "https://opencode.ai/config.json", **value}))
    (project / ".opencode" / ".gitignore").write_text(OPENCODE_GITIGNORE)


def test_uninstall_takes_what_opencode_wrote_beside_memdirs_files(tmp_path: Path) -> None:
    loc = _loc(tmp_path, {})
    _install(loc, "project", tmp_path / "mh")
    _opencode_ran(loc.project_root)
    _uninstall(loc, "project", tmp_path / "mh")
    assert sorted(loc.project_root.iterdir()) == []  # as before the install


def test_uninstall_keeps_what_the_user_wrote_in_the_dirs_and_config(tmp_path: Path) -> None:
    loc = _loc(tmp_path, {})
    _install(loc, "project", tmp_path / "mh")
    _opencode_ran(loc.project_root)
    config = loc.project_root / "opencode.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "model": "fake/m"}))
    ignore = loc.project_root / ".opencode" / ".gitignore"
    ignore.write_text(OPENCODE_GITIGNORE + "\nmy-notes/\n")
    _uninstall(loc, "project", tmp_path / "mh")
    assert json.loads(config.read_text()) == {
        "$schema": "https://opencode.ai/config.json",
        "model": "fake/m",
    }
    assert ignore.read_text().endswith("my-notes/\n")  # edited: the user's now
    assert not (loc.project_root / ".opencode" / "plugins").exists()


def test_install_never_overwrites_a_plugin_it_did_not_write(tmp_path: Path) -> None:
    loc = _loc(tmp_path, {})
    plugin = loc.project_root / ".opencode" / "plugins" / "memdir.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Mine = async () => ({})\n")
    with pytest.raises(InstallError, match="did not write it"):
        _install(loc, "project", tmp_path / "mh")
    assert plugin.read_text() == "export const Mine = async () => ({})\n"


def test_uninstall_leaves_an_edited_plugin_and_says_so(tmp_path: Path) -> None:
    loc = _loc(tmp_path, {})
    _install(loc, "project", tmp_path / "mh")
    plugin = loc.project_root / ".opencode" / "plugins" / "memdir.js"
    plugin.write_text(plugin.read_text() + "// mine\n")
    with pytest.raises(InstallError, match="changed since memdir wrote it"):
        _uninstall(loc, "project", tmp_path / "mh")
    assert plugin.read_text().endswith("// mine\n")


def test_a_second_active_form_is_refused(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "PATH": str(tmp_path / "none")}
    loc = _loc(tmp_path, env)
    _install(loc, "project", tmp_path / "mh")
    with pytest.raises(InstallError, match="forward every event twice"):
        opencode.DIALECT.check_install("user", loc)  # type: ignore[attr-defined]
    opencode.DIALECT.check_install("project", loc)  # type: ignore[attr-defined]


# -- the plugin itself, under node ---------------------------------------------------------

DRIVER = """
const mod = await import(process.argv[2])
const calls = []
const messages = async () => {
  calls.push("messages")
  return { data: [] }
}
const client = { session: { messages } }
const hooks = await mod.MemdirPlugin({ client, directory: process.argv[3] })
const out = { message: { id: "msg_1" }, parts: [
  { id: "prt_1", type: "text", text: "How do I deploy?", messageID: "msg_1", sessionID: "S" },
] }
await hooks.event({ event: { type: "session.created", properties: { sessionID: "S" } } })
await hooks["chat.message"]({ sessionID: "S" }, out)
await hooks["chat.message"]({ sessionID: 5 }, { parts: null })
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "../../escape" } } })
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "S" } } })
await hooks.event({ event: null })
const compact = { context: [] }
await hooks["experimental.session.compacting"]({ sessionID: "S" }, compact)
await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "S" } } })
const after = { message: { id: "msg_2" }, parts: [
  { id: "prt_2", type: "text", text: "next", messageID: "msg_2", sessionID: "S" },
] }
await hooks["chat.message"]({ sessionID: "S" }, after)
const child = { type: "session.created", properties: { sessionID: "C", info: { parentID: "S" } } }
await hooks.event({ event: child })
await hooks["chat.message"]({ sessionID: "C" }, { message: { id: "msg_3" }, parts: [
  { id: "prt_3", type: "text", text: "sub-task", messageID: "msg_3", sessionID: "C" },
] })
console.log(JSON.stringify({ parts: out.parts, calls, compact }))
"""


def _fake_memdir(path: Path, log: Path, answer: str) -> None:
    path.write_text(
        textwrap.dedent(f"""\
        #!/bin/sh
        input=$(cat)
        printf '%s %s\\n' "$*" "$input" >> '{log}'
        case "$*" in
          *plugin-info*) echo '{{"socket": "{path.parent}/no.sock", "fingerprint": "f", "transcripts": "{path.parent}/t"}}' ;;
          *user-prompt-submit*|*session-start*) echo '{answer}' ;;
        esac
        """)  # noqa: E501
    )
    path.chmod(0o755)


def _drive(
    tmp_path: Path, command: list[str], info: dict[str, str] | None = None
) -> dict[str, object]:
    plugin = tmp_path / "memdir.js"
    plugin.write_text(render_plugin(command, opencode.EVENTS, info))
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    proc = subprocess.run(
        [str(NODE), str(driver), str(plugin), str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return dict(json.loads(proc.stdout.splitlines()[-1]))


@pytest.mark.skipif(NODE is None, reason="node is installed with the real-host CLIs")
def test_the_plugin_adds_memdirs_context_as_one_synthetic_part(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    _fake_memdir(tmp_path / "memdir", log, '{"context": "RECALLED"}')
    result = _drive(tmp_path, [str(tmp_path / "memdir")])
    parts = result["parts"]
    assert isinstance(parts, list) and len(parts) == 2
    added = parts[1]
    assert added["synthetic"] is True and added["text"] == "RECALLED\n\nRECALLED"
    assert (added["messageID"], added["sessionID"]) == ("msg_1", "S")
    assert added["id"] > parts[0]["id"]  # after the user's text, in OpenCode's part order
    calls = log.read_text().splitlines()
    events = [c.split()[3] for c in calls]
    assert events[:1] == ["plugin-info"] and "user-prompt-submit" in events and "stop" in events
    prompt = next(c for c in calls if "user-prompt-submit" in c.split()[3])
    sent = json.loads(prompt.split(" ", 4)[4])
    assert sent["prompt"] == "How do I deploy?" and sent["hook_event_name"] == "chat.message"
    assert result["calls"] == ["messages", "messages"]  # idle and compaction read the session
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["S.json"]
    assert not (tmp_path / "t" / "../../escape.json").resolve().exists()  # an id is no path
    starts = [json.loads(c.split(" ", 4)[4]) for c in calls if c.split()[3] == "session-start"]
    # one start per session: after a compaction memdir gives the blocks back itself, with the
    # next prompt (it counts compactions in the session file, whichever process asks)
    assert [s["source"] for s in starts if s["session_id"] == "S"] == ["startup"]
    prompts = [
        json.loads(c.split(" ", 4)[4]) for c in calls if c.split()[3] == "user-prompt-submit"
    ]
    assert [p.get("agent_id") for p in prompts] == [None, None, "S"]  # a sub-agent's session


@pytest.mark.skipif(NODE is None, reason="node is installed with the real-host CLIs")
def test_the_plugin_with_memdir_missing_adds_nothing_and_never_throws(tmp_path: Path) -> None:
    result = _drive(tmp_path, [str(tmp_path / "no-such-memdir")])
    assert isinstance(result["parts"], list) and len(result["parts"]) == 1
    assert result["compact"] == {"context": []}


@pytest.mark.skipif(NODE is None, reason="node is installed with the real-host CLIs")
@pytest.mark.parametrize("socket_there", [True, False])
def test_the_installed_info_spares_opencodes_start_a_memdir_process(
    tmp_path: Path, socket_there: bool
) -> None:
    log = tmp_path / "calls.log"
    _fake_memdir(tmp_path / "memdir", log, '{"context": "RECALLED"}')
    socket = tmp_path / "run" / "recall.sock"
    if socket_there:  # a file where the socket should be: the connection fails, a process runs
        socket.parent.mkdir()
        socket.write_text("")
    info = {"socket": str(socket), "fingerprint": "f", "transcripts": str(tmp_path / "t")}
    result = _drive(tmp_path, [str(tmp_path / "memdir")], info)
    events = [c.split()[3] for c in log.read_text().splitlines()]
    # with the install's socket there, nothing asks; without it, the plugin asks once
    assert events.count("plugin-info") == (0 if socket_there else 1)
    assert "session-start" in events and "user-prompt-submit" in events
    parts = result["parts"]
    assert isinstance(parts, list) and parts[-1]["text"].startswith("RECALLED")


def test_the_install_writes_this_builds_socket_and_fingerprint_into_the_plugin(
    tmp_path: Path,
) -> None:
    from memdir.adapters import recall_client

    env = {"HOME": str(tmp_path), "MEMDIR_HOME": str(tmp_path / "mh")}
    info = opencode.plugin_info(env)
    assert info == {
        "socket": str(recall_client.socket_path(tmp_path / "mh")),
        "fingerprint": recall_client.fingerprint(),
        "transcripts": str(tmp_path / "mh" / "opencode" / "sessions"),
    }
    text = render_plugin(["memdir"], opencode.EVENTS, info)
    assert f"const INSTALLED = {json.dumps(info, sort_keys=True)}" in text
    assert "const INSTALLED = null" in render_plugin(["memdir"], opencode.EVENTS)


@pytest.mark.parametrize("raw", ["~/mem home", "{home}/mem home"])
def test_the_plugin_info_names_the_dirs_the_settings_resolve(tmp_path: Path, raw: str) -> None:
    """Install-time info, ``plugin-info`` and the hooks agree on memdir's home — ``~/`` in
    ``MEMDIR_HOME`` included (the dialect once kept its own reading and fell back to
    ``~/.memdir`` there, so the plugin wrote sessions where the hooks never looked)."""
    from memdir.adapters import recall_client
    from memdir.config import load_settings

    env = {"HOME": str(tmp_path), "MEMDIR_HOME": raw.format(home=tmp_path)}
    settings = load_settings(
        env, cwd=tmp_path, flag_settings=None, claude_mode=False, memory_dir_flag=None
    )
    home = settings.memdir_home
    assert home == tmp_path / "mem home"
    info = opencode.plugin_info(env)
    assert info["socket"] == str(recall_client.socket_path(home))
    assert info["transcripts"] == str(home / "opencode" / "sessions")
    assert opencode.DIALECT.transcript_roots(env) == [home / "opencode" / "sessions"]
    asked = subprocess.run(
        [sys.executable, "-m", "memdir", "hook", "--host", "opencode", "plugin-info"],
        env={**env, "PATH": os.environ["PATH"]},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(asked.stdout) == info


def test_compactions_are_counted_from_the_session_file(tmp_path: Path) -> None:
    session = OpenCodeSession(tmp_path, SESSION)
    session.turn("We ship on Fridays.", "Noted.")
    assert opencode.compactions(session.path) == 0
    session.compaction("SUMMARY of the above")
    session.turn("What next?", "The schema diff.")
    session.compaction("SUMMARY again")
    assert opencode.compactions(session.path) == 2
    assert opencode.compactions(tmp_path / "missing.json") == 0


def test_the_prompt_after_a_compaction_gets_the_blocks_and_the_notes_back(tmp_path: Path) -> None:
    """In any process: a later ``opencode run --continue`` knows nothing of the compaction event,
    the session file does (found in the real OpenCode: the notes never came back)."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "MEMDIR_HOOK_DAEMON": "0",
        "MEMDIR_HOST_MODEL": "off",
        "MEMDIR_HOOK_EXTRACT": "off",
    }

    def hook(event: str, **body: object) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "memdir", "hook", "--host", "opencode", event],
            input=json.dumps({"session_id": SESSION, "cwd": str(project), **body}),
            env=env, cwd=project, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        return proc.stdout

    session = OpenCodeSession(opencode.transcript_dir(env), SESSION)
    session.turn("We are moving billing to Postgres 16; the schema diff is next.", "On it.")
    first = hook("session-start", source="startup")
    assert "# Memory (memdir)" in first
    hook("user-prompt-submit", prompt="go on", transcript_path=str(session.path))
    hook("pre-compact", transcript_path=str(session.path), trigger="auto")
    session.compaction("SUMMARY of the above")
    # a new process: the plugin's start says "resume", which gives nothing twice
    assert "# Memory (memdir)" not in hook("session-start", source="resume")
    after = hook("user-prompt-submit", prompt="what is next?", transcript_path=str(session.path))
    context = json.loads(after)["context"]
    assert "# Memory (memdir)" in context and "Postgres 16" in context
    again = hook("user-prompt-submit", prompt="and then?", transcript_path=str(session.path))
    assert "# Memory (memdir)" not in again  # once per compaction
