"""The sentence rules in Chinese: remember, from now on, never / always, and corrections.

The English rules (:mod:`memdir.extract.rules`) cannot see a Chinese user's cues: 记住 (remember),
以后 / 今后 / 从现在开始 (from now on), 不要再 / 别再 (don't … again), 永远不要 (never),
总是 / 始终 / 每次都 (always), 不对，应该… (no, it should …). The same precision comes first: only
explicit cues; a question (…吗, …？), this task's instruction (这次, 暂时, 今天 …) or a pointer
into the conversation (刚才, 这个修复) is not kept. A plain 不要 X, said once, is this task's
instruction, as "don't X" is in English; 不要再 X ("don't X again") is a standing one.

What it writes is in the user's language: the statement, the title, **Why:** (their 因为 / 否则
clause when there is one) and **How to apply:**.
"""

from __future__ import annotations

import re

from memdir.extract.standing import Said
from memdir.model import MemoryType
from memdir.script import contains_cjk, word_count

_PUNCT = "，,。.！!？?；;：:、 \t"
_POLITE = r"(?:请你?|麻烦你?|你)?(?:要|一定要|务必)?"
_REMEMBER = re.compile(
    rf"^{_POLITE}(?:记住|记一下|记下来?|牢记|记得|别忘了|不要忘了|不要忘记)(?:一下)?"
    rf"(?:这(?:一)?点|以下)?[{_PUNCT}]*(?P<x>.+)$"
)
_FROM_NOW = re.compile(
    rf"^(?:以后|今后|往后|从今以后|从今往后|从现在开始|从现在起|以后每次|后续(?=.*(?:都|一律|必须)))"
    rf"[{_PUNCT}]*(?P<x>.+)$"
)
_NEVER = re.compile(
    rf"^{_POLITE}(?:永远不要|永远别|绝对不要|绝不要|千万不要|千万别|不要再|别再|不许再|不准再|"
    rf"再也不要|以后不要|以后别|(?P<cue>禁止))[{_PUNCT}]*(?P<x>.+)$"
)
_ALWAYS = re.compile(rf"^{_POLITE}(?:总是|始终|一律|每次都要?|每一次都要?)[{_PUNCT}]*(?P<x>.+)$")
_CORRECTION = re.compile(
    rf"^(?:不对|错了|不是这样的?|你错了|不行)[{_PUNCT}]+(?P<x>(?:应该|要|请|用|使用|改用|别|不要)"
    r".+)$"
)
# the user's reason: 因为 (because), 否则 / 不然 (otherwise), or what follows a dash
_WHY = re.compile(r"[，,；;]?\s*(?P<cue>因为|否则|不然|\s—+\s*|——|\s--\s)(?P<why>.+)$")
_QUESTION = re.compile(r"(?:[?？]|[吗呢么嘛][。.!！]?)$")
# this task, this moment: not a standing rule
_ONE_OFF = re.compile(r"这次|这一次|本次|这回|暂时|暂且|临时|今天|目前先|现在先|这个任务")
# what it points at is in the conversation, not the sentence
_DEICTIC = re.compile(r"刚才|刚刚|上面|之前说的|你(?:刚|之前)|这个(?:修复|改动|方法|办法|问题)")
_SELF = re.compile(r"^我(?:是|在|负责|喜欢|习惯|用|主要)")
_URL = re.compile(r"https?://")
MIN_WORDS = 3  # a CJK character a word: 用pnpm (3) is a rule, 好的 (2) is not
MAX_WORDS = 80


def said(sentence: str) -> Said | None:
    """The standing rule a Chinese sentence states, or None (see the module docstring)."""
    text = sentence.strip().strip("“”\"'「」")
    if not contains_cjk(text) or _QUESTION.search(text) or word_count(text) > MAX_WORDS:
        return None
    if m := _REMEMBER.match(text):
        return _said(m.group("x"), "remember", _kind(m.group("x")))
    if _ONE_OFF.search(text):
        return None
    if m := _FROM_NOW.match(text):
        return _said(m.group("x"), "from-now-on", MemoryType.FEEDBACK)
    if m := _NEVER.match(text):
        cue = "禁止" if m.group("cue") == "禁止" else "不要"  # the user's word where it says it all
        return _said(_join(cue, m.group("x")), "directive", MemoryType.FEEDBACK)
    if m := _ALWAYS.match(text):
        return _said(_join("总是", m.group("x")), "directive", MemoryType.FEEDBACK)
    if m := _CORRECTION.match(text):
        return _said(m.group("x"), "correction", MemoryType.FEEDBACK)
    return None


def _said(content: str, rule: str, kind: MemoryType) -> Said | None:
    statement, why = _split_why(content)
    if word_count(statement) < MIN_WORDS or _DEICTIC.search(statement):
        return None
    return Said(kind, statement, rule, _title(statement), _how(statement, kind), why)


def _join(cue: str, rest: str) -> str:
    """``cue`` before ``rest``, with a space before a Latin word (禁止 deep-scrape.mjs)."""
    return f"{cue} {rest}" if rest[:1].isascii() and rest[:1].isalnum() else cue + rest


def _split_why(text: str) -> tuple[str, str | None]:
    m = _WHY.search(text)
    if m is None or word_count(m.group("why")) < 2:
        return _clean(text), None
    why = _clean(m.group("why"))
    cue = m.group("cue")
    return _clean(text[: m.start()]), f"否则{why}" if cue in ("否则", "不然") else why


def _kind(content: str) -> MemoryType:
    if _URL.search(content):
        return MemoryType.REFERENCE
    if _SELF.match(content):
        return MemoryType.USER
    if re.match(r"(?:用|使用|不要|别|总是|始终|每次|必须|先|提交|运行|跑)", content):
        return MemoryType.FEEDBACK
    return MemoryType.PROJECT


def _title(statement: str) -> str:
    """The rule's first clause, at most 24 characters: a title, not the whole sentence."""
    head = re.split(r"[，,；;。]|\s—|——|\s--\s", statement, maxsplit=1)[0].strip()
    return head if len(head) <= 24 else head[:24].rstrip(_PUNCT)


def _how(statement: str, kind: MemoryType) -> str | None:
    # few words of its own: dream compares bodies, and a sentence every memory shares would
    # make them look alike
    if kind is MemoryType.FEEDBACK:
        return f"以后都这样做：{statement}。"
    if kind is MemoryType.PROJECT:
        return f"以此为准：{statement}；发现过时就告诉用户。"
    return None


def _clean(text: str) -> str:
    return text.strip().strip(_PUNCT + "“”\"'「」").strip()
