"""Gemini CLI's dialect: its hook JSON in and out, its session files, its settings.json install.

The hook inputs and the session file are the ones the real CLI 0.61 wrote
(``tests/fixtures/hosts/gemini``); the synthetic session files hold one shape each.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters.hooks.dialect import Locations
from memdir.adapters.hooks.hookio import HookInput, read_body
from memdir.adapters.hosts import dialect
from memdir.adapters.hosts.gemini import DIALECT, compactions, read_session, strip_hook_context
from memdir.cli.main import main
from memdir.errors import HookInputError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hosts" / "gemini"
SESSIONS = FIXTURES / "session"
SYNTHETIC = SESSIONS / "synthetic"
WORDS = {
    "SessionStart": "session-start",
    "BeforeAgent": "user-prompt-submit",
    "AfterAgent": "stop",
    "PreCompress": "pre-compact",
    "SessionEnd": "session-end",
}


def recorded_input(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / "hook-input" / f"{name}.json").read_text())["stdin"])


def parse(event: str, raw: bytes | str) -> HookInput:
    return DIALECT.parse(event, read_body(raw))


# -- hook input -----------------------------------------------------------------------------------


def test_the_registry_finds_the_dialect() -> None:
    assert dialect("gemini") is DIALECT
    assert DIALECT.events["user-prompt-submit"] == "BeforeAgent"


@pytest.mark.parametrize(
    "name",
    [
        "SessionStart.startup",
        "SessionStart.resume",
        "BeforeAgent",
        "AfterAgent",
        "PreCompress.auto",
        "PreCompress.manual",
        "SessionEnd.exit",
    ],
)
def test_every_recorded_hook_input_parses(name: str) -> None:
    body = recorded_input(name)
    inp = parse(WORDS[name.split(".")[0]], json.dumps(body))
    assert inp.session_id == body["session_id"]
    assert inp.transcript_path == body["transcript_path"] and inp.cwd == body["cwd"]
    assert (inp.source, inp.trigger, inp.reason) == (
        body.get("source"),
        body.get("trigger"),
        body.get("reason"),
    )


def test_the_prompt_loses_the_session_start_context_memdir_put_in_it() -> None:
    """BeforeAgent's prompt carries SessionStart's <hook_context> prefix: recall on it would
    search memdir's own MEMORY.md index instead of what the user asked."""
    inp = parse("user-prompt-submit", json.dumps(recorded_input("BeforeAgent")))
    assert inp.prompt is not None
    assert inp.prompt.startswith("Remember that CI jobs run on the ubuntu-24.04 image.")
    assert "hook_context" not in inp.prompt and "Memory index" not in inp.prompt


def test_strip_hook_context_keeps_the_users_text() -> None:
    text = (
        "<hook_context>a &lt;b&gt;\nc</hook_context>\n\nask <this> <hook_context>x</hook_context>"
    )
    assert strip_hook_context(text) == "ask <this> "
    assert strip_hook_context("plain <b>") == "plain <b>"


@pytest.mark.parametrize(
    ("event", "body"),
    [
        ("user-prompt-submit", {"session_id": "s", "prompt": 3}),
        ("user-prompt-submit", {"session_id": "s", "prompt": ["x"]}),
        ("session-start", {"session_id": "s", "source": {"x": 1}}),
        ("stop", {"session_id": "s", "transcript_path": 7}),
        ("pre-compact", {"session_id": "s", "trigger": True}),
        ("session-end", {"session_id": "s", "reason": None, "cwd": []}),
        ("stop", {"session_id": 12}),
        ("stop", {"session_id": "../../etc/passwd"}),
        ("stop", {"session_id": "a\x00b"}),
        ("stop", {"session_id": "a..b"}),
        ("stop", {"session_id": "s", "hook_event_name": "BeforeAgent"}),
        ("user-prompt-submit", {"session_id": "s", "hook_event_name": "UserPromptSubmit"}),
    ],
)
def test_a_wrong_or_hostile_field_is_a_hook_input_error(event: str, body: dict[str, Any]) -> None:
    with pytest.raises(HookInputError):
        parse(event, json.dumps(body))


def test_render_answers_in_hook_specific_output_for_the_two_context_events() -> None:
    for event, name in (("session-start", "SessionStart"), ("user-prompt-submit", "BeforeAgent")):
        out = json.loads(DIALECT.render(event, "ctx <b>", "a notice"))
        assert out == {
            "hookSpecificOutput": {"hookEventName": name, "additionalContext": "ctx <b>"}
        }
    for event in ("stop", "pre-compact", "session-end"):
        assert DIALECT.render(event, "ctx", None) == ""
    assert DIALECT.render("user-prompt-submit", "", "notice only") == ""


