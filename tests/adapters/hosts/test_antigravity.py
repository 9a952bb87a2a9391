"""Antigravity's dialect, from its documentation only (no agy runs here): the named hook group
in hooks.json (install, reinstall, uninstall byte-exact, never a PreToolUse hook), the hook JSON
in the documented shapes, the session start at a conversation's first model call only, and the
"not tested against the real CLI" mark in doctor and status."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters.hooks.hookio import read_body
from memdir.adapters.hosts import dialect
from memdir.adapters.hosts.antigravity import DIALECT, read_transcript
from memdir.errors import HookInputError
from memdir.store import MemoryStore
from tests.adapters.hooks.fakehost import FakeHost
from tests.adapters.hosts.hostile import assert_clean, bad_inputs
from tests.adapters.hosts.test_gemini import Cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hosts" / "antigravity"


def fixture(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / name).read_text()))


def test_the_registry_finds_the_dialect_and_it_says_it_is_untested() -> None:
    assert dialect("antigravity") is DIALECT
    assert "not tested against the real CLI" in DIALECT.untested
    assert "PreToolUse" not in DIALECT.events.values()  # its {} answer would deny the tool


def test_the_documented_hook_input_parses() -> None:
    first = DIALECT.parse("session-start", read_body(json.dumps(fixture("PreInvocation.0.json"))))
    later = DIALECT.parse("session-start", read_body(json.dumps(fixture("PreInvocation.3.json"))))
    assert first.session_id == "8f0c6a3e-5d2b-4f7e-9a61-0c2d3e4f5a6b"
    assert first.cwd == "/tmp/antigravity-fixture/project"
    assert first.turn == later.turn == first.session_id  # one context per conversation
    stop = DIALECT.parse("stop", fixture("Stop.json"))
    assert stop.transcript_path and stop.transcript_path.endswith("transcript.jsonl")


@pytest.mark.parametrize(
    "body",
    [
        {"conversationId": "../x"},
        {"conversationId": "c", "invocationNum": "0"},
        {"conversationId": "c", "invocationNum": -1},
        {"conversationId": "c", "transcriptPath": 5},
    ],
)
def test_a_wrong_or_hostile_field_is_a_hook_input_error(body: dict[str, Any]) -> None:
    with pytest.raises(HookInputError):
        DIALECT.parse("session-start", body)


def test_render_injects_an_ephemeral_step_at_the_start_only() -> None:
    assert json.loads(DIALECT.render("session-start", "ctx", None)) == {
        "injectSteps": [{"ephemeralMessage": "ctx"}]
    }
    assert DIALECT.render("stop", "ctx", None) == ""
    assert DIALECT.render("session-start", "", None) == ""


def test_the_transcript_reader_keeps_only_the_users_and_the_models_words() -> None:
    entries = read_transcript(FIXTURES / "transcript.jsonl")
    assert [(e["type"], e["message"]["content"][0]["text"]) for e in entries] == [
        ("user", "Remember that the staging database listens on port 5433."),
        ("assistant", "Noted: staging uses port 5433."),
        ("user", "And CI runs on ubuntu-24.04."),
    ]


@pytest.mark.parametrize("content", [b"", b"\xff\xfe", b"[" * 99_999, b'{"type": "USER_INPUT"}'])
def test_hostile_transcripts_read_as_nothing(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(content)
    assert read_transcript(path) == []


# -- install ------------------------------------------------------------------------------------

THEIRS = """{
  "my-linter-hook": {
    "PostToolUse": [
      {
        "matcher": "run_command",
        "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 10}]
      }
    ]
  }
}
"""


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_user_install_adds_one_named_group_and_uninstall_restores_bytes(cli: Cli) -> None:
    hooks = cli.home / ".gemini" / "config" / "hooks.json"
    hooks.parent.mkdir(parents=True)
    hooks.write_text(THEIRS)
    code, out = cli("install", "antigravity", "--user")
    assert code == 0, out
    after = json.loads(hooks.read_text())
    assert after["my-linter-hook"] == json.loads(THEIRS)["my-linter-hook"]
    group = after["memdir"]
    assert set(group) == {"PreInvocation", "Stop"}  # documented keys only: a strict parser
    for handlers in group.values():
        [handler] = handlers
        assert set(handler) == {"type", "command", "timeout"} and handler["type"] == "command"
        assert 1 <= handler["timeout"] <= 60  # seconds
    assert any("not tested against the real CLI" in n for n in out["model"])
    code, again = cli("install", "antigravity", "--user")
    assert code == 0 and not any(f["changed"] for f in again["files"])
    code, status = cli("status")
    [host] = [h for h in status["hosts"] if h["host"] == "antigravity"]
    assert host["hooks"] == 2 and "not tested" in host["untested"]
    assert cli("uninstall", "antigravity", "--user")[0] == 0
    assert hooks.read_text() == THEIRS


def test_a_group_named_memdir_that_memdir_did_not_write_is_refused(cli: Cli) -> None:
    hooks = cli.project / ".agents" / "hooks.json"
    hooks.parent.mkdir(parents=True)
    hooks.write_text('{"memdir": {"Stop": [{"type": "command", "command": "mine.sh"}]}}\n')
    code, err = cli("install", "antigravity", "--project")
    assert code != 0 and "did not write" in str(err)
    assert "mine.sh" in hooks.read_text()


def test_project_install_and_uninstall_leave_nothing(cli: Cli) -> None:
    assert cli("install", "antigravity", "--project")[0] == 0
    assert (cli.project / ".agents" / "hooks.json").is_file()
    assert cli("uninstall", "antigravity", "--project")[0] == 0
    assert not (cli.project / ".agents").exists()


# -- the lifecycle through the dialect (real hook processes) ------------------------------------


@pytest.fixture
def host(tmp_path: Path) -> Iterator[FakeHost]:
    fake = FakeHost(tmp_path, env={"MEMDIR_HOOK_DAEMON": "0"}, host="antigravity")
    MemoryStore(fake.memory_dir).create(
        "Deploy with make ship", "how we deploy: make ship", "project",
        "We deploy with `make ship`, never `kubectl apply` by hand.\n",
    )  # fmt: skip
    yield fake
    fake.stop_daemon()


def _invocation(host: FakeHost, number: int) -> dict[str, Any]:
    body = fixture("PreInvocation.0.json")
    return {
        **body,
        "invocationNum": number,
        "workspacePaths": [str(host.project)],
        "transcriptPath": None,
    }


def test_the_first_model_call_gets_the_index_and_later_calls_nothing(host: FakeHost) -> None:
    first = host.run("session-start", _invocation(host, 0))
    assert first.code == 0
    steps = json.loads(first.stdout)["injectSteps"]
    assert "# Memory (memdir)" in steps[0]["ephemeralMessage"]
    for number in (1, 2):
        later = host.run("session-start", _invocation(host, number))
        assert later.code == 0 and later.stdout == ""


@pytest.mark.parametrize("event", ["session-start", "stop"])
def test_bad_hook_input_exits_0_quietly(host: FakeHost, event: str) -> None:
    import time

    for _name, raw in bad_inputs("conversationId"):
        started = time.monotonic()
        run = host.run(event, raw)
        assert_clean(run, started)
        assert run.stdout == ""
