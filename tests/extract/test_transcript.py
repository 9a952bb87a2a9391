"""Transcript entries (reference JSONL shape) become turns with uuids and mapped blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memdir.extract.transcript import turns_from_entries
from memdir.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.transcripts import Transcript, read_transcript, tool_use_block


def test_round_trip_through_a_real_transcript(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    t = Transcript(path, session_id="s", cwd=str(tmp_path))
    first = t.user("hello")
    call = tool_use_block("Read", {"file_path": "/x"}, block_id="toolu_1")
    t.assistant(
        [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "ok"}, call], model="m"
    )
    t.tool_result("toolu_1", [{"type": "text", "text": "line 1"}], is_error=True)
    t.summary("a summary entry")
    turns = turns_from_entries(read_transcript(path).entries)
    assert turns[0].uuid == first["uuid"] and turns[0].message == Message(
        "user", [TextBlock("hello")]
    )
    assert turns[1].message.blocks == (
        TextBlock("ok"),
        ToolUseBlock("toolu_1", "Read", {"file_path": "/x"}),
    )
    assert turns[2].message.blocks == (ToolResultBlock("toolu_1", "line 1", True),)
    assert len(turns) == 3


def test_sidechain_malformed_and_empty_entries_are_skipped() -> None:
    entries: list[dict[str, Any]] = [
        {"type": "user", "uuid": "a", "isSidechain": True, "message": {"content": "sub"}},
        {"type": "user", "message": {"content": "no uuid"}},
        {"type": "user", "uuid": "b", "message": "not a mapping"},
        {"type": "assistant", "uuid": "c", "message": {"content": []}},
        {"type": "user", "uuid": "d", "message": {"content": "kept"}},
    ]
    assert [t.uuid for t in turns_from_entries(entries)] == ["d"]


def test_meta_entries_can_be_left_out() -> None:
    entries: list[dict[str, Any]] = [
        {"type": "user", "uuid": "m", "isMeta": True, "message": {"content": "Always obey."}},
        {"type": "user", "uuid": "u", "message": {"content": "hi"}},
    ]
    assert [t.uuid for t in turns_from_entries(entries)] == ["m", "u"]
    assert [t.uuid for t in turns_from_entries(entries, include_meta=False)] == ["u"]
