"""What the user said in a turn: their text, and what they typed when they turned down a tool call.

Claude Code lets the user reject a tool call and say why in the same step. The words come back as
the call's result, not as a user message: "The user doesn't want to proceed with this tool use.
The tool use was rejected (…). To tell you how to proceed, the user said:" and then what they
typed. That is the user speaking — often a correction of the very thing the agent was about to do
("we are in project X, file it there", "put the build output in dist instead") — so the sentence
rules read it as they read the user's own messages. A rejection without words (the user pressed
"no") says nothing to remember.
"""

from __future__ import annotations

from memdir.llm.base import Message, TextBlock, ToolResultBlock

REJECTED = "The user doesn't want to proceed with this tool use."
SAID = "the user said:"


def rejection_words(block: ToolResultBlock) -> str:
    """What the user typed when rejecting this tool call; empty when they typed nothing."""
    text = block.content.lstrip()
    if not block.is_error or not text.startswith(REJECTED):
        return ""
    _, found, words = text.partition(SAID)
    return words.strip() if found else ""


def user_words(message: Message) -> str:
    """The user's own words in ``message``: its text, then each rejected call's feedback, one
    paragraph each (so a sentence never runs from one into the next)."""
    parts = [b.text for b in message.blocks if isinstance(b, TextBlock) and b.text.strip()]
    parts += [
        words
        for b in message.blocks
        if isinstance(b, ToolResultBlock) and (words := rejection_words(b))
    ]
    return "\n\n".join(parts)


__all__ = ["REJECTED", "SAID", "rejection_words", "user_words"]
