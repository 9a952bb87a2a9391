"""pi's dialect: the extension memdir writes (install, uninstall, refusals), the hook JSON it
sends, pi's session tree (recorded from the real CLI 0.73.1 with memdir's extension)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.adapters.hosts import dialect
from memdir.adapters.hosts.pi import DIALECT, compactions, read_session
from memdir.adapters.hosts.pi_extension import MARKER
from memdir.errors import HookInputError
from tests.adapters.hosts.test_gemini import Cli

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "hosts" / "pi" / "transcript.jsonl"


def test_the_registry_finds_the_dialect() -> None:
    assert dialect("pi") is DIALECT
    assert DIALECT.start_in_first_prompt  # session_start cannot add context


def test_the_hook_json_the_extension_sends_parses() -> None:
    body = {
        "session_id": "0b6e1f2c-1111-4222-8333-944445555666",
        "transcript_path": "/h/.pi/agent/sessions/--p--/x.jsonl",
        "cwd": "/p",
        "hook_event_name": "before_agent_start",
        "prompt": "How do I deploy?",
    }
    inp = DIALECT.parse("user-prompt-submit", body)
    assert inp.prompt == "How do I deploy?" and inp.cwd == "/p"
    with pytest.raises(HookInputError):
        DIALECT.parse("stop", body)  # names another event
    with pytest.raises(HookInputError):
        DIALECT.parse("user-prompt-submit", {**body, "session_id": "../../x"})


def test_render_answers_additional_context_for_the_two_context_events() -> None:
    assert json.loads(DIALECT.render("user-prompt-submit", "ctx", None)) == {
        "additionalContext": "ctx"
    }
    assert DIALECT.render("stop", "ctx", None) == ""
    assert DIALECT.render("user-prompt-submit", "", "note") == ""


def test_the_recorded_session_reads_without_memdirs_own_messages() -> None:
    entries = read_session(FIXTURE)
    text = json.dumps(entries)
    assert "# Memory (memdir)" not in text  # memdir's custom message is never the user's
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
    assert [r["tool_use_id"] for r in results] == [uses[0]["id"]] and "hi" in results[0]["content"]


def _line(kind: str, ident: str, parent: str | None, **rest: object) -> str:
    return json.dumps({"type": kind, "id": ident, "parentId": parent, **rest}) + "\n"


def test_an_abandoned_branch_is_not_the_conversation(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps({"type": "session", "id": "s", "cwd": "/p"})
        + "\n"
        + _line("message", "a", None, message={"role": "user", "content": "first"})
        + _line("message", "b", "a", message={"role": "user", "content": "abandoned"})
        + _line("message", "c", "a", message={"role": "user", "content": "kept"})
        + _line("compaction", "d", "c", summary="…", firstKeptEntryId="c")
    )
    texts = [e["message"]["content"][0]["text"] for e in read_session(path)]
    assert texts == ["first", "kept"]
    assert compactions(path) == 1


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe garbage\n", b'{"type": "message", "id": "a", "message": 5}\n', b"[" * 99_999],
)
def test_hostile_session_files_read_without_raising(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    assert read_session(path) == [] and compactions(path) == 0


def test_a_parent_cycle_ends(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    user = {"role": "user", "content": "x"}
    path.write_text(
        _line("message", "a", "b", message=user) + _line("message", "b", "a", message=user)
    )
    assert len(read_session(path)) == 2


def test_project_transcripts_are_sessions_whose_header_names_the_project(tmp_path: Path) -> None:
    sessions = tmp_path / "agent" / "sessions"
    for slug, cwd in (("--work-app--", "/work/app"), ("--work-app-two--", "/work/app-two")):
        (sessions / slug).mkdir(parents=True)
        header = json.dumps({"type": "session", "id": "u", "cwd": cwd})
        (sessions / slug / "t_u.jsonl").write_text(header + "\n")
    env = {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    found = DIALECT.project_transcripts(env, Path("/work/app"))
    assert found == [sessions / "--work-app--" / "t_u.jsonl"]


# -- install ------------------------------------------------------------------------------------


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def test_project_install_writes_the_extension_and_uninstall_leaves_nothing(cli: Cli) -> None:
    code, out = cli("install", "pi", "--project")
    assert code == 0, out
    extension = cli.project / ".pi" / "extensions" / "memdir.ts"
    text = extension.read_text()
    assert text.startswith(MARKER)
    assert '"hook", "--host", "pi"' in text and "before_agent_start" in text
    assert any("no MCP" in n for n in out["model"])
    code, status = cli("status")
    assert [(h["host"], h["hooks"]) for h in status["hosts"]] == [("pi", 5)]
    assert cli("uninstall", "pi", "--project")[0] == 0
    assert not (cli.project / ".pi").exists()  # the dirs the install made go with it


def test_user_install_follows_the_agent_dir(cli: Cli, tmp_path: Path) -> None:
    cli.env["PI_CODING_AGENT_DIR"] = str(tmp_path / "agent")
    assert cli("install", "pi", "--user")[0] == 0
    assert (tmp_path / "agent" / "extensions" / "memdir.ts").is_file()


def test_a_second_scope_and_an_edited_extension_are_refused(cli: Cli) -> None:
    assert cli("install", "pi", "--project")[0] == 0
    code, err = cli("install", "pi", "--user")
    assert code != 0 and "already installed" in str(err)
    extension = cli.project / ".pi" / "extensions" / "memdir.ts"
    extension.write_text(extension.read_text() + "// mine\n")
    code, err = cli("uninstall", "pi", "--project")
    assert code != 0 and "changed since memdir wrote it" in str(err)
    assert extension.read_text().endswith("// mine\n")  # left alone
