"""Transcript entries to messages: skipped entries, torn lines, compact boundaries on resume."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memdir.session.convert import append_compaction, load_transcript, messages_from_entries
from memdir.session.messages import ChatMessage, api_shape_problems, repair, to_api
from memdir.transcripts import Transcript
from tests.session.support import SID, coding_session


def test_real_shaped_transcript_loads_valid(tmp_path: Path) -> None:
    t = coding_session(tmp_path / "t.jsonl")
    messages, issues = load_transcript(t.path)
    assert issues == []
    assert api_shape_problems(to_api(messages)) == []
    thinking = [m for m in messages if any(b["type"] == "thinking" for b in m.content)]
    assert thinking and thinking[0].message_id
    assert not any("sub-agent prompt" in m.text for m in messages)


def test_torn_lines_unknown_entries_and_blocks_are_reported(tmp_path: Path) -> None:
    t = coding_session(tmp_path / "t.jsonl")
    with t.path.open("a") as fh:
        fh.write(
            '{"type": "user", "message": {"role": "user", "content": [{"type": "mystery"}]}}\n'
        )
        fh.write('{"type": "assistant", "message": "not an object"}\n')
        fh.write('{"type": "user", "uuid": "u-torn", "message": {"role": "us')
    messages, issues = load_transcript(t.path)
    assert any("torn or corrupt" in i for i in issues)
    assert any("mystery" in i for i in issues)
    assert any("without a message object" in i for i in issues)
    assert api_shape_problems(to_api(repair(messages)[0])) == []


def test_orphan_results_and_empty_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert load_transcript(empty) == ([], [])
    entries = [
        {
            "type": "user",
            "uuid": "a",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}],
            },
        },
    ]
    messages, _ = messages_from_entries(entries)
    fixed, issues = repair(messages)
    assert issues and api_shape_problems(to_api(fixed)) == []


def test_resume_after_compaction_sees_what_the_model_saw(tmp_path: Path) -> None:
    t = Transcript(tmp_path / f"{SID}.jsonl", SID, "/w")
    for i in range(4):
        t.user(f"question {i}")
        t.assistant(f"answer {i}", model="m")
    before, _ = load_transcript(t.path)
    kept = before[-2:]
    boundary = ChatMessage.boundary(pre_tokens=500)
    summary = ChatMessage.user("the summary", kind="compact_summary", is_meta=True)
    append_compaction(t, boundary, [summary], kept=kept)
    t.user("question 5")
    after, issues = load_transcript(t.path)
    assert issues == []
    assert [m.kind for m in after[:2]] == ["compact_boundary", "compact_summary"]
    assert [m.text for m in after[1:]] == ["the summary", "question 3", "answer 3", "question 5"]
    assert after[0].uuid == boundary.uuid and after[1].uuid == summary.uuid
    assert after[0].metadata["pre_tokens"] == 500
    raw = t.path.read_text().splitlines()
    assert '"subtype":"compact_boundary"' in raw[-3] and '"parentUuid":null' in raw[-3]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image", "weird"])},
    optional={
        "text": _json,
        "id": _json,
        "name": _json,
        "input": _json,
        "tool_use_id": _json,
        "content": _json,
    },
)
_entry = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "summary", "progress"])},
    optional={
        "uuid": st.text(min_size=1, max_size=4),
        "subtype": st.just("compact_boundary"),
        "isSidechain": st.booleans(),
        "isCompactSummary": st.booleans(),
        "compactMetadata": _json,
        "message": st.one_of(
            _json,
            st.fixed_dictionaries(
                {
                    "role": st.sampled_from(["user", "assistant"]),
                    "content": st.one_of(st.text(max_size=30), st.lists(_block, max_size=4)),
                },
                optional={"id": st.text(max_size=4)},
            ),
        ),
    },
)


@settings(max_examples=500)
@given(st.lists(st.one_of(_entry, _entry, _json), max_size=12))
def test_any_entries_load_without_raising_and_repair_to_valid(entries: list[object]) -> None:
    messages, issues = messages_from_entries(entries)  # type: ignore[arg-type]
    assert isinstance(issues, list)
    fixed, _ = repair(messages)
    if any(not m.is_boundary for m in fixed):
        assert api_shape_problems(to_api(fixed)) == []


def test_malformed_blocks_found_by_fuzzing_are_skipped() -> None:
    # regressions: a text block whose text is not a string once went through to the API
    entries = [
        {
            "type": "user",
            "uuid": "0",
            "message": {"role": "user", "content": [{"type": "text", "text": None}]},
        },
        {
            "type": "user",
            "uuid": "1",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "x", "content": {"not": "text"}}
                ],
            },
        },
        {
            "type": "assistant",
            "uuid": "2",
            "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": "nope"}],
            },
        },
    ]
    messages, issues = messages_from_entries(entries)
    assert sum("malformed" in i for i in issues) == 2
    assert [m.uuid for m in messages] == ["1"]
    assert messages[0].content[0]["content"] == '{"not": "text"}'


def test_a_tool_result_inside_an_assistant_entry_is_kept_as_text() -> None:
    # found by fuzzing the merged reply rebuild: an assistant entry holding a tool_result block
    entries = [
        {
            "type": "assistant",
            "uuid": "a",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "", "content": "42 rows"}],
            },
        }
    ]
    messages, _ = messages_from_entries(entries)  # type: ignore[arg-type]
    fixed, issues = repair(messages)
    assert api_shape_problems(to_api(fixed)) == []
    assert any("42 rows" in str(m.content) for m in fixed)
    assert any("kept as text" in i for i in issues)
