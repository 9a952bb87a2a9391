"""The Gemini fixtures stay true to the real CLI: the synthetic session files use only the record
shapes (and keys) the recorded one has, and every recorded hook input carries the base fields.

``session/recorded.jsonl`` and ``hook-input/`` come from the real CLI
(``record_gemini_fixtures.py``); the synthetic files are written by hand for a reader's regression
tests, so they could drift from what the CLI writes. No CLI runs here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hosts" / "gemini"
SYNTHETIC = sorted((FIXTURES / "session" / "synthetic").glob("*.jsonl"))
BASE = {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp"}
EVENT_FIELDS = {
    "SessionStart": {"source"},
    "BeforeAgent": {"prompt"},
    "AfterAgent": {"prompt", "prompt_response", "stop_hook_active"},
    "PreCompress": {"trigger"},
    "SessionEnd": {"reason"},
    "BeforeTool": {"tool_name", "tool_input", "mcp_context"},
    "AfterTool": {"tool_name", "tool_input", "tool_response", "mcp_context"},
}
# Shapes in the CLI's source that the recording cannot show headlessly (interactive /rewind, binary
# "info" messages, error/warning records, subagent sessions).
NOT_RECORDED = {"rewind", "message:info", "message:error", "message:warning"}


def kind(record: dict[str, Any]) -> str:
    if "$rewindTo" in record:
        return "rewind"
    if "$set" in record:
        return "set"
    if "id" in record:
        return f"message:{record['type']}"
    return "header"


def records(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text().splitlines():
        if line.strip():
            yield json.loads(line)


def shapes(path: Path) -> dict[str, set[str]]:
    """Every key each record kind uses in the file (``$set`` by the keys it sets)."""
    seen: dict[str, set[str]] = {}
    for record in records(path):
        keys = set(record["$set"]) if "$set" in record else set(record)
        seen.setdefault(kind(record), set()).update(keys)
    return seen


RECORDED = shapes(FIXTURES / "session" / "recorded.jsonl")


@pytest.mark.parametrize("path", SYNTHETIC, ids=lambda p: p.name)
def test_a_synthetic_session_uses_only_recorded_shapes(path: Path) -> None:
    for name, keys in shapes(path).items():
        if name in NOT_RECORDED:
            continue
        assert name in RECORDED, f"{path.name}: no {name} record in the recording"
        # A subagent header also records its workspace "directories" (source: initialize()).
        extra = keys - RECORDED[name] - ({"directories"} if name == "header" else set())
        assert not extra, f"{path.name}: {name} keys the CLI never wrote: {sorted(extra)}"


def test_every_recorded_hook_input_has_the_base_and_event_fields() -> None:
    inputs = sorted((FIXTURES / "hook-input").glob("*.json"))
    assert {p.name.split(".")[0] for p in inputs} == set(EVENT_FIELDS)
    for path in inputs:
        sample = json.loads(path.read_text())
        stdin, event = sample["stdin"], sample["stdin"]["hook_event_name"]
        assert set(stdin) == BASE | EVENT_FIELDS[event], path.name
        assert stdin["transcript_path"].endswith(".jsonl")
        assert sample["env"]["GEMINI_SESSION_ID"] == stdin["session_id"]
        assert sample["env"]["GEMINI_PROJECT_DIR"] == stdin["cwd"]
