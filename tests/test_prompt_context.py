"""Recall context: the transcript's tail, bounded; the prompt dominates the ranking."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memdir import prompt_context as ctx_mod
from memdir.prompt_context import RecallContext, from_transcript
from memdir.recall.embed import MiniLMEmbedder
from memdir.recall.local import LocalSelector
from memdir.store import MemoryStore


def _entry(kind: str, content: object, **extra: object) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}, **extra})


def test_reads_recent_turns_files_and_tools(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        _entry("user", "first question about something long ago"),
        "not json",
        json.dumps({"type": "summary", "summary": "ignored"}),
        _entry(
            "assistant",
            [
                {"type": "text", "text": "Let me look at the manifest."},
                {
                    "type": "tool_use",
                    "id": "1",
                    "name": "Read",
                    "input": {"file_path": "admin/package.json"},
                },
                {"type": "tool_use", "id": "2", "name": "Edit", "input": {"path": 3}},
            ],
        ),
        _entry("user", "side chain", isSidechain=True),
    ]
    path.write_text("\n".join(lines) + "\n")
    found = from_transcript(path)
    assert found.files == ("admin/package.json",)
    assert found.tools == ("Read", "Edit")
    assert "manifest" in found.recent and "side chain" not in found.recent
    assert found.activity() == "admin package json Read Edit"


def test_bounded_whatever_the_transcript_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ctx_mod, "TAIL_BYTES", 4096)
    path = tmp_path / "t.jsonl"
    turns = [_entry("user", f"turn {i} " + "word " * 50) for i in range(500)]
    path.write_text("\n".join(turns))
    found = from_transcript(path)
    assert len(found.recent.split()) <= ctx_mod.MAX_WORDS
    assert "turn 499" in found.recent and "turn 0 " not in found.recent


@pytest.mark.parametrize("kind", ["missing", "fifo", "directory", "none"])
def test_unreadable_transcripts_are_an_empty_context(tmp_path: Path, kind: str) -> None:
    path: Path | None = tmp_path / "t.jsonl"
    assert path is not None
    if kind == "fifo":
        os.mkfifo(path)  # must not block the hook
    elif kind == "directory":
        path.mkdir()
    elif kind == "none":
        path = None
    assert from_transcript(path).empty


def test_from_json_rebounds_a_daemon_request() -> None:
    raw = {"recent": "w " * 1000, "files": ["a", 3, "a", "b"] + ["f"] * 3, "tools": "Bash"}
    found = RecallContext.from_json(raw)
    assert len(found.recent.split()) == ctx_mod.MAX_WORDS
    assert found.files == ("a", "b", "f") and found.tools == ()
    assert RecallContext.from_json("nonsense").empty


def seed_admin_rule(store: MemoryStore) -> None:
    """A package-manager rule a dependency request shares no word with, and an unrelated note
    (the runtime and hook tests use the same pair)."""
    store.create(
        "Admin UI package manager",
        "The admin UI uses yarn workspaces; never run npm there",
        "feedback",
        "yarn workspace admin add <pkg>",
    )
    store.create("Lunch", "The team eats together at noon on Fridays", "project", "")


def test_context_helps_but_never_surfaces_on_its_own(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    seed_admin_rule(store)
    selector = LocalSelector(store.root, tmp_path / "cache", embedder=MiniLMEmbedder())
    # One word of the memory's dependency situation ("module") and no class of task the request
    # names on its own (memdir.recall.intents): the edited package.json is the second word.
    query = "Which date-picker module is best?"
    assert selector.select_sync(query, None) == []
    edited = RecallContext(files=("admin/package.json",), tools=("Edit",))
    picked = selector.select_sync(query, None, context=edited)
    assert [s.filename for s in picked] == ["admin_ui_package_manager.md"]
    # The context alone (an unrelated prompt after the same edit) does not surface it.
    assert selector.select_sync("Write a haiku about autumn", None, context=edited) == []


def test_injected_reminders_are_not_context(tmp_path: Path) -> None:
    """Last turn's recalled memory (a <system-reminder> block) must not recall itself again."""
    path = tmp_path / "t.jsonl"
    reminder = "<system-reminder>\nLunch is at noon on Fridays\n</system-reminder>"
    blocks = [{"type": "text", "text": "add a date picker"}, {"type": "text", "text": reminder}]
    path.write_text(_entry("user", blocks) + "\n")
    found = from_transcript(path)
    assert found.recent == "add a date picker"
