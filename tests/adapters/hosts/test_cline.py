"""Cline's dialect: the SDK plugin memdir writes (install, uninstall, refusals), the hook JSON
it sends, the conversation files it writes (recorded from the real CLI 3.0.65)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.adapters.hosts import dialect
from memdir.adapters.hosts.cline import DIALECT, read_messages
from memdir.adapters.hosts.cline_plugin import MARKER
from memdir.errors import HookInputError
from tests.adapters.hosts.test_gemini import Cli

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "hosts" / "cline" / "messages.json"


def test_the_registry_finds_the_dialect() -> None:
    assert dialect("cline") is DIALECT
    assert set(DIALECT.events) == {"session-start", "user-prompt-submit", "stop"}


def test_the_hook_json_the_plugin_sends_parses() -> None:
    body = {
        "session_id": "conv_1796678880358_z8pfez6",
        "transcript_path": "/h/.memdir/cline/sessions/conv_1796678880358_z8pfez6.json",
        "cwd": "/p",
        "hook_event_name": "beforeRun",
        "prompt": '<user_input mode="act">How do I deploy?</user_input>',
    }
    inp = DIALECT.parse("user-prompt-submit", body)
    assert inp.session_id == body["session_id"]
    with pytest.raises(HookInputError):
        DIALECT.parse("stop", body)
    with pytest.raises(HookInputError):
        DIALECT.parse("user-prompt-submit", {**body, "session_id": "a/../../b"})


def test_the_recorded_conversation_reads_without_memdirs_context() -> None:
    entries = read_messages(FIXTURE)
    text = json.dumps(entries)
    assert "# Memory (memdir)" not in text and "hook_context" not in text
    assert "user_input" not in text  # Cline's wrapper around the user's words is gone
    first = entries[0]["message"]["content"][0]
    assert first == {
        "type": "text",
        "text": "Run echo hi, then remember that CI runs on ubuntu-24.04.",
    }
    uses = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_use"]
    results = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_result"]
    assert [u["name"] for u in uses] == ["run_commands"]
    assert [r["tool_use_id"] for r in results] == [uses[0]["id"]] and "hi" in results[0]["content"]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\xff\xfe",
        b'{"messages": 5}',
        b'{"messages": [{"role": "user", "content": 7}]}',
        b"[" * 99_999,
    ],
)
def test_hostile_message_files_read_without_raising(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(content)
    assert read_messages(path) == []


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_project_install_writes_the_plugin_and_uninstall_leaves_nothing(cli: Cli) -> None:
    code, out = cli("install", "cline", "--project")
    assert code == 0, out
    plugin = cli.project / ".cline" / "plugins" / "memdir.js"
    text = plugin.read_text()
    assert text.startswith(MARKER)
    assert '"hook", "--host", "cline"' in text and "appendContext" in text
    assert str(cli.home / ".memdir" / "cline" / "sessions") in text
    assert any("file hooks" in n for n in out["model"])
    assert cli("uninstall", "cline", "--project")[0] == 0
    assert not (cli.project / ".cline").exists()


def test_user_install_follows_cline_dir_and_refuses_a_second_scope(
    cli: Cli, tmp_path: Path
) -> None:
    cli.env["CLINE_DIR"] = str(tmp_path / "cline")
    assert cli("install", "cline", "--user")[0] == 0
    assert (tmp_path / "cline" / "plugins" / "memdir.js").is_file()
    code, err = cli("install", "cline", "--project")
    assert code != 0 and "already installed" in str(err)


def test_project_transcripts_are_the_sessions_run_in_the_project(tmp_path: Path) -> None:
    import os

    from tests.fifo import returns_promptly

    sessions = tmp_path / ".cline" / "data" / "sessions"

    def session(sid: str, meta: object) -> Path:
        (sessions / sid).mkdir(parents=True)
        (sessions / sid / f"{sid}.json").write_text(json.dumps(meta))
        messages = sessions / sid / f"{sid}.messages.json"
        messages.write_text('{"messages": []}')
        return messages

    mine = session("1_a", {"cwd": "/work/app/pkg"})
    by_root = session("2_b", {"cwd": "/tmp/x", "workspace_root": "/work/app"})
    session("3_c", {"cwd": "/work/app-other"})  # a sibling, not a subdirectory
    session("4_d", ["not", "an", "object"])
    session("5_e", {"cwd": 5})
    (sessions / "6_f").mkdir()
    os.mkfifo(sessions / "6_f" / "6_f.json")  # never blocks the listing
    (sessions / "6_f" / "6_f.messages.json").write_text("{}")
    (sessions / "7_g").mkdir()
    (sessions / "7_g" / "7_g.json").write_text("{" * 100_000)  # deep, broken: skipped
    env = {"CLINE_DIR": str(tmp_path / ".cline")}
    found = returns_promptly(
        lambda: DIALECT.project_transcripts(env, Path("/work/app")), [sessions / "6_f"]
    )
    assert found == [mine, by_root]
