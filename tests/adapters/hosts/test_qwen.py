"""Qwen Code's dialect: its hook JSON in and out (recorded from the real CLI 0.24), its chat
files, its settings.json install."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters.hooks.hookio import HookInput, read_body
from memdir.adapters.hosts import dialect
from memdir.adapters.hosts.qwen import DIALECT, read_chat
from memdir.errors import HookInputError
from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost
from tests.adapters.hosts.test_gemini import Cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hosts" / "qwen"
WORDS = {name: word for word, name in DIALECT.events.items()}


def recorded() -> list[tuple[str, dict[str, Any]]]:
    return [
        (p.name, json.loads(p.read_text()))
        for p in sorted((FIXTURES / "hook-input").glob("*.json"))
    ]


def parsed(name: str, body: dict[str, Any]) -> HookInput:
    return DIALECT.parse(WORDS[name.split(".")[0]], read_body(json.dumps(body)))


def test_the_registry_finds_the_dialect() -> None:
    assert dialect("qwen") is DIALECT
    assert DIALECT.start_kept is False  # SessionStart context lives in one process's prompt


@pytest.mark.parametrize(("name", "body"), recorded(), ids=[n for n, _ in recorded()])
def test_every_recorded_hook_input_parses(name: str, body: dict[str, Any]) -> None:
    inp = parsed(name, body)
    assert inp.session_id == body["session_id"]
    assert inp.transcript_path and inp.transcript_path.endswith(".jsonl")
    if inp.event == "user-prompt-submit":
        assert inp.turn == body["prompt_id"] and inp.prompt == body["prompt"]
    else:
        assert inp.turn is None


def test_a_tool_result_continuation_repeats_the_prompts_id_with_no_text() -> None:
    prompts = [b for n, b in recorded() if n.startswith("UserPromptSubmit.")]
    first, again = (
        parsed("UserPromptSubmit.0", prompts[0]),
        parsed("UserPromptSubmit.1", prompts[1]),
    )
    assert first.prompt and again.prompt == ""
    assert first.turn == again.turn  # the real CLI's second call for the same prompt


@pytest.mark.parametrize(
    "body",
    [
        {"session_id": "s", "prompt_id": 7, "hook_event_name": "UserPromptSubmit"},
        {"session_id": "../x", "hook_event_name": "UserPromptSubmit"},
        {"session_id": "s", "hook_event_name": "Stop"},  # sent to the prompt command
    ],
)
def test_a_wrong_or_hostile_field_is_a_hook_input_error(body: dict[str, Any]) -> None:
    with pytest.raises(HookInputError):
        DIALECT.parse("user-prompt-submit", body)


def test_render_answers_in_hook_specific_output() -> None:
    out = json.loads(DIALECT.render("user-prompt-submit", "ctx", None))
    assert out == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}
    }
    assert DIALECT.render("user-prompt-submit", "", "note") == ""


def test_the_recorded_chat_reads_as_memdirs_entries_without_hook_context() -> None:
    entries = read_chat(FIXTURES / "transcript.jsonl")
    text = json.dumps(entries)
    assert "MARKER" not in text and "qwen:user-prompt-submit-context" not in text
    users = [b["text"] for e in entries for b in e["message"]["content"] if b["type"] == "text"]
    assert users[0] == "Run echo hi, then remember that CI runs on ubuntu-24.04."
    uses = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_use"]
    results = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_result"]
    assert [u["name"] for u in uses] == ["run_shell_command"]
    assert [r["tool_use_id"] for r in results] == [uses[0]["id"]]
    assert "hi" in results[0]["content"]
    assert len({e["uuid"] for e in entries}) == len(entries)


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe garbage\n", b'{"type": "user", "message": 5}\n', b"[" * 100_000 + b"\n"],
)
def test_hostile_chat_files_read_without_raising(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(content)
    assert read_chat(path) == []


def test_project_transcripts_are_the_chats_of_the_project_only(tmp_path: Path) -> None:
    projects = tmp_path / ".qwen" / "projects"
    lines = (FIXTURES / "transcript.jsonl").read_text()
    for slug, cwd in (("-work-app", "/work/app"), ("-work-app-two", "/work/app-two")):
        chats = projects / slug / "chats"
        chats.mkdir(parents=True)
        (chats / "s.jsonl").write_text(lines.replace("/tmp/qwen-fixture/project", cwd))
    found = DIALECT.project_transcripts({"QWEN_HOME": str(tmp_path / ".qwen")}, Path("/work/app"))
    assert found == [projects / "-work-app" / "chats" / "s.jsonl"]


# -- install ------------------------------------------------------------------------------------

REAL_QWEN_SETTINGS = """{
  "modelProviders": {"openai": [{"id": "qwen3-coder", "baseUrl": "https://example.invalid/v1"}]},
  "security": {"auth": {"selectedType": "openai"}},
  "hooks": {
    "PreToolUse": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "guard.sh"}]}
    ]
  },
  "mcpServers": {"github": {"command": "github-mcp-server", "args": ["stdio"]}}
}
"""


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_user_install_writes_hooks_and_server_and_uninstall_restores_bytes(cli: Cli) -> None:
    settings = cli.home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(REAL_QWEN_SETTINGS)
    code, out = cli("install", "qwen", "--user")
    assert code == 0, out
    after = json.loads(settings.read_text())
    ours = {e: g for e, g in after["hooks"].items() if "memdir" in json.dumps(g)}
    assert sorted(ours) == sorted(DIALECT.events.values())
    for event, [group] in ours.items():
        [hook] = group["hooks"]
        assert hook["command"].endswith(f"hook --host qwen {WORDS[event]}")
        assert 10_000 <= hook["timeout"] <= 60_000  # milliseconds
    assert after["hooks"]["PreToolUse"] == json.loads(REAL_QWEN_SETTINGS)["hooks"]["PreToolUse"]
    assert after["mcpServers"]["memdir"]["args"][-1] == "mcp"
    assert any("enableManagedAutoMemory" in n for n in out["model"])
    code, again = cli("install", "qwen", "--user")
    assert code == 0 and [f["changed"] for f in again["files"]] == [False]
    assert cli("uninstall", "qwen", "--user")[0] == 0
    assert settings.read_text() == REAL_QWEN_SETTINGS  # byte for byte


def test_user_install_follows_qwen_home(cli: Cli, tmp_path: Path) -> None:
    cli.env["QWEN_HOME"] = str(tmp_path / "elsewhere")
    assert cli("install", "qwen", "--user")[0] == 0
    assert (tmp_path / "elsewhere" / "settings.json").is_file()
    assert not (cli.home / ".qwen").exists()


# -- the lifecycle through the dialect (real hook processes) ------------------------------------


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"}, host="qwen")
    MemoryStore(fake.memory_dir).create(
        "Deploy with make ship", "how we deploy: make ship", "project",
        "We deploy with `make ship`, never `kubectl apply` by hand.\n",
    )  # fmt: skip
    yield fake
    fake.stop_daemon()


def _hook(event: str, session: str, host: FakeHost, **extra: Any) -> dict[str, Any]:
    name = DIALECT.events[event]
    return {"session_id": session, "hook_event_name": name, "cwd": str(host.project), **extra}


def test_a_prompt_hook_fired_again_for_a_tool_result_is_answered_once(host: FakeHost) -> None:
    prompt = "How do I deploy this service to production?"
    first = host.run(
        "user-prompt-submit",
        _hook("user-prompt-submit", "s1", host, prompt=prompt, prompt_id="s1####0"),
    )
    assert "make ship" in first.stdout
    host.run("stop", _hook("stop", "s1", host))  # nothing queued for the continuation to take
    again = host.run(
        "user-prompt-submit",
        _hook("user-prompt-submit", "s1", host, prompt="", prompt_id="s1####0"),
    )
    assert again.code == 0 and again.stdout == ""
    rows = [
        json.loads(x) for x in (host.cache_dir / "hooks" / "log.jsonl").read_text().splitlines()
    ]
    assert rows[-1]["skipped"] == "answered already for this turn"
    later = host.run(
        "user-prompt-submit",
        _hook(
            "user-prompt-submit", "s1", host, prompt="And the staging deploy?", prompt_id="s1####2"
        ),
    )
    assert later.code == 0 and "make ship" not in later.stdout  # never twice in a session


def test_every_session_start_gives_the_index_again_a_resume_included(host: FakeHost) -> None:
    start = host.run("session-start", _hook("session-start", "s2", host, source="startup"))
    assert "# Memory (memdir)" in start.stdout
    time.sleep(0.05)
    resumed = host.run("session-start", _hook("session-start", "s2", host, source="resume"))
    assert "# Memory (memdir)" in resumed.stdout  # a resumed process starts without it
