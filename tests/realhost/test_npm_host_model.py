"""Zero-config inside pi, Copilot CLI, Qwen Code and Cline, as a new user meets it: the CLI on
PATH, no MEMDIR_MODEL. ``memdir install <host> --project``, then a turn in which the user corrects
the agent: the turn-end extraction worker runs the user's own CLI headless (``pi -p``,
``copilot``, ``qwen``, ``cline``) as a plain completer; the fake model answers with a tool call in
text, memdir runs it inside the memory dir, the call lands in the cost ledger, no memdir hook
runs in the child and the child leaves no session behind for ``memdir backfill`` to read back."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memdir.extract.prompt import EXTRACTION_SYSTEM
from tests.realhost.fake_openai import FakeOpenAI, LoggedRequest
from tests.realhost.host import wait_for
from tests.realhost.npm_host import KINDS, NpmHost

MODEL_HOSTS = ("cline", "copilot", "pi", "qwen")
# Copilot CLI hands its hooks neither COPILOT_PROVIDER_* nor API keys: a BYOK provider set in
# the environment (the only login possible offline) never reaches memdir's worker
HOOK_MODEL_HOSTS = ("cline", "pi", "qwen")
FEEDBACK = """---
name: real database in tests
description: never mock the database in these tests; use the real test database
type: feedback
---
Don't mock the database in these tests.

**Why:** the user corrected this explicitly.
**How to apply:** integration tests use the real test database fixture.
"""
CORRECTION = "no, don't mock the database in these tests"


def npm_host_of(name: str, api: FakeOpenAI, root: Path) -> NpmHost:
    """The sandboxed user of host ``name``, in a git repository (the CLI must be installed)."""
    kind = KINDS[name]
    cli = kind.find_cli()
    if cli is None:
        pytest.fail(kind.missing, pytrace=False)
    host = NpmHost(kind=kind, cli=cli, api=api, root=root)
    subprocess.run(["git", "-C", str(host.project), "init", "-q"], check=True)
    return host


@pytest.fixture(params=HOOK_MODEL_HOSTS)
def model_host(
    request: pytest.FixtureRequest, fake_openai: FakeOpenAI, tmp_path: Path
) -> Iterator[NpmHost]:
    host = npm_host_of(request.param, fake_openai, tmp_path)
    try:
        yield host
    finally:
        host.stop_daemon()


def hook_log(host: NpmHost) -> list[dict[str, Any]]:
    out = host.memdir("--json", "hook", "log", "--full", "--limit", "1000").stdout
    return list(json.loads(out))


def extract_rows(host: NpmHost) -> list[dict[str, Any]]:
    return [r for r in hook_log(host) if r.get("event") == "extract"]


def child_requests(host: NpmHost) -> list[LoggedRequest]:
    """The model requests memdir's child made: memdir's extraction prompt in them."""
    return [r for r in host.api.model_requests() if EXTRACTION_SYSTEM in r.text()]


def sessions_on_disk(host: NpmHost) -> set[str]:
    """Every session file the host keeps under the user's home, wherever the host keeps them."""
    roots = [host.home / ".pi", host.home / ".copilot", host.home / ".qwen", host.home / ".cline"]
    return {
        str(p)
        for root in roots
        for p in root.rglob("*")
        if (p.is_file() and p.suffix in (".jsonl", ".json") and "session" in str(p).lower())
        or p.parent.name == "chats"
    }


def test_a_correction_becomes_a_memory_written_through_the_hosts_own_cli(
    model_host: NpmHost,
) -> None:
    host = model_host
    installed = host.memdir("--text", "install", host.kind.name, "--project").stdout
    assert f"{host.kind.name}:haiku" in installed and "not on PATH" not in installed, installed
    host.trust_project()
    memory_dir = host.memory_dir()
    target = memory_dir / "feedback_real_database.md"
    call = {"tool": "Write", "input": {"file_path": str(target), "content": FEEDBACK}}
    host.api.script(
        "Understood — I will use the real database in these tests.",  # the user's session
        f"I will save this as feedback.\n{json.dumps(call)}",  # memdir's child: a call in text
        '{"answer": "Saved the feedback memory."}',
    )
    host.prompt(CORRECTION)
    sessions = sessions_on_disk(host)
    wait_for(lambda: bool(extract_rows(host)), "the extraction worker", limit=180)

    (row,) = extract_rows(host)
    assert row["ok"] is True and row.get("fallback") is None, (row, hook_log(host))
    assert row["written"] == [str(target)]
    assert target.read_text() == FEEDBACK
    assert "feedback_real_database.md" in (memory_dir / "MEMORY.md").read_text()

    child = child_requests(host)
    assert len(child) == 2, [r.text()[:80] for r in host.api.model_requests()]
    for request in child:
        if host.kind.name != "cline":  # Cline offers its tools and refuses every call headless
            assert not request.body.get("tools"), request.body.get("tools")  # no tool of its own
        assert "# Memory (memdir)" not in request.text()  # no memdir hook ran in the child
    assert CORRECTION in child[0].text()
    assert '"tool": "Write"' in child[1].text()  # its own call, written back as it made it
    assert "Tool result" in child[1].text()

    # no recursion: every hook row belongs to the user's one session
    rows = hook_log(host)
    assert len({r.get("session") for r in rows if r.get("session")}) == 1, rows
    # the child left no session of its own where backfill reads the host's
    assert sessions_on_disk(host) == sessions
    # the call is booked where the user looks
    status = json.loads(host.memdir("--json", "status").stdout)
    assert status["host_model"]["today"]["calls"] == 2, status["host_model"]
    assert not host.escapes()


