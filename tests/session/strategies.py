"""Hypothesis strategies for conversations shaped like real agent sessions.

A conversation is a list of rounds. A round is a user message (text, sometimes with an image)
and the assistant's work on it: replies that may carry thinking, text and parallel tool calls,
split over several messages sharing one provider message id (as streaming harnesses log them),
with tool results either after all pieces or interleaved between them; the round ends with a
text reply. Earlier compact boundaries (boundary + compact summary) sit between rounds, where a
real compaction puts them. Every generated conversation is valid for the Messages API.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from hypothesis import strategies as st

from memdir.session.messages import ChatMessage

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}


@dataclass(frozen=True)
class Step:
    thinking: bool
    text: str
    tools: int  # parallel tool calls in this reply
    split: bool  # one message per block, sharing the message id
    interleave: bool  # results between the pieces (needs split)
    result_len: int
    error: bool


@dataclass(frozen=True)
class Round:
    request: str
    image: bool
    steps: tuple[Step, ...]
    final_text: str
    boundary_before: bool


_words = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=60).map(
    lambda s: s.strip() or "x"
)
steps = st.builds(
    Step,
    thinking=st.booleans(),
    text=st.one_of(st.just(""), _words),
    tools=st.integers(1, 3),
    split=st.booleans(),
    interleave=st.booleans(),
    result_len=st.integers(1, 4000),
    error=st.booleans(),
)
rounds = st.builds(
    Round,
    request=_words,
    image=st.booleans(),
    steps=st.lists(steps, max_size=3).map(tuple),
    final_text=_words,
    boundary_before=st.integers(0, 9).map(lambda n: n == 0),
)
conversations = st.lists(rounds, min_size=1, max_size=10).map(lambda rs: build(rs))


def build(rounds_: list[Round]) -> list[ChatMessage]:
    counter = itertools.count()
    out: list[ChatMessage] = []
    for r in rounds_:
        if r.boundary_before and out:
            out.append(ChatMessage.boundary(pre_tokens=1234))
            out.append(
                ChatMessage.user(f"summary of earlier work {next(counter)}", kind="compact_summary")
            )
        blocks: list[dict[str, object]] = [{"type": "text", "text": r.request}]
        if r.image:
            blocks.append(dict(IMAGE))
        out.append(ChatMessage.user(blocks))
        for step in r.steps:
            out.extend(_step(step, counter))
        out.append(ChatMessage.assistant(r.final_text))
    return out


def _step(step: Step, counter: itertools.count[int]) -> list[ChatMessage]:
    mid = f"msg_{next(counter)}"
    head: list[dict[str, object]] = []
    if step.thinking:
        head.append({"type": "thinking", "thinking": "let me think " * 5, "signature": "sig"})
    if step.text:
        head.append({"type": "text", "text": step.text})
    uses = [
        {
            "type": "tool_use",
            "id": f"toolu_{next(counter)}",
            "name": name,
            "input": {"file_path": f"/src/f{i}.py"},
        }
        for i, name in zip(
            range(step.tools), itertools.cycle(["Read", "Bash", "Edit"]), strict=False
        )
    ]
    results = [
        {
            "type": "tool_result",
            "tool_use_id": u["id"],
            "content": "r" * step.result_len,
            **({"is_error": True} if step.error else {}),
        }
        for u in uses
    ]
    if not step.split:
        return [
            ChatMessage.assistant([*head, *uses], message_id=mid),
            ChatMessage.user(results),
        ]
    pieces = [ChatMessage.assistant([b], message_id=mid) for b in head]
    out: list[ChatMessage] = list(pieces)
    if step.interleave:
        for use, result in zip(uses, results, strict=True):
            out.append(ChatMessage.assistant([use], message_id=mid))
            out.append(ChatMessage.user([result]))
        return out
    out.extend(ChatMessage.assistant([u], message_id=mid) for u in uses)
    out.append(ChatMessage.user(results))
    return out
