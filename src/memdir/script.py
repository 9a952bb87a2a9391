"""Text as a person reads it: which writing system (CJK, no spaces between words, or not), how
many words, and which characters nobody reads.

Recall tokenizes CJK apart, the session notes and the sentence rules count its words apart.
What a user typed becomes a memory, an index line and a log line that terminals and prompts
show, so the characters that steer a terminal or the reading order are dropped on the way in.
No third-party imports: recall's engine uses it on the dependency-free path too.
"""

from __future__ import annotations

import re

# Han (with extensions and compatibility ideographs), Hiragana, Katakana (with the half-width
# forms and the prolonged-sound mark) and Hangul syllables and jamo.
_CJK_CLASS = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\U00020000-\U0002ffff"
)
CJK = re.compile(f"[{_CJK_CLASS}]")
CJK_SPLIT = re.compile(f"[{_CJK_CLASS}]+|[^{_CJK_CLASS}]+")  # alternating CJK / other runs


def contains_cjk(text: str) -> bool:
    """True when ``text`` has a Chinese, Japanese or Korean character."""
    return CJK.search(text) is not None


# C0/C1 controls (whitespace aside) and the bidirectional embedding/override/isolate marks
UNPRINTABLE = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` without terminal escapes, NULs and bidirectional overrides (lines kept)."""
    return UNPRINTABLE.sub("", text)


def word_count(text: str) -> int:
    """Words in ``text``, a CJK character counting as one: Chinese puts no space between words,
    so "art如何确定哪些对象放在moving space" is a whole question, not three words."""
    return len(re.findall(r"[\w'-]+", CJK.sub(" ", text))) + len(CJK.findall(text))


__all__ = ["CJK", "CJK_SPLIT", "UNPRINTABLE", "contains_cjk", "printable", "word_count"]
