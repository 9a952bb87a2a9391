"""``scripted:<file>``: replies replayed from a JSON file, and clear errors for bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.errors import ProviderConfigError
from memdir.llm.base import CompletionRequest, Message
from memdir.llm.factory import provider_from_spec
from memdir.llm.script_file import load_script
from memdir.llm.scripted import ScriptExhausted

REQUEST = CompletionRequest(system="", messages=[Message("user", "hi")])


async def test_every_reply_shape_in_order_then_repeat(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    steps = [
        {"text": "hello"},
        {"tool": "Read", "input": {"file_path": "/x"}, "text": "reading"},
        {"tools": [["Grep", {"pattern": "a"}], ["Glob", {"pattern": "*.md"}]]},
        {"json": {"selected_memories": ["a.md"]}},
    ]
    path.write_text(json.dumps({"steps": steps, "repeat": {"text": "again"}}), "utf-8")
    provider = provider_from_spec(f"scripted:{path}", {})
    first = await provider.complete(REQUEST)
    assert first.text == "hello" and not first.tool_calls
    second = await provider.complete(REQUEST)
    assert second.text == "reading" and second.tool_calls[0].name == "Read"
    third = await provider.complete(REQUEST)
    assert [c.name for c in third.tool_calls] == ["Grep", "Glob"]
    assert (await provider.complete(REQUEST)).parsed_json == {"selected_memories": ["a.md"]}
    assert (await provider.complete(REQUEST)).text == "again"
    assert (await provider.complete(REQUEST)).text == "again"


async def test_a_plain_list_runs_out(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('[{"text": "only"}]', "utf-8")
    provider = load_script(path)
    assert (await provider.complete(REQUEST)).text == "only"
    with pytest.raises(ScriptExhausted):
        await provider.complete(REQUEST)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        ("{not json", "cannot read"),
        ('{"steps": {"text": 1}}', "expected a list"),
        ('[{"text": 5}]', "step 1: 'text' must be a string"),
        ('[{"tools": [["Read"]]}]', "step 1: tool calls must be"),
        ('["just text"]', "step 1: a reply must be a JSON object"),
    ],
)
def test_bad_files_name_the_problem(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content, "utf-8")
    with pytest.raises(ProviderConfigError, match=message) as caught:
        load_script(path)
    assert str(path) in str(caught.value)
