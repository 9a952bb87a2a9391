"""Each host's past sessions of one project, and reading them through the dialect's reader."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from memdir.adapters.hosts import dialect
from memdir.adapters.hosts.sessions import DialectSource
from memdir.errors import HookInputError
from tests.backfill.sessions import claude_session, codex_rollout, gemini_session
from tests.fifo import returns_promptly


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "proj"
    (root / "pkg").mkdir(parents=True)
    return root


def source(host: str, home: Path, project: Path) -> DialectSource:
    return DialectSource(dialect(host), {"HOME": str(home)}, project)


def test_claude_code_lists_the_root_and_its_subdirectories_never_a_sibling(
    home: Path, project: Path, tmp_path: Path
) -> None:
    root = claude_session(home, project, [("user", "hi")])
    sub = claude_session(home, project / "pkg", [("user", "hi")])
    sibling_dir = project.parent / "proj-two"  # sanitises with the root's name as its prefix
    sibling = claude_session(home, sibling_dir, [("user", "hi")])
    other = claude_session(home, tmp_path / "elsewhere", [("user", "hi")])
    (root.parent / root.stem / "subagents").mkdir(parents=True)  # a sub-agent dir: not a session
    found = source("claude-code", home, project).transcripts()
    assert sorted(found) == sorted([root, sub])
    assert sibling not in found and other not in found


def test_codex_lists_rollouts_whose_session_ran_in_the_project(
    home: Path, project: Path, tmp_path: Path
) -> None:
    ours = codex_rollout(home, project)
    in_sub = codex_rollout(home, project / "pkg")
    codex_rollout(home, tmp_path / "elsewhere")
    junk = ours.with_name("rollout-junk.jsonl")
    junk.write_bytes(b"\xff not json\n")
    found = source("codex", home, project).transcripts()
    assert sorted(found) == sorted([ours, in_sub])


def test_gemini_lists_the_slug_dirs_that_belong_to_the_project_and_the_old_hash_dir(
    home: Path, project: Path, tmp_path: Path
) -> None:
    ours = gemini_session(home, project)
    gemini_session(home, tmp_path / "elsewhere" / "other")
    legacy_dir = home / ".gemini" / "tmp" / hashlib.sha256(str(project).encode()).hexdigest()
    (legacy_dir / "chats").mkdir(parents=True)
    legacy = legacy_dir / "chats" / "session-2026-01-01T00-00-abcd1234.json"
    legacy.write_text(json.dumps({"messages": []}))
    assert sorted(source("gemini", home, project).transcripts()) == sorted([ours, legacy])


@pytest.mark.parametrize(
    ("host", "make", "said"),
    [
        ("codex", codex_rollout, "Remember that CI uses the ubuntu-24.04 image."),
        ("gemini", gemini_session, "Remember that CI jobs run on the ubuntu-24.04 image."),
    ],
)
def test_each_host_is_read_by_its_own_dialect(
    home: Path, project: Path, host: str, make: object, said: str
) -> None:
    path = make(home, project)  # type: ignore[operator]
    entries = source(host, home, project).read(path)
    texts = [
        b["text"]
        for e in entries
        if e["type"] == "user"
        for b in e["message"]["content"]
        if b["type"] == "text"
    ]
    assert texts and texts[0].startswith(said)


def test_a_symlink_out_of_the_hosts_dirs_is_refused_one_inside_is_read(
    home: Path, project: Path, tmp_path: Path
) -> None:
    real = claude_session(home, project, [("user", "Remember that the secret plan is X.")])
    outside = tmp_path / "notes.jsonl"
    outside.write_bytes(real.read_bytes())
    link_out = real.with_name("00000000-0000-4000-8000-000000000001.jsonl")
    link_out.symlink_to(outside)
    link_in = real.with_name("00000000-0000-4000-8000-000000000002.jsonl")
    link_in.symlink_to(real)
    src = source("claude-code", home, project)
    with pytest.raises(HookInputError, match="symlink that leaves"):
        src.read(link_out)
    assert src.read(link_in) == src.read(real)


def test_a_fifo_is_refused_at_once(home: Path, project: Path) -> None:
    real = claude_session(home, project, [("user", "hi")])
    fifo = real.with_name("00000000-0000-4000-8000-00000000000f.jsonl")
    os.mkfifo(fifo)
    src = source("claude-code", home, project)
    assert fifo in returns_promptly(src.transcripts, [fifo])  # listed, to be reported
    with pytest.raises(HookInputError, match="not a regular file"):
        returns_promptly(lambda: src.read(fifo), [fifo])


def test_a_dialect_without_the_listing_lists_nothing(home: Path, project: Path) -> None:
    class Bare:
        name = "bare"

    assert DialectSource(Bare(), {}, project).transcripts() == []  # type: ignore[arg-type]


def test_session_ids_are_the_ones_the_hosts_hooks_send(home: Path, project: Path) -> None:
    from memdir.adapters.hosts.sessions import session_id_of

    claude = claude_session(home, project, [("user", "hi")])
    assert session_id_of("claude-code", claude) == claude.stem
    rollout = codex_rollout(home, project)
    assert session_id_of("codex", rollout) == rollout.stem[-36:]
    gemini = gemini_session(home, project)
    assert session_id_of("gemini", gemini) == "4eeefae4-ea12-4998-b0b7-01b1a2155acd"
    assert session_id_of("claude-code", project / "notes.jsonl") is None
