"""extract.said: the user's own words in a turn, rejected tool calls' feedback included."""

from __future__ import annotations

from memdir.extract.said import REJECTED, rejection_words, user_words
from memdir.llm.base import Message, TextBlock, ToolResultBlock

FEEDBACK = (
    f"{REJECTED} The tool use was rejected (eg. if it was a file edit, the new_string was NOT "
    "written to the file). To tell you how to proceed, the user said:\nput them in dist instead"
)
STOPPED = f"{REJECTED} STOP what you are doing and wait for the user to tell you how to proceed."


def test_only_a_rejection_with_words_gives_words() -> None:
    assert rejection_words(ToolResultBlock("t", FEEDBACK, True)) == "put them in dist instead"
    assert rejection_words(ToolResultBlock("t", STOPPED, True)) == ""  # the user said nothing
    assert rejection_words(ToolResultBlock("t", FEEDBACK, False)) == ""  # not a rejection
    assert rejection_words(ToolResultBlock("t", "error: the user said: no", True)) == ""


def test_a_turns_words_keep_each_part_its_own_paragraph() -> None:
    message = Message(
        "user",
        [TextBlock("why a .js copy?"), ToolResultBlock("t", FEEDBACK, True), TextBlock(" ")],
    )
    assert user_words(message) == "why a .js copy?\n\nput them in dist instead"
    assert user_words(Message("user", [ToolResultBlock("t", "ok", False)])) == ""
