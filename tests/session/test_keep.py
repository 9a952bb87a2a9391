"""The keep-index walk and both invariants, on Hypothesis-generated conversations."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memdir.session.keep import (
    KeepConfig,
    invariant_problems,
    last_boundary_index,
    messages_to_keep_index,
    walk_start,
)
from memdir.session.messages import ChatMessage, api_shape_problems, to_api
from memdir.session.tokens import Window, message_tokens
from tests.session.strategies import conversations

configs = st.builds(
    KeepConfig,
    min_tokens=st.integers(0, 3000),
    min_text_messages=st.integers(0, 6),
    max_tokens=st.integers(1, 8000),
)


@given(conversations, st.data(), configs)
def test_invariants_hold_for_any_cursor(
    messages: list[ChatMessage], data: st.DataObject, config: KeepConfig
) -> None:
    assert api_shape_problems(to_api(messages)) == []  # the generator makes valid input
    last = data.draw(st.integers(-1, len(messages) - 1))
    start = messages_to_keep_index(messages, last, config)
    assert 0 <= start <= len(messages)
    kept, dropped = messages[start:], messages[:start]
    assert invariant_problems(kept, dropped) == []
    assert start > last_boundary_index(messages) or start == len(messages)
    compacted = [
        ChatMessage.boundary(pre_tokens=1),
        ChatMessage.user("notes", kind="compact_summary"),
        *(m for m in kept if not m.is_boundary),
    ]
    assert api_shape_problems(to_api(compacted)) == []


@given(conversations, st.data(), configs)
def test_walk_respects_min_and_max(
    messages: list[ChatMessage], data: st.DataObject, config: KeepConfig
) -> None:
    last = data.draw(st.integers(-1, len(messages) - 1))
    start = walk_start(messages, last, config)
    floor = last_boundary_index(messages) + 1
    first = max(min(last + 1 if last >= 0 else len(messages), len(messages)), floor)
    kept = messages[start:]
    tokens = sum(message_tokens(m) for m in kept)
    texts = sum(1 for m in kept if m.has_text)
    met = tokens >= config.max_tokens or (
        tokens >= config.min_tokens and texts >= config.min_text_messages
    )
    assert met or start == floor  # only a too-short conversation stops below the minimums
    if start < first:  # walked back: it stopped at the first message that was enough
        without_first = sum(message_tokens(m) for m in messages[start + 1 :])
        assert without_first < config.max_tokens


def test_tool_result_pulls_in_its_call_and_split_reply_stays_whole() -> None:
    msgs = [
        ChatMessage.user("go"),
        ChatMessage.assistant(
            [{"type": "thinking", "thinking": "plan", "signature": "s"}], message_id="m1"
        ),
        ChatMessage.assistant(
            [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}], message_id="m1"
        ),
        ChatMessage.user([{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]),
        ChatMessage.assistant(
            [{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}], message_id="m1"
        ),
        ChatMessage.user([{"type": "tool_result", "tool_use_id": "t2", "content": "y"}]),
        ChatMessage.assistant("done", message_id="m2"),
    ]
    config = KeepConfig(min_tokens=1, min_text_messages=0, max_tokens=10)
    # the cursor sits right before the second tool result: the walk alone would cut there
    assert walk_start(msgs, 4, config) == 5
    assert messages_to_keep_index(msgs, 4, config) == 1  # back to the thinking piece


@given(conversations)
def test_walk_never_crosses_the_last_boundary(msgs: list[ChatMessage]) -> None:
    msgs = [
        *msgs,
        ChatMessage.boundary(pre_tokens=9),
        ChatMessage.user("summary", kind="compact_summary"),
        ChatMessage.assistant("ok"),
    ]
    big = KeepConfig(min_tokens=10**9, min_text_messages=99, max_tokens=10**9)
    assert messages_to_keep_index(msgs, -1, big) == len(msgs) - 2


def test_empty_conversation() -> None:
    assert messages_to_keep_index([], -1, KeepConfig()) == 0


def test_config_scales_with_small_windows() -> None:
    assert KeepConfig.for_window(Window(200_000)) == KeepConfig()
    small = KeepConfig.for_window(Window(40_000))
    assert small.max_tokens <= Window(40_000).threshold * 0.4
    assert 0 < small.min_tokens <= small.max_tokens