def test_transcript_roots_follow_gemini_cli_home() -> None:
    assert DIALECT.transcript_roots({"HOME": "/h"}) == [Path("/h/.gemini/tmp")]
    assert DIALECT.transcript_roots({"HOME": "/h", "GEMINI_CLI_HOME": "/g"}) == [
        Path("/g/.gemini/tmp")
    ]
    assert DIALECT.unattended({"GEMINI_CLI_NO_RELAUNCH": "true"}) is False


# -- session files --------------------------------------------------------------------------------


def texts(entries: list[dict[str, Any]]) -> list[tuple[str, str]]:
    out = []
    for e in entries:
        for b in e["message"]["content"]:
            what = b.get("text") or b.get("name") or f"result:{str(b.get('content'))[:20]}"
            out.append((e["type"], what))
    return out


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "basic.jsonl",
            [
                ("user", "We deploy the shop with `make ship`, never by hand."),
                ("assistant", "Noted: deploys go through `make ship`."),
            ],
        ),
        (
            "hook_context.jsonl",
            [("user", "How do I deploy?"), ("assistant", "Run `make ship`.")],
        ),
        (
            "tool_call.jsonl",
            [
                ("user", "Remember: deploys go through `make ship`."),
                ("assistant", "mcp_memdir_memory_save"),
                ("user", "result:<untrusted_context>\n"),
                ("assistant", "Saved."),
            ],
        ),
        (
            "resumed_compressed.jsonl",
            [
                ("user", "The staging DB is pg-staging-3."),
                ("assistant", "Got it: pg-staging-3."),
                ("user", "Which DB is staging?"),
                ("assistant", "pg-staging-3."),
            ],
        ),
        ("rewind.jsonl", [("user", "Use four spaces."), ("assistant", "OK, four spaces.")]),
        ("stray_resume.jsonl", []),
        (
            "other_types.jsonl",
            [("user", "Look at this screenshot."), ("assistant", "It shows a login form.")],
        ),
        (
            "subagent.jsonl",
            [
                ("user", "Find where the deploy target is defined."),
                ("assistant", "In the Makefile, target `ship`."),
            ],
        ),
        ("legacy.json", [("user", "Our CI runs on ubuntu-24.04."), ("assistant", "Noted.")]),
    ],
)
def test_each_session_shape_reads_as_memdirs_entries(
    name: str, expected: list[tuple[str, str]]
) -> None:
    assert texts(read_session(SYNTHETIC / name)) == expected


def test_the_recorded_session_reads_without_memdirs_injections_or_the_session_context() -> None:
    entries = read_session(SESSIONS / "recorded.jsonl")
    dumped = json.dumps(entries)
    assert "hook_context" not in dumped and "session_context" not in dumped
    assert "Got it. Thanks for the additional context!" not in dumped  # compression's $set
    users = [t for kind, t in texts(entries) if kind == "user" and not t.startswith("result:")]
    assert users[0].startswith("Remember that CI jobs run on the ubuntu-24.04 image.")
    assert users[1:] == ["Which image does CI use?", "/compress"]
    uuids = [e["uuid"] for e in entries]
    assert len(uuids) == len(set(uuids))
    for e in entries:
        assert set(e) == {"type", "uuid", "timestamp", "message"}
        assert e["message"]["role"] == e["type"] and e["timestamp"]


def test_uuids_stay_stable_as_the_file_grows(tmp_path: Path) -> None:
    """Extraction's cursor is an entry uuid: a message re-appended (tokens, then tool calls)
    keeps its uuid and its place."""
    lines = (SYNTHETIC / "tool_call.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    seen: dict[str, int] = {}
    for n in range(1, len(lines) + 1):
        path.write_text("".join(lines[:n]))
        uuids = [e["uuid"] for e in read_session(path)]
        for uuid in seen:
            assert uuid in uuids and uuids.index(uuid) == seen[uuid], (n, uuid)
        seen = {u: i for i, u in enumerate(uuids)}


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("recorded.jsonl", 3),  # --resume with a tiny threshold, then /compress (two)
        ("synthetic/resumed_compressed.jsonl", 1),
        ("synthetic/basic.jsonl", 0),
        ("synthetic/tool_call.jsonl", 0),
        ("synthetic/stray_resume.jsonl", 0),
        ("synthetic/legacy.json", 0),
    ],
)
def test_compactions_are_counted_from_the_session_file(name: str, count: int) -> None:
    assert compactions(SESSIONS / name) == count


