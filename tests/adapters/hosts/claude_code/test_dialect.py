"""Claude Code's hook JSON in and out (the body checks every host shares: ``hookio``)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.adapters.hooks.hookio import MAX_CONTEXT_CHARS, HookInput, clip, read_body
from memdir.adapters.hosts.claude_code.dialect import DIALECT, context_output
from memdir.errors import HookInputError


def parse_input(event: str, raw: bytes | str) -> HookInput:
    return DIALECT.parse(event, read_body(raw))


def test_parse_a_real_user_prompt_submit() -> None:
    raw = json.dumps(
        {
            "session_id": "0b7c3a52-9a0e-4c33-9d55-3f1f2f0f6e11",
            "transcript_path": "/home/u/.claude/projects/-home-u-app/0b7c.jsonl",
            "cwd": "/home/u/app",
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "Wie deployen wir? 日本語も",
            "future_field": {"x": 1},
        }
    )
    inp = parse_input("user-prompt-submit", raw.encode())
    assert inp.prompt == "Wie deployen wir? 日本語も" and inp.cwd == "/home/u/app"
    assert inp.session_id.startswith("0b7c3a52")


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   ",
        b"nope",
        b"null",
        b'"str"',
        b"\xff",
        b'{"prompt": "no session"}',
        b'{"session_id": "a/b"}',
        b'{"session_id": ".."}',
        b'{"session_id": "a..b"}',
        b'{"session_id": "s", "cwd": 3}',
        b'{"session_id": "s", "hook_event_name": "Stop"}',
        b"{" + b" " * (4 * 1024 * 1024 + 1) + b"}",
    ],
)
def test_unusable_input_is_a_hook_input_error(raw: bytes) -> None:
    with pytest.raises(HookInputError):
        parse_input("user-prompt-submit", raw)


@given(st.text(max_size=30_000))
def test_clip_stays_under_the_cap(text: str) -> None:
    out = clip(text)
    assert len(out) <= MAX_CONTEXT_CHARS
    assert out == text or out.endswith("[memdir: cut to fit the hook's size budget]")


def test_context_sits_inside_hook_specific_output() -> None:
    out = json.loads(context_output("session-start", "hello", system_message="Saved 1 memory"))
    assert out == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hello"},
        "systemMessage": "Saved 1 memory",
    }
    assert context_output("user-prompt-submit", "") == ""