@pytest.mark.parametrize("name", MODEL_HOSTS)
def test_with_the_cli_failing_the_offline_rules_still_write(
    name: str, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    host = npm_host_of(name, fake_openai, tmp_path)
    try:
        host.memdir("install", name, "--project")
        host.trust_project()
        # the session runs the real CLI; the worker finds a broken one first on its PATH
        broken = tmp_path / "broken"
        broken.mkdir()
        (broken / host.kind.binary).write_text("#!/bin/sh\necho 'out of cheese' >&2; exit 1\n")
        (broken / host.kind.binary).chmod(0o755)
        host.extra_env[f"MEMDIR_{name.upper()}_CLI"] = str(broken / host.kind.binary)
        host.prompt("remember that I prefer tabs over spaces")
        wait_for(lambda: bool(extract_rows(host)), "the extraction worker", limit=180)
        (row,) = extract_rows(host)
        assert row["ok"] is True
        assert isinstance(row["fallback"], str) and "out of cheese" in row["fallback"], row
        written = [Path(p) for p in row["written"]]
        assert written and "tabs" in written[0].read_text()
    finally:
        host.stop_daemon()


def test_copilot_p_as_memdirs_model_with_a_byok_provider(
    fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where Copilot's BYOK environment is visible (the user's shell: ``memdir backfill``,
    ``memdir extract --llm``), ``copilot`` serves as memdir's model: no tool of its own offered,
    memdir's call read back from text, nothing kept in the user's Copilot home."""
    import asyncio

    import memdir.llm.base
    from memdir.llm import copilot_cli
    from memdir.llm.base import CompletionRequest, Message, ToolSpec
    from memdir.llm.ledger import CostLedger

    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", True)  # a fake API behind it
    host = npm_host_of("copilot", fake_openai, tmp_path)
    before = sorted(str(p) for p in (host.home / ".copilot").rglob("*"))
    fake_openai.script(
        'Saving it.\n[{"tool": "Write", "input": {"file_path": "a.md", "content": "x"}}]'
    )
    ledger = CostLedger(tmp_path / "ledger.jsonl", budget_usd=1.0)
    env = {**host.env, "MEMDIR_COPILOT_CLI": str(host.cli)}
    provider = copilot_cli.HostCliProvider("default", env=env, ledger=ledger)
    write = ToolSpec("Write", "Write a file.", {"type": "object"})
    request = CompletionRequest(
        system=EXTRACTION_SYSTEM, messages=[Message("user", CORRECTION)], tools=(write,)
    )
    completion = asyncio.run(provider.complete(request))
    assert [(c.name, c.input) for c in completion.tool_calls] == [
        ("Write", {"file_path": "a.md", "content": "x"})
    ]
    (sent,) = fake_openai.model_requests()
    assert not sent.body.get("tools")  # Copilot's own tools all switched off
    assert EXTRACTION_SYSTEM in sent.text() and CORRECTION in sent.text()
    (row,) = ledger.rows()
    assert row["host"] == "copilot" and row["error"] is None and row["cost_usd"] > 0
    assert sorted(str(p) for p in (host.home / ".copilot").rglob("*")) == before
    assert not host.escapes()


def test_copilot_with_only_a_byok_environment_falls_back_offline_and_says_why(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    """Copilot CLI strips COPILOT_PROVIDER_* from its hooks' environment: memdir's worker
    cannot log in the way the session did. It must say so, and still save the lesson."""
    host = npm_host_of("copilot", fake_openai, tmp_path)
    try:
        installed = host.memdir("--text", "install", "copilot", "--project").stdout
        assert "BYOK" in installed  # the install says it up front
        host.trust_project()
        host.prompt("remember that I prefer tabs over spaces")
        wait_for(lambda: bool(extract_rows(host)), "the extraction worker", limit=180)
        (row,) = extract_rows(host)
        assert row["ok"] is True
        assert "authentication" in str(row["fallback"]).lower(), row
        written = [Path(p) for p in row["written"]]
        assert written and "tabs" in written[0].read_text()
    finally:
        host.stop_daemon()


def test_clines_child_runs_none_of_its_own_tools(
    fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cline has no switch that drops its tools: with ``--auto-approve false`` headless every
    call is refused, and plan mode refuses changes besides. A model that calls its shell tool
    anyway (a hostile transcript asked it to) changes nothing, and memdir gets the text."""
    import asyncio

    import memdir.llm.base
    from memdir.llm import cline_cli
    from memdir.llm.base import CompletionRequest, Message, ToolSpec
    from tests.realhost.fake_openai import FunctionCall, Reply

    monkeypatch.setattr(memdir.llm.base, "ALLOW_REAL_PROVIDERS", True)  # a fake API behind it
    host = npm_host_of("cline", fake_openai, tmp_path)
    marker = tmp_path / "ran"
    read = FunctionCall("read_files", {"file_paths": [str(host.home / ".cline")]})
    shell = FunctionCall("run_commands", {"commands": [f"echo x > {marker}"]})
    fake_openai.script(Reply(calls=(shell, read)), '{"answer": "Nothing to save."}')
    provider = cline_cli.HostCliProvider(
        "default", env={**host.env, "MEMDIR_CLINE_CLI": str(host.cli)}
    )
    write = ToolSpec("Write", "Write a file.", {"type": "object"})
    request = CompletionRequest(
        system=EXTRACTION_SYSTEM, messages=[Message("user", CORRECTION)], tools=(write,)
    )
    completion = asyncio.run(provider.complete(request))
    assert completion.text == "Nothing to save." and not completion.tool_calls
    assert not marker.exists()
    (_, second) = fake_openai.model_requests()
    refused = [m for m in second.body["messages"] if m.get("role") == "tool"]
    assert len(refused) == 2 and all("requires approval" in m["content"] for m in refused)
