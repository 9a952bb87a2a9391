"""Codex CLI's dialect: its recorded hook JSON in, its closed output schema out, its rollout read
into memdir's entries, and ``memdir install codex`` / ``uninstall`` byte for byte."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters.hooks.dialect import Locations
from memdir.adapters.hooks.hookio import read_body
from memdir.adapters.hooks.install import FileChange, InstallRecord, plan_install, plan_uninstall
from memdir.adapters.hooks.install import apply as install_apply
from memdir.adapters.hosts import dialect
from memdir.adapters.hosts.codex import DIALECT, read_rollout
from memdir.adapters.hosts.codex_trust import trust_hash
from memdir.errors import HookInputError, InstallError
from tests.adapters.hosts.codex_rollout import Rollout

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hosts" / "codex"
WORDS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "Stop": "stop",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}


def recorded() -> list[tuple[str, dict[str, object]]]:
    out = []
    for path in sorted((FIXTURES / "hooks").glob("*.json")):
        body = json.loads(path.read_text())
        if body["hook_event_name"] in WORDS:
            out.append((WORDS[str(body["hook_event_name"])], body))
    return out


def test_the_registry_finds_codex() -> None:
    assert dialect("codex") is DIALECT


@pytest.mark.parametrize(("event", "body"), recorded(), ids=lambda v: str(v)[:20])
def test_every_recorded_hook_input_parses(event: str, body: dict[str, object]) -> None:
    inp = DIALECT.parse(event, read_body(json.dumps(body)))
    assert inp.session_id == body["session_id"] and inp.cwd == body["cwd"]
    assert inp.transcript_path == body["transcript_path"]
    assert inp.prompt == body.get("prompt") and inp.source == body.get("source")
    assert inp.trigger == body.get("trigger") and inp.reason == body.get("reason")


def test_an_ephemeral_session_has_no_transcript() -> None:
    body = {"session_id": "s1", "transcript_path": None, "cwd": "/p", "hook_event_name": "Stop"}
    assert DIALECT.parse("stop", body).transcript_path is None


@pytest.mark.parametrize(
    "body",
    [
        {"session_id": "../../etc", "cwd": "/p"},
        {"session_id": "a\x00b", "cwd": "/p"},
        {"session_id": 7},
        {"session_id": "s", "prompt": ["not", "text"]},
        {"session_id": "s", "hook_event_name": "Stop"},  # sent to user-prompt-submit
    ],
)
def test_bad_input_is_a_hook_input_error(body: dict[str, object]) -> None:
    with pytest.raises(HookInputError):
        DIALECT.parse("user-prompt-submit", body)


def test_answers_fit_codex_closed_schemas() -> None:
    start = json.loads(DIALECT.render("session-start", "ctx", None))
    assert start == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx"}
    }
    prompt = json.loads(DIALECT.render("user-prompt-submit", "x" * 20_000, "note"))
    assert set(prompt) == {"hookSpecificOutput", "systemMessage"}
    assert len(prompt["hookSpecificOutput"]["additionalContext"]) <= 9_000  # Codex cuts at ~10k
    # PreCompact and Stop cannot take hookSpecificOutput (their answer would fail)
    assert DIALECT.render("pre-compact", "ctx", None) == ""
    assert json.loads(DIALECT.render("stop", "ctx", "saved")) == {"systemMessage": "saved"}


def test_the_recorded_rollout_reads_as_the_conversation_without_injected_text() -> None:
    entries = read_rollout(FIXTURES / "rollouts" / "session-1.jsonl")
    texts = [
        b.get("text", "") for e in entries for b in e["message"]["content"] if b["type"] == "text"
    ]
    assert "Remember that CI uses the ubuntu-24.04 image." in texts
    assert "Which image does CI use?" in texts
    assert not any("memory context for" in t or "environment_context" in t for t in texts)
    assert not any("skills_instructions" in t for t in texts)
    uses = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_use"]
    assert [u["name"] for u in uses] == ["mcp__notes__note_save", "exec_command"]
    assert uses[0]["input"] == {"text": "CI uses ubuntu-24.04"}
    results = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    assert '{"saved": true}' in results[0]["content"]
    summaries = [e for e in entries if e.get("isCompactSummary")]
    assert len(summaries) == 2 and all("SUMMARY" in str(e["message"]) for e in summaries)
    # stable and unique uuids: extraction's cursor survives a re-read and an append
    again = read_rollout(FIXTURES / "rollouts" / "session-1.jsonl")
    assert [e["uuid"] for e in again] == [e["uuid"] for e in entries]
    assert len({e["uuid"] for e in entries}) == len(entries)


def test_a_tail_read_and_junk_lines(tmp_path: Path) -> None:
    r = Rollout(tmp_path / ".codex", "s1")
    for n in range(200):
        r.turn(f"prompt number {n} " + "x" * 200, f"answer {n}")
    r.raw(b"{torn line no newline")
    whole = read_rollout(r.path)
    tail = read_rollout(r.path, tail_bytes=8_000)
    assert 0 < len(tail) < len(whole)
    assert [e["uuid"] for e in tail] == [e["uuid"] for e in whole[-len(tail) :]]
    r.raw(b"\n" + b"[" * 200_000 + b"]" * 200_000 + b"\n\xff\xfe\n")
    r.turn("after the junk", "fine")
    assert read_rollout(r.path)[-2]["message"]["content"][0]["text"] == "after the junk"


# -- install --------------------------------------------------------------------------------

USER_CONFIG = """\
# my codex config
model = "gpt-5"

