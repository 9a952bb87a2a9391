"""Which writing system a text uses, as far as recall cares: CJK (no spaces between words) or not.

No third-party imports: the engine uses it on the dependency-free path too.
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


__all__ = ["CJK", "CJK_SPLIT", "contains_cjk"]
