"""Zero-config host model for the hooks: which model the background paths use, the child guard,
the cost in the hook log, and what ``install --llm`` and ``status`` tell the user."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import memdir.llm.base
from memdir.adapters.hooks import hooklog
from memdir.adapters.hooks.hostmodel import background_spec, is_child
from memdir.adapters.hooks.lifecycle import default_extractor
from memdir.cli.main import main
from memdir.config import load_settings
from memdir.extract.fallback import FallbackExtractor
from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.session_pass import WithSessionLessons
from memdir.llm.ledger import CostLedger, ledger_path
from tests.cli.test_hook_cmd import Cli


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


def settings(tmp_path: Path, **env: str) -> Any:
    return load_settings(
        {"HOME": str(tmp_path), **env},
        cwd=tmp_path,
        flag_settings=None,
        claude_mode=False,
        memory_dir_flag=None,
        policy_dir=tmp_path / "policy",
    )


def test_background_spec(tmp_path: Path) -> None:
    assert background_spec(settings(tmp_path)) == "claude-code:haiku"
    assert background_spec(settings(tmp_path, MEMDIR_HOST_MODEL="sonnet")) == "claude-code:sonnet"
    assert background_spec(settings(tmp_path, MEMDIR_MODEL="anthropic:x")) == "anthropic:x"
    assert background_spec(settings(tmp_path, MEMDIR_HOST_MODEL="off")) is None
    assert background_spec(settings(tmp_path, MEMDIR_HOST_MODEL_BUDGET_USD="0")) is None
    assert is_child({"MEMDIR_CHILD": "1"}) and not is_child({})


def test_hooks_extract_with_the_host_model_and_fall_back_to_rules(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", True)  # built, never called
    hc = cli.hook_context(MEMDIR_HOST_MODEL="haiku")
    assert hc.extraction == "model"
    wrapped = default_extractor(hc, "s1")
    assert isinstance(wrapped, WithSessionLessons)  # the whole-session rules run beside it
    extractor = wrapped.primary
    assert isinstance(extractor, FallbackExtractor)
    assert isinstance(extractor.fallback, RuleExtractor)
    provider = extractor.primary.provider  # type: ignore[attr-defined]
    assert (provider.model, provider.session, provider.purpose) == ("haiku", "s1", "extract")
    off = cli.hook_context(MEMDIR_HOST_MODEL="off")
    assert off.extraction == "rules" and isinstance(default_extractor(off), RuleExtractor)


def test_a_child_cli_runs_no_memdir_hook(tmp_path: Path) -> None:
    """A CLI memdir started carries MEMDIR_CHILD=1: every hook exits 0 at once, silently, and
    writes no log row (a real process, the way the host runs hooks)."""
    home = tmp_path / "home"
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    event = json.dumps(
        {
            "session_id": "child",
            "cwd": str(tmp_path),
            "hook_event_name": "SessionStart",
            "source": "startup",
            "transcript_path": "",
        }
    )
    for child, expected_rows in (("1", 0), ("", 1)):
        proc = subprocess.run(
            [sys.executable, "-m", "memdir", "hook", "session-start"],
            input=event,
            env={**env, "MEMDIR_CHILD": child, "MEMDIR_HOOK_DAEMON": "0"},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0
        logs = list(home.rglob("log.jsonl"))
        rows = [r for p in logs for r in hooklog.read(p.parent.parent)]
        assert len(rows) == expected_rows
        if child:
            assert proc.stdout == "" and proc.stderr == ""


def test_hook_log_shows_the_cost_and_the_fallback(cli: Cli) -> None:
    hc = cli.hook_context()
    hooklog.record(
        hc.cache_dir,
        {
            "session": "s1",
            "event": "extract",
            "written": ["/m/a.md"],
            "cost_usd": 0.0123,
            "input_tokens": 900,
            "output_tokens": 80,
        },
    )
    hooklog.record(
        hc.cache_dir,
        {"session": "s1", "event": "extract", "fallback": "offline (host model unavailable: x)"},
    )
    CostLedger(ledger_path(cli.home / ".memdir"), budget_usd=None).record(
        {"session": "s1", "cost_usd": 0.0123}
    )
    _, text, _ = cli("hook", "log", "--session", "s1", text=True)
    assert "model $0.0123 (900+80 tokens)" in text and "offline (host model unavailable" in text
    assert "host model today: $0.0123 in 1 calls" in text
    assert "this session: $0.0123 in 1 calls" in text


def test_status_shows_spend_per_session_against_the_budget(cli: Cli) -> None:
    ledger = CostLedger(ledger_path(cli.home / ".memdir"), budget_usd=None)
    ledger.record({"session": "s1", "cost_usd": 0.25, "input_tokens": 10, "output_tokens": 2})
    ledger.record({"session": "s2", "cost_usd": 0.5})
    code, out, _ = cli("status")
    assert code == 0
    host = out["host_model"]
    assert host["today"]["calls"] == 2 and host["today"]["by_session"] == {"s1": 0.25, "s2": 0.5}
    assert host["budget_usd"] == 1.0 and host["remaining_usd"] == 0.25
    _, text, _ = cli("status", text=True)
    assert "$0.7500 of $1.00 in 2 calls" in text and "s2" in text


@pytest.mark.parametrize(
    ("llm", "pinned", "says"),
    [("host", False, "claude-code:haiku"), ("off", True, "Model: off"), ("key", True, "API key")],
)
def test_install_llm_choice(tmp_path: Path, llm: str, pinned: bool, says: str) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    out = io.StringIO()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    argv = ["--text", "install", "claude-code", "--project", "--llm", llm]
    assert main(argv, env=env, cwd=project, stdout=out, stderr=io.StringIO()) == 0
    assert says in out.getvalue()
    if llm == "host":
        assert "$1.00 a day" in out.getvalue() and "not on PATH" in out.getvalue()
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    command = hooks["Stop"][0]["hooks"][0]["command"]
    assert command.startswith("env MEMDIR_HOST_MODEL=off ") is pinned


@pytest.mark.parametrize("on_path", [False, True])
def test_install_gemini_names_the_gemini_model_and_its_price(tmp_path: Path, on_path: bool) -> None:
    home, project, bin_dir = tmp_path / "home", tmp_path / "project", tmp_path / "bin"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    bin_dir.mkdir()
    if on_path:
        (bin_dir / "gemini").write_text("#!/bin/sh\n")
        (bin_dir / "gemini").chmod(0o755)
    out = io.StringIO()
    env = {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    argv = ["--text", "install", "gemini", "--project", "--dry-run"]
    assert main(argv, env=env, cwd=project, stdout=out, stderr=io.StringIO()) == 0
    said = out.getvalue()
    assert "gemini:haiku (gemini-2.5-flash, list price $0.30 / $2.50 per million" in said
    assert "your own Gemini CLI (gemini -p)" in said and "$1.00 a day" in said
    assert ("not available here" in said) is not on_path
    assert background_spec(settings(tmp_path), "gemini") == "gemini:haiku"


def _transcript(tmp_path: Path, cwd: Path) -> Path:
    from memdir.transcripts import Transcript

    t = Transcript(tmp_path / "s.jsonl", "s-notes", str(cwd))
    t.user("Let's migrate the billing tests to the real database.")
    t.assistant("Starting with the invoice tests.", model="m")
    return t.path


def test_the_notes_worker_runs_the_model_on_the_one_notes_file(cli: Cli, tmp_path: Path) -> None:
    from memdir.adapters.hooks.notes_worker import run_notes_worker, wait_for_notes
    from memdir.session import update_notes_from_transcript

    replies = tmp_path / "replies.json"
    hc = cli.hook_context(MEMDIR_MODEL=f"scripted:{replies}")
    notes = hc.paths.session_memory_path("s-notes")
    transcript = _transcript(tmp_path, cli.cwd)
    update_notes_from_transcript(transcript, notes)  # what pre-compact does first, offline
    state = "_What is being worked on right now, what is pending, the next step._"
    edit = {"file_path": str(notes), "old_string": state, "new_string": f"{state}\n- invoices"}
    outside = {"file_path": str(tmp_path / "x.md"), "old_string": "a", "new_string": "b"}
    steps = [{"tools": [["Edit", edit], ["Edit", outside]]}, {"text": "done"}]
    replies.write_text(json.dumps(steps))
    row = run_notes_worker(hc, "s-notes", transcript)
    assert row["ok"] is True and row["changed"] is True, row
    assert "- invoices" in notes.read_text() and not (tmp_path / "x.md").exists()
    assert [r["event"] for r in hooklog.read(hc.cache_dir)] == ["notes"]
    assert wait_for_notes(hc, "s-notes", timeout=0.1)


def test_a_running_notes_worker_is_waited_for_and_not_doubled(cli: Cli, tmp_path: Path) -> None:
    import threading

    from memdir.adapters.hooks.notes_worker import (
        notes_lock,
        run_notes_worker,
        wait_for_notes,
    )

    hc = cli.hook_context(MEMDIR_HOST_MODEL="off")
    held, done = threading.Event(), threading.Event()

    def worker() -> None:  # another worker holds the lock (the lock is re-entrant per thread)
        lock = notes_lock(hc, "s-notes")
        lock.acquire()
        held.set()
        done.wait(10)
        lock.release()

    thread = threading.Thread(target=worker)
    thread.start()
    held.wait(10)
    try:
        assert not wait_for_notes(hc, "s-notes", timeout=0.2)
        row = run_notes_worker(hc, "s-notes", _transcript(tmp_path, cli.cwd))
        assert row["skipped"] == "another notes update runs"
    finally:
        done.set()
        thread.join()
    assert wait_for_notes(hc, "s-notes", timeout=0.2)
    assert run_notes_worker(hc, "s-notes", tmp_path / "s.jsonl")["skipped"] == (
        "no model for background work"
    )


def test_reinstalling_with_another_llm_choice_replaces_the_hooks(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}

    def install(*extra: str) -> list[str]:
        argv = ["--json", "install", "claude-code", "--project", *extra]
        assert main(argv, env=env, cwd=project, stdout=io.StringIO(), stderr=io.StringIO()) == 0
        hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
        return [h["command"] for g in hooks["Stop"] for h in g["hooks"]]

    (off,) = install("--llm", "off")
    (on,) = install("--llm", "host")
    assert off.startswith("env MEMDIR_HOST_MODEL=off ") and not on.startswith("env ")
    out = io.StringIO()
    argv = ["--json", "uninstall", "claude-code", "--project"]
    assert main(argv, env=env, cwd=project, stdout=out, stderr=io.StringIO()) == 0
    assert not (project / ".claude" / "settings.json").exists()


def test_a_fallback_is_told_to_the_user_once_per_session(cli: Cli, tmp_path: Path) -> None:
    from memdir.adapters.hooks.lifecycle import run_extraction
    from memdir.adapters.hooks.state import SessionStore
    from memdir.transcripts import Transcript

    missing = str(tmp_path / "no-claude")
    hc = cli.hook_context(MEMDIR_HOST_MODEL="haiku", MEMDIR_CLAUDE_CLI=missing)
    t = Transcript(tmp_path / "s.jsonl", "s-fb", str(cli.cwd))
    t.user("remember that I prefer tabs over spaces")
    t.assistant("Noted.", model="m")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", True)
        run_extraction(hc, "s-fb", t.path)
        t.user("remember that the deploy branch is release")
        t.assistant("Noted.", model="m")
        run_extraction(hc, "s-fb", t.path)
    rows = [r for r in hooklog.read(hc.cache_dir) if r["event"] == "extract"]
    assert len(rows) == 2 and all("not installed" in str(r["fallback"]) for r in rows)
    notices = SessionStore(hc.cache_dir).load("s-fb").notices
    assert sum("host model unavailable" in n for n in notices) == 1, notices


def test_session_start_waits_for_a_notes_worker_that_has_not_taken_its_lock_yet(
    cli: Cli, tmp_path: Path
) -> None:
    """Regression: pre-compact spawned the worker and returned; a quick session-start saw no lock
    yet, did not wait, and re-injected the notes before the model's update (a race in CI)."""
    from memdir.adapters.hooks.notes_worker import (
        mark_notes_pending,
        run_notes_worker,
        wait_for_notes,
    )

    hc = cli.hook_context(MEMDIR_HOST_MODEL="off")
    mark_notes_pending(hc, "s-notes")  # spawned, not started: no lock is held yet
    assert not wait_for_notes(hc, "s-notes", timeout=0.2)
    run_notes_worker(hc, "s-notes", _transcript(tmp_path, cli.cwd))  # the worker ends
    assert wait_for_notes(hc, "s-notes", timeout=0.2)
