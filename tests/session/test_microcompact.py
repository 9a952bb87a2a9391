"""Microcompact: compactable results only, newest N kept, pairs untouched, time trigger."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from memdir.session.messages import ChatMessage, api_shape_problems, to_api
from memdir.session.microcompact import CLEARED, microcompact, time_triggered
from tests.session.strategies import conversations


def _pair(i: int, name: str) -> list[ChatMessage]:
    use = {"type": "tool_use", "id": f"t{i}", "name": name, "input": {}}
    res = {
        "type": "tool_result",
        "tool_use_id": f"t{i}",
        "content": f"output {i} " * 50,
        "is_error": i == 0,
    }
    return [ChatMessage.assistant([use]), ChatMessage.user([res])]


def test_clears_oldest_compactable_results_only() -> None:
    msgs = [ChatMessage.user("go")]
    for i, name in enumerate(["Read", "TodoWrite", "Bash", "Grep", "Read", "Edit", "Glob", "Read"]):
        msgs += _pair(i, name)
    out = microcompact(msgs, keep_recent=5)
    results = [b for m in out.messages for b in m.content if b.get("type") == "tool_result"]
    cleared = [r["tool_use_id"] for r in results if r["content"] == CLEARED]
    assert cleared == ["t0", "t2"]  # 7 compactable, newest 5 kept; TodoWrite never cleared
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "t0",
        "is_error": True,
        "content": CLEARED,
    }
    assert out.cleared == 2 and out.tokens_saved > 0
    assert [m.uuid for m in out.messages] == [m.uuid for m in msgs]
    again = microcompact(out.messages, keep_recent=5)
    assert again.cleared == 0  # idempotent


@given(conversations, st.integers(0, 8))
def test_shape_and_pairs_survive(msgs: list[ChatMessage], keep: int) -> None:
    out = microcompact(msgs, keep_recent=keep)
    assert len(out.messages) == len(msgs)
    assert api_shape_problems(to_api(out.messages)) == []
    remaining = [
        b
        for m in out.messages
        for b in m.content
        if b.get("type") == "tool_result" and b.get("content") != CLEARED
    ]
    assert len(remaining) >= min(max(1, keep), sum(len(m.tool_result_ids) for m in msgs))


def test_time_trigger() -> None:
    now = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)
    old = ChatMessage.assistant("x", timestamp="2026-01-01T10:30:00.000Z")
    fresh = ChatMessage.assistant("x", timestamp="2026-01-01T11:30:00.000Z")
    assert time_triggered([ChatMessage.user("a"), old, ChatMessage.user("b")], now)
    assert not time_triggered([fresh], now)
    assert not time_triggered([ChatMessage.assistant("no stamp")], now)
    assert not time_triggered([ChatMessage.assistant("x", timestamp="garbage")], now)
