"""Fixtures for the real-host suite: the pinned Claude Code, Codex and Gemini CLIs against fake
APIs on loopback.

A missing CLI is a failure with the install command in the message, never a silent skip: CI
installs it (``scripts/install-test-deps.sh``), so its absence means the suite did not run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.realhost import codex_host, gemini_host, opencode_host
from tests.realhost.codex_host import CodexHost
from tests.realhost.fake_gemini import FakeGemini
from tests.realhost.fake_openai import FakeOpenAI
from tests.realhost.fakeapi import FakeAnthropic
from tests.realhost.gemini_host import GeminiHost
from tests.realhost.host import MISSING_CLI, ClaudeHost, find_cli
from tests.realhost.npm_host import KINDS, NpmHost
from tests.realhost.opencode_host import OpenCodeHost


@pytest.fixture(scope="session")
def claude_cli() -> Path:
    cli = find_cli()
    if cli is None:
        pytest.fail(MISSING_CLI, pytrace=False)
    return cli


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as api:
        yield api


@pytest.fixture
def host(claude_cli: Path, fake_api: FakeAnthropic, tmp_path: Path) -> Iterator[ClaudeHost]:
    h = ClaudeHost(cli=claude_cli, api=fake_api, root=tmp_path)
    try:
        yield h
    finally:
        h.stop_daemon()


@pytest.fixture
def installed(host: ClaudeHost) -> ClaudeHost:
    """A host whose project has memdir installed (hooks and MCP server), the README's way."""
    host.install()
    return host


@pytest.fixture(scope="session")
def codex_cli() -> Path:
    cli = codex_host.find_cli()
    if cli is None:
        pytest.fail(codex_host.MISSING_CLI, pytrace=False)
    return cli


@pytest.fixture(scope="session")
def gemini_cli() -> Path:
    cli = gemini_host.find_cli()
    if cli is None:
        pytest.fail(gemini_host.MISSING_CLI, pytrace=False)
    return cli


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as api:
        yield api


@pytest.fixture
def fake_gemini() -> Iterator[FakeGemini]:
    with FakeGemini() as api:
        yield api


@pytest.fixture
def codex(codex_cli: Path, fake_openai: FakeOpenAI, tmp_path: Path) -> Iterator[CodexHost]:
    """A sandboxed Codex user whose model is ``fake_openai``; nothing it sends leaves loopback."""
    h = CodexHost(cli=codex_cli, api=fake_openai, root=tmp_path)
    try:
        yield h
    finally:
        h.stop_daemon()


@pytest.fixture
def gemini(gemini_cli: Path, fake_gemini: FakeGemini, tmp_path: Path) -> Iterator[GeminiHost]:
    """A sandboxed user of the real Gemini CLI (``gemini -p``) talking to ``fake_gemini``."""
    h = GeminiHost(cli=gemini_cli, api=fake_gemini, root=tmp_path)
    try:
        yield h
    finally:
        h.stop_daemon()


@pytest.fixture(scope="session")
def opencode_cli() -> Path:
    cli = opencode_host.find_cli()
    if cli is None:
        pytest.fail(opencode_host.MISSING_CLI, pytrace=False)
    return cli


@pytest.fixture
def opencode(opencode_cli: Path, fake_openai: FakeOpenAI, tmp_path: Path) -> Iterator[OpenCodeHost]:
    """A sandboxed user of the real OpenCode CLI (``opencode run``) talking to ``fake_openai``."""
    h = OpenCodeHost(cli=opencode_cli, api=fake_openai, root=tmp_path)
    try:
        yield h
    finally:
        h.stop_daemon()


@pytest.fixture(params=sorted(KINDS))
def npm_host(
    request: pytest.FixtureRequest, fake_openai: FakeOpenAI, tmp_path: Path
) -> Iterator[NpmHost]:
    """A sandboxed user of each npm host that speaks OpenAI (Qwen Code, Copilot CLI)."""
    kind = KINDS[request.param]
    cli = kind.find_cli()
    if cli is None:
        pytest.fail(kind.missing, pytrace=False)
    h = NpmHost(kind=kind, cli=cli, api=fake_openai, root=tmp_path)
    try:
        yield h
    finally:
        h.stop_daemon()
