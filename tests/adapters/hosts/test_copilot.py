"""GitHub Copilot CLI's dialect: its hook JSON in and out (recorded from the real CLI 1.0.102),
its event-log transcripts, its settings.json and .github/hooks installs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters.hooks.hookio import HookInput, read_body
from memdir.adapters.hosts import dialect
from memdir.adapters.hosts.copilot import DIALECT, compactions, read_events
from memdir.errors import HookInputError
from tests.adapters.hosts.test_gemini import Cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hosts" / "copilot"
WORDS = {name: word for word, name in DIALECT.events.items()}


def recorded() -> list[tuple[str, dict[str, Any]]]:
    return [
        (p.name, json.loads(p.read_text()))
        for p in sorted((FIXTURES / "hook-input").glob("*.json"))
    ]


def parsed(name: str, body: dict[str, Any]) -> HookInput:
    return DIALECT.parse(WORDS[name.split(".")[0]], read_body(json.dumps(body)))


def test_the_registry_finds_the_dialect() -> None:
    assert dialect("copilot") is DIALECT


@pytest.mark.parametrize(("name", "body"), recorded(), ids=[n for n, _ in recorded()])
def test_every_recorded_hook_input_parses(name: str, body: dict[str, Any]) -> None:
    inp = parsed(name, body)
    assert inp.session_id == body["sessionId"] and inp.cwd == body["cwd"]
    assert inp.timestamp == str(body["timestamp"])
    assert inp.transcript_path == body.get("transcriptPath")
    if inp.event == "session-start":
        assert inp.source in ("startup", "resume")  # Copilot's "new" is memdir's "startup"
    if inp.event == "user-prompt-submit":
        assert inp.prompt == body["prompt"]
    if inp.event == "pre-compact":
        assert inp.trigger == "manual"


@pytest.mark.parametrize(
    "body",
    [
        {"sessionId": 5},
        {"sessionId": "../../etc"},
        {"sessionId": "s", "prompt": ["not", "text"]},
        {"session_id": "s"},  # Claude's key: not Copilot's camelCase event input
    ],
)
def test_a_wrong_or_hostile_field_is_a_hook_input_error(body: dict[str, Any]) -> None:
    with pytest.raises(HookInputError):
        DIALECT.parse("user-prompt-submit", body)


def test_render_answers_at_the_top_level_for_the_two_context_events() -> None:
    assert json.loads(DIALECT.render("user-prompt-submit", "ctx", "note")) == {
        "additionalContext": "ctx"
    }
    assert json.loads(DIALECT.render("session-start", "ctx", None)) == {"additionalContext": "ctx"}
    assert DIALECT.render("stop", "ctx", None) == ""
    assert DIALECT.render("user-prompt-submit", "", None) == ""


def test_the_recorded_events_read_as_memdirs_entries_without_hook_context() -> None:
    entries = read_events(FIXTURES / "transcript.jsonl")
    text = json.dumps(entries)
    assert "MARKER" not in text and "system_reminder" not in text
    users = [
        b["text"]
        for e in entries
        if e["type"] == "user"
        for b in e["message"]["content"]
        if b["type"] == "text"
    ]
    assert users[:2] == [
        "Run echo hi, then remember that CI runs on ubuntu-24.04.",
        "And the staging database listens on port 5433.",
    ]
    uses = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_use"]
    results = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_result"]
    assert [u["name"] for u in uses] == ["bash"]
    assert [r["tool_use_id"] for r in results] == [uses[0]["id"]]
    assert "hi" in results[0]["content"]


def test_the_recorded_compaction_is_counted() -> None:
    assert compactions(FIXTURES / "transcript.jsonl") == 1


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\xff\xfe garbage\n",
        b'{"type": "user.message", "data": 5}\n',
        b'{"type": "assistant.message", "id": "a", "data": {"toolRequests": 7}}\n',
        b"[" * 100_000,
    ],
)
def test_hostile_event_logs_read_without_raising(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(content)
    assert read_events(path) == [] and compactions(path) == 0


def test_a_prompt_hook_finds_the_sessions_transcript_by_its_id(tmp_path: Path) -> None:
    env = {"COPILOT_HOME": str(tmp_path)}
    assert DIALECT.session_transcript("abc", env) is None
    events = tmp_path / "session-state" / "abc" / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_text("")
    assert DIALECT.session_transcript("abc", env) == events


def test_project_transcripts_are_the_sessions_started_in_the_project(tmp_path: Path) -> None:
    state = tmp_path / "session-state"
    lines = (FIXTURES / "transcript.jsonl").read_text()
    for sid, cwd in (("a", "/work/app"), ("b", "/work/app-two"), ("c", "/work/app/sub")):
        (state / sid).mkdir(parents=True)
        (state / sid / "events.jsonl").write_text(
            lines.replace("/tmp/copilot-fixture/project", cwd)
        )
    found = DIALECT.project_transcripts({"COPILOT_HOME": str(tmp_path)}, Path("/work/app"))
    assert found == [state / "a" / "events.jsonl", state / "c" / "events.jsonl"]


# -- install ------------------------------------------------------------------------------------

REAL_SETTINGS = """{
  "theme": "dark",
  "hooks": {
    "preToolUse": [{"type": "command", "bash": "./guard.sh", "timeoutSec": 5}]
  }
}
"""


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_user_install_writes_flat_bash_hooks_and_uninstall_restores_bytes(cli: Cli) -> None:
    settings = cli.home / ".copilot" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(REAL_SETTINGS)
    code, out = cli("install", "copilot", "--user")
    assert code == 0, out
    after = json.loads(settings.read_text())
    assert after["hooks"]["preToolUse"] == [
        {"type": "command", "bash": "./guard.sh", "timeoutSec": 5}
    ]
    for event, word in WORDS.items():
        [hook] = after["hooks"][event]
        assert set(hook) == {"type", "bash", "timeoutSec"}
        assert hook["bash"].endswith(f"hook --host copilot {word}")
    server = json.loads((cli.home / ".copilot" / "mcp-config.json").read_text())
    assert server["mcpServers"]["memdir"]["type"] == "local"
    assert server["mcpServers"]["memdir"]["tools"] == ["*"]
    code, again = cli("install", "copilot", "--user")
    assert code == 0 and not any(f["changed"] for f in again["files"])
    assert cli("uninstall", "copilot", "--user")[0] == 0
    assert settings.read_text() == REAL_SETTINGS  # byte for byte
    assert not (cli.home / ".copilot" / "mcp-config.json").exists()  # the install made it


def test_project_install_owns_its_hooks_file_and_says_how_to_trust(cli: Cli) -> None:
    code, out = cli("install", "copilot", "--project")
    assert code == 0, out
    hooks = json.loads((cli.project / ".github" / "hooks" / "memdir.json").read_text())
    assert hooks["version"] == 1 and set(hooks["hooks"]) == set(WORDS)
    assert any("trusted folder" in n for n in out["model"])
    assert cli("uninstall", "copilot", "--project")[0] == 0
    assert not (cli.project / ".github" / "hooks" / "memdir.json").exists()
    assert not (cli.project / ".github" / "mcp.json").exists()


def test_uninstall_without_the_record_still_finds_memdirs_bash_hooks(cli: Cli) -> None:
    settings = cli.home / ".copilot" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(REAL_SETTINGS)
    assert cli("install", "copilot", "--user")[0] == 0
    (cli.home / ".memdir" / "installs.json").unlink()  # lost: uninstall reads the commands
    assert cli("uninstall", "copilot", "--user")[0] == 0
    assert json.loads(settings.read_text())["hooks"] == json.loads(REAL_SETTINGS)["hooks"]


def test_doctor_says_when_the_project_is_not_a_trusted_folder(cli: Cli) -> None:
    assert cli("install", "copilot", "--project")[0] == 0
    code, doctor = cli("doctor")
    assert code == 1
    [problem] = [p for p in doctor["problems"] if p["kind"] == "copilot-folder-untrusted"]
    assert "trust" in problem["detail"]
    config = cli.home / ".copilot" / "config.json"  # the CLI's own file, comments above JSON
    config.parent.mkdir(exist_ok=True)
    config.write_text(
        "// User settings belong in settings.json.\n"
        f'{{\n  "trustedFolders": ["{cli.project.parent}"]\n}}\n'
    )
    code, doctor = cli("doctor")
    assert not [p for p in doctor["problems"] if p["kind"] == "copilot-folder-untrusted"]