[mcp_servers.github]
command = "gh-mcp"
args = ["--stdio"]

[projects."/home/u/app"]
trust_level = "trusted"
"""
USER_HOOKS = """{
  "hooks": {
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify"}]}
    ]
  }
}
"""


def locations(tmp_path: Path) -> Locations:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    return Locations.from_env({}, home=home, project_root=tmp_path / "proj")


def apply(changes: list[FileChange], *, install: bool = True) -> dict[str, Any]:
    """Apply as ``memdir install`` does (backups, the record); the record after."""
    home = changes[0].path.parents[3] / "memdir-home" if changes else Path("/nonexistent")
    install_apply(changes, memdir_home=home, install=install)
    return InstallRecord(home).load()


def test_user_install_then_uninstall_gives_back_every_byte(tmp_path: Path) -> None:
    loc = locations(tmp_path)
    config, hooks = loc.home / ".codex" / "config.toml", loc.home / ".codex" / "hooks.json"
    config.write_text(USER_CONFIG)
    hooks.write_text(USER_HOOKS)
    changes = plan_install(DIALECT, "user", loc, ["/opt/memdir/bin/memdir"], {})
    record = apply(changes)
    parsed = tomllib.loads(config.read_text())
    assert parsed["mcp_servers"]["github"]["command"] == "gh-mcp"
    server = parsed["mcp_servers"]["memdir"]
    assert server["args"] == ["mcp"] and server["default_tools_approval_mode"] == "approve"
    assert config.read_text().startswith(USER_CONFIG)  # the user's text untouched
    groups = json.loads(hooks.read_text())["hooks"]
    assert sorted(groups) == sorted(WORDS)
    command = groups["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == "/opt/memdir/bin/memdir hook --host codex user-prompt-submit"
    assert groups["SessionEnd"][0]["hooks"][0]["timeout"] <= 3  # Codex's clamp
    assert groups["Stop"][0]["hooks"][0]["command"] == "notify"  # theirs first, kept
    # twice is the same as once
    assert all(
        not c.changed
        for c in plan_install(DIALECT, "user", loc, ["/opt/memdir/bin/memdir"], record)
    )
    apply(plan_uninstall(DIALECT, "user", loc, record), install=False)
    assert config.read_text() == USER_CONFIG and hooks.read_text() == USER_HOOKS


def test_project_install_creates_and_removes_its_own_files(tmp_path: Path) -> None:
    loc = locations(tmp_path)
    changes = plan_install(DIALECT, "project", loc, ["memdir"], {})
    assert [c.path for c in changes] == [
        loc.project_root / ".codex" / "hooks.json",
        loc.project_root / ".codex" / "config.toml",
    ]
    record = apply(changes)
    apply(plan_uninstall(DIALECT, "project", loc, record), install=False)
    assert not (loc.project_root / ".codex" / "hooks.json").exists()
    assert not (loc.project_root / ".codex" / "config.toml").exists()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('[mcp_servers.memdir]\ncommand = "other"\n', "did not write"),
        ("model = [unclosed\n", "not valid TOML"),
        ('mcp_servers = { github = { command = "x" } }\n', "does not fit"),
    ],
)
def test_a_config_toml_memdir_cannot_edit_safely_is_refused(
    tmp_path: Path, text: str, why: str
) -> None:
    loc = locations(tmp_path)
    (loc.home / ".codex" / "config.toml").write_text(text)
    with pytest.raises(InstallError, match=why):
        plan_install(DIALECT, "user", loc, ["memdir"], {})


def test_doctor_names_untrusted_hooks_until_their_hash_is_recorded(tmp_path: Path) -> None:
    loc = locations(tmp_path)
    changes = plan_install(DIALECT, "user", loc, ["memdir"], {})
    apply(changes)
    [problem] = DIALECT.problems(loc)
    assert problem["kind"] == "codex-hooks-untrusted" and "5 of memdir's" in problem["detail"]
    hooks_file = loc.home / ".codex" / "hooks.json"
    groups = json.loads(hooks_file.read_text())["hooks"]
    lines = []
    for event, [group] in groups.items():
        key = f"{hooks_file}:{'_'.join(w.lower() for w in _split(event))}:0:0"
        digest = trust_hash(event, group, group["hooks"][0])
        lines.append(f'[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n')
    with (loc.home / ".codex" / "config.toml").open("a") as fh:
        fh.write("\n" + "\n".join(lines[:4]))
    [problem] = DIALECT.problems(loc)
    assert "1 of memdir's" in problem["detail"]
    with (loc.home / ".codex" / "config.toml").open("a") as fh:
        fh.write("\n" + lines[4])
    assert DIALECT.problems(loc) == []


def test_doctor_names_an_untrusted_project(tmp_path: Path) -> None:
    loc = locations(tmp_path)
    apply(plan_install(DIALECT, "project", loc, ["memdir"], {}))
    [problem] = DIALECT.problems(loc)
    assert problem["kind"] == "codex-project-untrusted"


def _split(event: str) -> list[str]:
    import re

    return re.findall(r"[A-Z][a-z]*", event)


def test_status_and_doctor_list_each_installed_host(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    home, project = tmp_path / "home", tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "CODEX_"))}
    env.update(HOME=str(home), MEMDIR_HOST_MODEL="off")

    def memdir(*args: str) -> Any:
        proc = subprocess.run(
            [sys.executable, "-m", "memdir", "--json", *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return json.loads(proc.stdout)

    memdir("install", "codex", "--project")
    memdir("install", "claude-code", "--project")
    status = {h["host"]: h for h in memdir("status")["hosts"]}
    assert status["codex"]["hooks"] == 5 and status["claude-code"]["hooks"] == 5
    assert status["codex"]["background_model"] is None  # no model configured: offline
    doctor = memdir("doctor")
    assert {h["host"] for h in doctor["hosts"]} == {"codex", "claude-code"}
    assert "codex-project-untrusted" in {p["kind"] for p in doctor["problems"]}


def test_every_hook_carries_a_name_codex_shows(tmp_path: Path) -> None:
    """Codex's /hooks review listed memdir's hooks as "Unnamed hook": its hooks have no name
    field; ``statusMessage`` is what it shows (and hashes: the trust recipe includes it)."""
    from memdir.adapters.hosts.codex import DIALECT

    specs = DIALECT.hook_specs(["memdir"])
    labels = [spec.entry()["hooks"][0].get("statusMessage") for spec in specs]
    assert all(isinstance(label, str) and label.startswith("memdir: ") for label in labels)
    assert len(set(labels)) == len(specs)