def test_a_resume_alone_is_not_a_compaction(tmp_path: Path) -> None:
    """The first session of the recording, then its --resume's copies of the history."""
    lines = (SESSIONS / "recorded.jsonl").read_text().splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines[:16]))  # through the resume's `$set messages:[history]`
    assert compactions(path) == 0
    path.write_text("".join(lines[:17]))  # the compression's `$set`
    assert compactions(path) == 1


@pytest.mark.parametrize(
    "content",
    [
        b'\xff\xfe not utf-8\n{"id": 1}\n',
        b'{"id":"u","type":"user","content":' + b"[" * 200_000 + b"]" * 200_000 + b"}\n",
        b'{"id":"u","type":"user","content":{"text":3}}\n{"id":"g","type":"gemini","content":7,'
        b'"toolCalls":[3,{"id":5,"args":[],"result":"x"}]}\n{"$set":{"messages":"no"}}\n'
        b'{"$rewindTo":"nowhere"}\n[1,2]\n"str"\n',
        b"",
    ],
)
def test_hostile_session_files_read_without_raising(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    entries = read_session(path)
    assert all(e["type"] in ("user", "assistant") for e in entries)
    assert isinstance(compactions(path), int)
    legacy = tmp_path / "s.json"
    legacy.write_bytes(content)
    assert all(e["type"] in ("user", "assistant") for e in read_session(legacy))


def test_a_missing_session_file_reads_as_nothing(tmp_path: Path) -> None:
    assert read_session(tmp_path / "absent.jsonl") == []
    assert compactions(tmp_path / "absent.jsonl") == 0


# -- install ------------------------------------------------------------------------------------

REAL_GEMINI_SETTINGS = """{
    "security": {
        "auth": {"selectedType": "oauth-personal"}
    },
    "general": {"vimMode": true, "preferredEditor": "nvim"},
    "hooks": {
        "BeforeTool": [
            {
                "matcher": "run_shell_command",
                "hooks": [{"type": "command", "command": "~/.gemini/guard.sh", "timeout": 5000}]
            }
        ],
        "SessionStart": [
            {"hooks": [{"type": "command", "name": "greet", "command": "echo hi"}]}
        ]
    },
    "mcpServers": {
        "github": {"command": "github-mcp-server", "args": ["stdio"], "trust": false}
    },
    "someFutureKey": [1, {"x": null}]
}"""


class Cli:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.home.mkdir()
        (self.project / ".git").mkdir(parents=True)
        self.env = {"HOME": str(self.home), "PATH": "/usr/bin:/bin"}

    def __call__(self, *argv: str) -> tuple[int, Any]:
        out, err = io.StringIO(), io.StringIO()
        code = main(["--json", *argv], env=self.env, cwd=self.project, stdout=out, stderr=err)
        return code, json.loads(out.getvalue()) if out.getvalue().strip() else err.getvalue()


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def memdir_hooks(settings: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {
        event: [g for g in groups if "memdir" in json.dumps(g)]
        for event, groups in settings["hooks"].items()
        if any("memdir" in json.dumps(g) for g in groups)
    }


def test_user_install_writes_hooks_and_server_into_one_file_and_uninstall_restores_bytes(
    cli: Cli,
) -> None:
    settings = cli.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(REAL_GEMINI_SETTINGS)
    code, out = cli("install", "gemini", "--user")
    assert code == 0, out
    assert [f["path"] for f in out["files"]] == [str(settings)]  # one file, one change
    after = json.loads(settings.read_text())
    ours = memdir_hooks(after)
    assert sorted(ours) == [
        "AfterAgent",
        "BeforeAgent",
        "PreCompress",
        "SessionEnd",
        "SessionStart",
    ]
    for event, [group] in ours.items():
        [hook] = group["hooks"]
        word = hook["command"].split(" hook --host gemini ", 1)[1].split()[0]
        # `|| true`: a memdir the shell cannot find (exit 127) must not block Gemini's turn
        assert hook["command"].endswith(f"hook --host gemini {word} || true")
        assert hook["name"] == f"memdir-{word}" and hook["type"] == "command"
        assert 10_000 <= hook["timeout"] <= 60_000  # milliseconds
        assert group.get("matcher") == ("manual" if event == "PreCompress" else None)
    assert after["hooks"]["SessionStart"][0] == {
        "hooks": [{"type": "command", "name": "greet", "command": "echo hi"}]
    }
    assert after["mcpServers"]["github"] == {
        "command": "github-mcp-server",
        "args": ["stdio"],
        "trust": False,
    }
    server = after["mcpServers"]["memdir"]
    assert server["args"][-1] == "mcp" and server["trust"] is True
    assert {k: after[k] for k in ("security", "general", "someFutureKey")} == {
        k: json.loads(REAL_GEMINI_SETTINGS)[k] for k in ("security", "general", "someFutureKey")
    }
    assert settings.read_text().startswith('{\n    "security"')  # its 4-space layout kept
    assert any("trusted folder" in n for n in out["model"])

    code, again = cli("install", "gemini", "--user")
    assert code == 0 and [f["changed"] for f in again["files"]] == [False]

    code, _ = cli("uninstall", "gemini", "--user")
    assert code == 0
    assert settings.read_text() == REAL_GEMINI_SETTINGS  # byte for byte


def test_uninstall_without_the_record_still_finds_memdirs_never_failing_commands(
    cli: Cli,
) -> None:
    settings = cli.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(REAL_GEMINI_SETTINGS)
    assert cli("install", "gemini", "--user")[0] == 0
    (cli.home / ".memdir" / "installs.json").unlink()  # lost: uninstall reads the commands
    assert cli("uninstall", "gemini", "--user")[0] == 0
    after = json.loads(settings.read_text())
    assert "memdir hook" not in json.dumps(after["hooks"])
    assert after["hooks"]["BeforeTool"] == json.loads(REAL_GEMINI_SETTINGS)["hooks"]["BeforeTool"]


def test_an_install_from_before_never_fail_is_replaced_not_doubled(cli: Cli) -> None:
    settings = cli.home / ".gemini" / "settings.json"
    assert cli("install", "gemini", "--user")[0] == 0
    record_path = cli.home / ".memdir" / "installs.json"
    old = settings.read_text().replace(" || true", "")  # what the earlier memdir wrote
    record = json.loads(record_path.read_text().replace(" || true", ""))
    settings.write_text(old)
    record_path.write_text(json.dumps(record))
    assert cli("install", "gemini", "--user")[0] == 0
    commands = [
        h["command"]
        for groups in json.loads(settings.read_text())["hooks"].values()
        for g in groups
        for h in g["hooks"]
    ]
    assert len(commands) == 5 and all(c.endswith(" || true") for c in commands)


def test_a_fresh_install_creates_the_file_and_uninstall_deletes_it(cli: Cli) -> None:
    settings = cli.project / ".gemini" / "settings.json"
    code, out = cli("install", "gemini", "--project")
    assert code == 0 and settings.is_file()
    assert any("only when started in that directory" in n for n in out["model"])
    assert set(json.loads(settings.read_text())) == {"hooks", "mcpServers"}
    code, _ = cli("uninstall", "gemini", "--project")
    assert code == 0 and not settings.exists()


def test_dry_run_shows_both_parts_and_writes_nothing(cli: Cli) -> None:
    settings = cli.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(REAL_GEMINI_SETTINGS)
    code, out = cli("install", "gemini", "--dry-run")
    assert code == 0 and out["dry_run"] is True
    assert '"BeforeAgent"' in out["diff"] and '"trust": true' in out["diff"]
    assert out["diff"].count(f"--- {settings} (now)") == 1
    assert settings.read_text() == REAL_GEMINI_SETTINGS
    assert not (cli.home / ".memdir" / "installs.json").exists()


def test_user_install_follows_gemini_cli_home(cli: Cli, tmp_path: Path) -> None:
    cli.env["GEMINI_CLI_HOME"] = str(tmp_path / "ghome")
    code, _ = cli("install", "gemini", "--user")
    assert code == 0
    assert (tmp_path / "ghome" / ".gemini" / "settings.json").is_file()
    assert not (cli.home / ".gemini").exists()


def test_targets_for_each_scope() -> None:
    loc = Locations.from_env({}, home=Path("/h"), project_root=Path("/p"))
    assert {t.path for t in DIALECT.install_targets("project", loc)} == {
        Path("/p/.gemini/settings.json")
    }
    kinds = [(t.kind, dict(t.server)) for t in DIALECT.install_targets("user", loc)]
    assert kinds == [("hooks", {}), ("mcp", {"trust": True})]
