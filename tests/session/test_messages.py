"""The Messages API view, its validator, and repair of bad input."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memdir.session.messages import ChatMessage, api_shape_problems, repair, to_api
from tests.session.strategies import conversations


def _use(tid: str) -> dict[str, object]:
    return {"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": "/a"}}


def _result(tid: str) -> dict[str, object]:
    return {"type": "tool_result", "tool_use_id": tid, "content": "ok"}


def test_to_api_merges_roles_drops_boundaries_and_puts_results_first() -> None:
    msgs = [
        ChatMessage.user("hi"),
        ChatMessage.assistant([_use("t1")], message_id="m"),
        ChatMessage.user("also this"),
        ChatMessage.user([_result("t1")]),
        ChatMessage.boundary(pre_tokens=5),
        ChatMessage.assistant("done"),
    ]
    api = to_api(msgs)
    assert [m["role"] for m in api] == ["user", "assistant", "user", "assistant"]
    assert [b["type"] for b in api[2]["content"]] == ["tool_result", "text"]
    assert api_shape_problems(api) == []


def test_validator_names_each_rule() -> None:
    assert api_shape_problems([]) == ["no messages"]
    assert "the first message is not from the user" in api_shape_problems(
        [{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]
    )
    orphan = [{"role": "user", "content": [_result("t9")]}]
    assert any("no tool_use just before" in p for p in api_shape_problems(orphan))
    unanswered = [
        {"role": "user", "content": [{"type": "text", "text": "x"}]},
        {"role": "assistant", "content": [_use("t1")]},
        {"role": "user", "content": [{"type": "text", "text": "y"}]},
    ]
    assert any("unanswered" in p for p in api_shape_problems(unanswered))
    empty = [{"role": "user", "content": [{"type": "text", "text": "  "}]}]
    assert any("empty text" in p for p in api_shape_problems(empty))


def test_repair_keeps_orphan_results_as_text_and_answers_open_calls() -> None:
    msgs = [
        ChatMessage.assistant("hello"),
        ChatMessage.user([_result("gone")]),
        ChatMessage.assistant([_use("t1"), _use("t2")]),
        ChatMessage.user([_result("t1")]),
        ChatMessage.user("next question"),
        ChatMessage.assistant([{"type": "text", "text": " "}]),
        ChatMessage.assistant([_use("t3")]),
    ]
    fixed, issues = repair(msgs)
    assert api_shape_problems(to_api(fixed)) == []
    assert any("gone" in i for i in issues)
    assert any("t2" in i for i in issues) and any("t3" in i for i in issues)
    texts = " ".join(m.text for m in fixed)
    assert "ok" in texts  # the orphan result's content survived as text


@given(conversations)
def test_repair_leaves_valid_conversations_alone(msgs: list[ChatMessage]) -> None:
    fixed, issues = repair(msgs)
    assert issues == []
    assert to_api(fixed) == to_api(msgs)


@given(conversations, st.data())
def test_repair_makes_any_mangled_conversation_valid(
    msgs: list[ChatMessage], data: st.DataObject
) -> None:
    # drop random messages: orphans, unanswered calls, assistant first, empty lists
    keep = data.draw(st.lists(st.booleans(), min_size=len(msgs), max_size=len(msgs)))
    mangled = [m for m, k in zip(msgs, keep, strict=True) if k]
    fixed, _ = repair(mangled)
    if any(not m.is_boundary for m in fixed):
        assert api_shape_problems(to_api(fixed)) == []


def test_message_view_for_providers() -> None:
    msg = ChatMessage.assistant(
        [
            {"type": "thinking", "thinking": "x", "signature": "s"},
            {"type": "text", "text": "answer"},
            _use("t1"),
        ]
    )
    view = msg.message
    assert view.role == "assistant" and view.text == "answer" and len(view.blocks) == 2
