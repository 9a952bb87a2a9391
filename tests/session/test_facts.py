"""Reading a conversation's structure: condensing requests, what counts as a failure."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memdir.script import word_count
from memdir.session.facts import Turn, condense, failed_results, title
from memdir.session.messages import ChatMessage
from memdir.session.microcompact import CLEARED


def test_condense_keeps_the_request_after_a_paragraph_of_context() -> None:
    text = (
        "We had a long week and the staging box kept falling over while the team was away. "
        "The dashboards were red most of Tuesday. Please add rate limiting to the orders endpoint."
    )
    out = condense(text, 100)
    assert "Please add rate limiting to the orders endpoint." in out and len(out) <= 100
    assert out.startswith("…")


def test_condense_folds_pasted_logs() -> None:
    log = "\n".join(f"2026-03-01 WARN worker {i} stalled" for i in range(40))
    out = condense(f"Staging printed this:\n{log}\nWhy does the worker stall?", 120)
    assert "[40 pasted lines]" in out and "Why does the worker stall?" in out


@given(st.text(), st.integers(1, 500))
def test_condense_always_fits(text: str, limit: int) -> None:
    assert len(condense(text, limit)) <= max(limit, 1)


def test_a_title_is_the_ask_not_a_row_of_the_table_pasted_before_it() -> None:
    table = "\n".join(
        [
            "┌────────────┬──────────────┐",
            "│ main space │ RegionSpace 或 LargeObjectSpace │",
            "├────────────┼──────────────┤",
            "│ los        │ 4 MB 以上对象 │",
            "└────────────┴──────────────┘",
        ]
    )
    asked = f"{table}\n请解释一下这张表里 main space 的分配策略。然后给出改进建议。"
    assert title(asked, 80) == "请解释一下这张表里 main space 的分配策略。"
    pasted = "$ make test\n$ make lint\n$ make build\nCan you fix the failing build step?"
    assert title(pasted, 80) == "Can you fix the failing build step?"


def test_a_title_prefers_the_sentence_that_asks() -> None:
    text = "The CI went red last night after the merge. Please fix the flaky login test."
    assert title(text, 80) == "Please fix the flaky login test."
    assert title("Quick look at the release notes", 80) == "Quick look at the release notes"
    assert title("ok", 80) == "ok"  # nothing better: the words as they are


def test_chinese_is_counted_in_words_and_its_ask_is_the_title() -> None:
    assert word_count("继续") == 2  # "continue": still too short to title a session
    assert word_count("art如何确定哪些对象放在moving space") >= 5  # a whole question
    assert word_count("fix the login test") == 4
    persona = "你是一位资深软件架构师。现在我要你深度理解一个代码仓库。"
    assert title(persona, 80) == "现在我要你深度理解一个代码仓库。"


def test_pasted_shell_prompts_are_not_the_title() -> None:
    pasted = "\n".join(
        [
            "me@penguin:~/sdk$ npm install -g scip",
            "npm error code EACCES",
            "npm error path /usr/lib/node_modules",
            "❯ 10.",
            "why does the global install fail here?",
        ]
    )
    assert title(pasted, 80) == "why does the global install fail here?"


@given(st.text(), st.integers(1, 200))
def test_a_title_always_fits_on_one_line(text: str, limit: int) -> None:
    out = title(text, limit)
    assert len(out) <= max(limit, 1) and "\n" not in out


def _turn(name: str, content: str, *, is_error: bool = False) -> Turn:
    use = {
        "type": "tool_use",
        "id": "t",
        "name": name,
        "input": {"file_path": "/a.py", "command": "make"},
    }
    result = {"type": "tool_result", "tool_use_id": "t", "content": content, "is_error": is_error}
    return Turn(ChatMessage.user("go"), [ChatMessage.assistant([use]), ChatMessage.user([result])])


def test_code_that_mentions_errors_is_not_a_failure() -> None:
    assert (
        failed_results(_turn("Read", "raise ValueError('bad')\nclass FooError(Exception): ..."))
        == []
    )
    shell = failed_results(
        _turn("Bash", "Traceback (most recent call last):\nE   KeyError: 'x'\nFAILED t - KeyError")
    )
    assert shell == [("Bash /a.py", "E KeyError: 'x'")]
    assert failed_results(_turn("Bash", "all good, 3 passed")) == []
    assert failed_results(_turn("Read", "File does not exist", is_error=True)) == [
        ("Read /a.py", "File does not exist")
    ]
    assert failed_results(_turn("Bash", CLEARED, is_error=True)) == []
