"""Cursor's dialect against its documented hook JSON (fixtures in ``tests/fixtures/hosts/cursor``,
written in the documented shapes: no Cursor binary runs here), its JSONL transcript read into
memdir's entries, the rules file kept out of git, and ``memdir install cursor`` / ``uninstall``
byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memdir.adapters.hooks.dialect import Locations
from memdir.adapters.hooks.hookio import read_body
from memdir.adapters.hooks.install import FileChange, InstallRecord, plan_install, plan_uninstall
from memdir.adapters.hooks.install import apply as install_apply
from memdir.adapters.hooks.work_recall import work_query
from memdir.adapters.hosts import MCP_ONLY, dialect, names
from memdir.adapters.hosts.cursor import DIALECT, read_transcript
from memdir.adapters.hosts.cursor_rules import RULES_BUDGET, RULES_PATH, content, refresh, remove
from memdir.errors import HookInputError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "hosts" / "cursor"
WORDS = {"sessionStart": "session-start", "stop": "stop", "preCompact": "pre-compact"}
WORDS["sessionEnd"] = "session-end"


def documented() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted((FIXTURES / "hooks").glob("*.json")):
        body = json.loads(path.read_text())
        if body["hook_event_name"] in WORDS:
            out.append((WORDS[body["hook_event_name"]], body))
    return out


def test_the_registry_finds_cursor_as_a_hook_host() -> None:
    assert dialect("cursor") is DIALECT
    assert "cursor" in names() and "cursor" not in MCP_ONLY


@pytest.mark.parametrize(("event", "body"), documented(), ids=lambda v: str(v)[:20])
def test_every_documented_hook_input_parses(event: str, body: dict[str, Any]) -> None:
    inp = DIALECT.parse(event, read_body(json.dumps(body)))
    assert inp.session_id == body["conversation_id"]  # every event carries it
    assert inp.cwd == body["workspace_roots"][0]  # the hook's own cwd is not the workspace
    assert inp.transcript_path == body["transcript_path"]
    assert inp.trigger == body.get("trigger") and inp.reason == body.get("reason")
    assert inp.prompt is None  # no event memdir installs carries the prompt


def test_before_submit_prompt_is_not_an_event_memdir_handles() -> None:
    body = json.loads((FIXTURES / "hooks" / "01-beforeSubmitPrompt.json").read_text())
    with pytest.raises(HookInputError, match="no hook"):
        DIALECT.parse("user-prompt-submit", body)
    assert "beforeSubmitPrompt" not in {s.event for s in DIALECT.hook_specs(["memdir"])}


@pytest.mark.parametrize(
    "body",
    [
        {"conversation_id": "../../etc", "workspace_roots": ["/p"]},
        {"conversation_id": "a\x00b"},
        {"conversation_id": 7},
        {"session_id": "s", "workspace_roots": "/p"},  # not a list
        {"session_id": "s", "workspace_roots": [3]},
        {"session_id": "s", "transcript_path": ["x"]},
        {"session_id": "s", "hook_event_name": "sessionEnd"},  # sent to stop
    ],
)
def test_bad_input_is_a_hook_input_error(body: dict[str, Any]) -> None:
    with pytest.raises(HookInputError):
        DIALECT.parse("stop", body)


def test_a_session_without_transcripts_and_the_session_id_fallback() -> None:
    inp = DIALECT.parse("session-start", {"session_id": "s1", "transcript_path": None})
    assert inp.session_id == "s1" and inp.transcript_path is None and inp.source == "startup"


def test_answers_use_only_the_documented_output_fields() -> None:
    documented_out = json.loads((FIXTURES / "outputs.json").read_text())
    start = json.loads(DIALECT.render("session-start", "x" * 20_000, "note"))
    assert set(start) == {"additional_context"} <= set(documented_out["sessionStart"])
    assert len(start["additional_context"]) <= 9_000
    for event in ("stop", "pre-compact", "session-end"):  # nothing of theirs reaches the model
        assert DIALECT.render(event, "ctx", "note") == ""
    assert DIALECT.render("session-start", "", None) == ""


# -- the transcript -----------------------------------------------------------------------------


def test_the_transcript_reads_as_the_conversation_without_cursor_context() -> None:
    entries = read_transcript(FIXTURES / "transcripts" / "session-1.jsonl")
    texts = [
        (e["type"], b["text"]) for e in entries for b in e["message"]["content"] if "text" in b
    ]
    assert texts[0] == (
        "user",
        "Remember that we deploy with `make ship`, never `kubectl apply` by hand.",
    )
    assert ("user", "Which port does staging listen on?") in texts
    assert ("assistant", "Staging listens on 5433.") in texts
    assert not any("user_info" in t or "OS Version" in t or "ship:\n" in t for _, t in texts)
    uses = [b for e in entries for b in e["message"]["content"] if b["type"] == "tool_use"]
    assert [u["name"] for u in uses] == ["Read", "Grep"]
    assert uses[1]["input"] == {"pattern": "port", "path": "config/"}
    assert not any(b["type"] == "thinking" for e in entries for b in e["message"]["content"])
    again = read_transcript(FIXTURES / "transcripts" / "session-1.jsonl")
    assert [e["uuid"] for e in again] == [e["uuid"] for e in entries]
    assert len({e["uuid"] for e in entries}) == len(entries)


def _line(role: str, text: str) -> bytes:
    return json.dumps(
        {"role": role, "message": {"content": [{"type": "text", "text": text}]}}
    ).encode()


def test_a_tail_read_keeps_the_uuids_and_junk_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with path.open("wb") as fh:
        for n in range(200):
            fh.write(_line("user", f"<user_query>prompt {n} {'x' * 200}</user_query>") + b"\n")
            fh.write(_line("assistant", f"answer {n}") + b"\n")
        fh.write(b"{torn line\n" + b"[" * 200_000 + b"]" * 200_000 + b"\n\xff\xfe\n")
        fh.write(b'{"role": 5}\n{"role": "user", "message": "no blocks"}\n')
        fh.write(_line("user", "<user_query>after the junk</user_query>") + b"\n")
    whole = read_transcript(path)
    tail = read_transcript(path, tail_bytes=8_000)
    assert 0 < len(tail) < len(whole)
    assert [e["uuid"] for e in tail] == [e["uuid"] for e in whole[-len(tail) :]]
    assert whole[-1]["message"]["content"][0]["text"] == "after the junk"
    assert len(whole) == 401


# -- the work recall query ----------------------------------------------------------------------


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "feature/billing-retries")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "invoice.py").write_text("x = 1\n")
    git(root, "add", "invoice.py")
    git(root, "commit", "-qm", "Retry failed card charges three times")
    (root / "invoice.py").write_text("x = 2\n")
    return root


def test_the_work_query_is_the_branch_the_commits_and_their_paths(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    (root / "billing notes.md").write_text("a\n")
    git(root, "add", "billing notes.md")
    query, paths = work_query(root)
    assert "feature billing retries" in query and "Retry failed card charges" in query
    assert "invoice" in query and paths == ("billing notes.md", "invoice.py")
    assert work_query(tmp_path / "not-a-repo") == ("", ())


def test_a_git_that_hangs_gives_no_query_within_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path / "r")
    fake = tmp_path / "bin"
    fake.mkdir()
    sleep = shutil.which("sleep")
    (fake / "git").write_text(f"#!/bin/sh\n{sleep} 30\necho '# branch.head hung'\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    started = time.monotonic()
    assert work_query(root) == ("", ())
    assert 1.5 < time.monotonic() - started < 5  # waited for the bound, not for git


# -- the rules file -----------------------------------------------------------------------------


def index(memory: Path, n: int) -> Path:
    memory.mkdir(parents=True, exist_ok=True)
    lines = [
        f"- [Memory {i}](m{i}.md) — what memory {i} is about, in a few words" for i in range(n)
    ]
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n")
    return memory / "MEMORY.md"


def test_the_rules_file_is_always_applied_and_within_its_budget(tmp_path: Path) -> None:
    small = content(index(tmp_path / "a", 3))
    assert small.startswith("---\n") and "alwaysApply: true" in small.split("---")[1]
    assert "memory_recall" in small and "[Memory 2](m2.md)" in small
    big = content(index(tmp_path / "b", 2_000))
    assert len(big) <= RULES_BUDGET and big.rstrip().endswith("more: call `memory_index`")
    assert "alwaysApply" in content(tmp_path / "missing" / "MEMORY.md")


def test_the_rules_file_is_written_only_where_git_ignores_it(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    exclude = root / ".git" / "info" / "exclude"
    before = exclude.read_bytes()
    entry = index(tmp_path / "mem", 3)
    assert refresh(root, entry) == "updated"
    path = root / RULES_PATH
    assert "[Memory 0](m0.md)" in path.read_text() and (path.stat().st_mode & 0o777) == 0o600
    status = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "memdir.mdc" not in status  # `git add -A` would not take it
    assert refresh(root, entry) == "unchanged"
    index(tmp_path / "mem", 4)
    assert refresh(root, entry) == "updated" and "[Memory 3]" in path.read_text()
    assert remove(root) == [str(path), str(exclude)]
    assert exclude.read_bytes() == before and not path.exists()


def test_a_project_inside_a_larger_repository_gets_its_own_exclude_line(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    sub = root / "services" / "api"
    sub.mkdir(parents=True)
    assert refresh(sub, index(tmp_path / "mem", 2)) == "updated"
    exclude = (root / ".git" / "info" / "exclude").read_text()
    assert f"/services/api/{RULES_PATH}" in exclude.splitlines()
    remove(sub)
    assert "services/api" not in (root / ".git" / "info" / "exclude").read_text()


@pytest.mark.parametrize("case", ["tracked", "negated", "no repo", "symlink"])
def test_the_rules_file_is_never_written_where_git_could_commit_it(
    tmp_path: Path, case: str
) -> None:
    root = tmp_path / "plain" if case == "no repo" else repo(tmp_path / "r")
    root.mkdir(exist_ok=True)
    path = root / RULES_PATH
    path.parent.mkdir(parents=True)
    if case == "tracked":
        path.write_text("team rules\n")
        git(root, "add", RULES_PATH)
    elif case == "negated":
        (root / ".gitignore").write_text(f"!{RULES_PATH}\n")
    elif case == "symlink":
        (tmp_path / "elsewhere").write_text("x\n")
        path.symlink_to(tmp_path / "elsewhere")
    outcome = refresh(root, index(tmp_path / "mem", 3))
    assert outcome.startswith("not written")
    assert "Memory 0" not in (path.read_text() if path.exists() else "")
    if case == "symlink":
        assert (tmp_path / "elsewhere").read_text() == "x\n"  # never written through


# -- install ------------------------------------------------------------------------------------

USER_HOOKS = """{
  "version": 1,
  "hooks": {
    "stop": [
      { "command": "./audit.sh", "timeout": 5 }
    ],
    "beforeShellExecution": [
      { "command": "guard" }
    ]
  }
}
"""
USER_MCP = '{\n    "mcpServers": {\n        "github": {"command": "gh-mcp"}\n    }\n}\n'


def locations(tmp_path: Path) -> Locations:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    return Locations.from_env({}, home=home, project_root=tmp_path / "proj")


def apply(changes: list[FileChange], home: Path, *, install: bool = True) -> dict[str, Any]:
    install_apply(changes, memdir_home=home, install=install)
    return InstallRecord(home).load()


def test_user_install_then_uninstall_gives_back_every_byte(tmp_path: Path) -> None:
    loc = locations(tmp_path)
    hooks, mcp = loc.home / ".cursor" / "hooks.json", loc.home / ".cursor" / "mcp.json"
    hooks.write_text(USER_HOOKS)
    mcp.write_text(USER_MCP)
    memdir_home = tmp_path / "memdir-home"
    record = apply(plan_install(DIALECT, "user", loc, ["/opt/bin/memdir"], {}), memdir_home)
    value = json.loads(hooks.read_text())
    assert value["version"] == 1
    assert value["hooks"]["stop"] == [
        {"command": "./audit.sh", "timeout": 5},  # theirs first, kept
        {"command": "/opt/bin/memdir hook --host cursor stop", "timeout": 15},
    ]
    assert sorted(value["hooks"]) == sorted(["beforeShellExecution", *WORDS])
    assert all(isinstance(h, dict) and "hooks" not in h for v in value["hooks"].values() for h in v)
    servers = json.loads(mcp.read_text())["mcpServers"]
    # no recall per prompt: the server preloads for the agent's memory_recall
    assert servers["memdir"] == {"command": "/opt/bin/memdir", "args": ["mcp", "--preload"]}
    assert servers["github"] == {"command": "gh-mcp"}
    again = plan_install(DIALECT, "user", loc, ["/opt/bin/memdir"], record)
    assert not any(c.changed for c in again)  # twice is once
    apply(plan_uninstall(DIALECT, "user", loc, record), memdir_home, install=False)
    assert hooks.read_text() == USER_HOOKS and mcp.read_text() == USER_MCP


def test_project_install_creates_and_removes_its_own_files(tmp_path: Path) -> None:
    loc = locations(tmp_path)
    memdir_home = tmp_path / "memdir-home"
    changes = plan_install(DIALECT, "project", loc, ["memdir"], {})
    assert [c.path for c in changes] == [
        loc.project_root / ".cursor" / "hooks.json",
        loc.project_root / ".cursor" / "mcp.json",
    ]
    record = apply(changes, memdir_home)
    created = json.loads((loc.project_root / ".cursor" / "hooks.json").read_text())
    assert list(created) == ["version", "hooks"] and created["version"] == 1
    apply(plan_uninstall(DIALECT, "project", loc, record), memdir_home, install=False)
    assert not (loc.project_root / ".cursor" / "hooks.json").exists()
    assert not (loc.project_root / ".cursor" / "mcp.json").exists()


def test_an_uninstall_without_a_record_still_finds_memdirs_flat_hooks(tmp_path: Path) -> None:
    loc = locations(tmp_path)
    hooks = loc.home / ".cursor" / "hooks.json"
    hooks.write_text(USER_HOOKS)
    apply(plan_install(DIALECT, "user", loc, ["memdir"], {}), tmp_path / "m1")
    apply(plan_uninstall(DIALECT, "user", loc, {}), tmp_path / "m2", install=False)
    left = json.loads(hooks.read_text())  # no record of what it created: empty lists stay
    assert {k: v for k, v in left["hooks"].items() if v} == json.loads(USER_HOOKS)["hooks"]


# -- as a user runs it --------------------------------------------------------------------------


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMDIR_", "CLAUDE_"))}
    env.update(HOME=str(home), MEMDIR_HOST_MODEL="off", MEMDIR_HOOK_DAEMON="0")
    return env


def memdir(project: Path, env: dict[str, str], *args: str, stdin: str | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "memdir", *args],
        cwd=project,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_cursor_session_as_a_user_has_it(tmp_path: Path) -> None:
    home, project = tmp_path / "home", repo(tmp_path / "proj")
    home.mkdir()
    env = cli_env(home)
    git(project, "commit", "-qam", "Deploy the billing service with make ship")
    assert memdir(project, env, "install", "cursor", "--project").returncode == 0
    second = memdir(project, env, "install", "cursor", "--user")
    assert second.returncode != 0 and "twice" in second.stderr  # a second active form
    for name, body in (
        ("deploy", "We deploy with `make ship`, never `kubectl apply` by hand."),
        ("coffee", "The user drinks espresso."),
    ):
        memdir(project, env, "add", name, "-d", body, "-t", "project", "-b", body)
    conversation = "6f1c2a9e-4b7d-4e21-9c3f-0a8d5e7b1c42"
    base: dict[str, Any] = {"conversation_id": conversation, "generation_id": "g1", "model": "m"}
    base |= {"workspace_roots": [str(project)], "transcript_path": None}
    start = {**base, "hook_event_name": "sessionStart", "session_id": conversation}
    run = memdir(home, env, "hook", "--host", "cursor", "session-start", stdin=json.dumps(start))
    answer = json.loads(run.stdout)
    assert set(answer) == {"additional_context"}, run.stderr
    context = answer["additional_context"]
    assert "nothing is added per prompt" in context and "memory_recall" in context
    work = context.split("current work in this repository")[1]
    assert "make ship" in work  # recalled on the commits, before any prompt
    rules = (project / RULES_PATH).read_text()
    assert "[deploy](deploy.md)" in rules and len(rules) <= RULES_BUDGET
    # the turn ends: extraction from Cursor's own transcript, in the background
    transcripts = home / ".cursor" / "projects" / "proj" / "agent-transcripts"
    transcripts.mkdir(parents=True)
    path = transcripts / f"{conversation}.jsonl"
    path.write_bytes(
        _line(
            "user",
            "<user_query>Remember that the staging database listens on port 5433.</user_query>",
        )
        + b"\n"
        + _line("assistant", "Noted.")
        + b"\n"
    )
    stop = {**base, "hook_event_name": "stop", "status": "completed", "loop_count": 0}
    stop["transcript_path"] = str(path)
    run = memdir(home, env, "hook", "--host", "cursor", "stop", stdin=json.dumps(stop))
    assert run.returncode == 0 and run.stdout == "" and run.stderr == ""
    deadline = time.monotonic() + 60
    while "5433" not in (project / RULES_PATH).read_text() and time.monotonic() < deadline:
        time.sleep(0.3)
    assert "5433" in (project / RULES_PATH).read_text()  # the worker refreshed the rules file
    status = json.loads(memdir(project, env, "--json", "status").stdout)
    [cursor] = [h for h in status["hosts"] if h["host"] == "cursor"]
    assert cursor["hooks"] == 4
    doctor = json.loads(memdir(project, env, "--json", "doctor").stdout)
    assert "cursor" in {h["host"] for h in doctor["hosts"]}
    done = memdir(project, env, "uninstall", "cursor", "--project")
    assert done.returncode == 0 and not (project / RULES_PATH).exists()
    assert not (project / ".cursor" / "hooks.json").exists()
    assert "memdir.mdc" not in (project / ".git" / "info" / "exclude").read_text()


def test_the_session_start_recall_through_the_warm_daemon(tmp_path: Path) -> None:
    home, project = tmp_path / "home", repo(tmp_path / "proj")
    home.mkdir()
    env = cli_env(home)
    env.pop("MEMDIR_HOOK_DAEMON")
    env["MEMDIR_DAEMON_IDLE"] = "60"  # a daemon the test fails to stop still goes away
    git(project, "commit", "-qam", "Rotate the signing keys every quarter")
    body = "Signing keys rotate every quarter through the vault job, never by hand."
    memdir(project, env, "add", "keys", "-d", body, "-t", "project", "-b", body)
    assert memdir(project, env, "hook", "daemon", "start").returncode == 0
    try:
        start: dict[str, Any] = {"conversation_id": "c-daemon", "hook_event_name": "sessionStart"}
        start["workspace_roots"] = [str(project)]
        run = memdir(
            home, env, "hook", "--host", "cursor", "session-start", stdin=json.dumps(start)
        )
        context = json.loads(run.stdout)["additional_context"]
        assert "vault job" in context.split("current work in this repository")[1]
        log = memdir(project, env, "--json", "hook", "log", "--session", "c-daemon")
        rows = json.loads(log.stdout)
        assert any(r.get("via") == "daemon" and r.get("injected") for r in rows)
    finally:
        memdir(project, env, "hook", "daemon", "stop")


def test_memdirs_claude_code_hooks_get_a_note_about_cursors_third_party_hooks(
    tmp_path: Path,
) -> None:
    loc = locations(tmp_path)
    assert not any("Third-party" in n for n in DIALECT.install_notes("project", loc))
    settings = loc.project_root / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    command = "memdir hook user-prompt-submit"
    hook = {"hooks": [{"type": "command", "command": command}]}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [hook]}}))
    assert any("Third-party skills" in n for n in DIALECT.install_notes("project", loc))
