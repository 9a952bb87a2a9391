"""What the assistant's own words say: decisions and their reasons, causes and fixes; and what
a one-word answer from the user meant.

Most of what a host summary keeps is in the assistant's narration between tool calls ("Light
schema it is.", "The root cause was the symlink: the container only sees its volumes", "Switched
to `.then()` chains because…"), not in its last reply. :func:`statements` picks those sentences
by cue words, across every reply. Users answer questions tersely ("1", "c", "yes"):
:func:`resolve_answer` turns such an answer into the option it picked, from the question the
assistant asked just before, so the notes say "1 → Develop mode MVP" instead of "1".

Both are heuristics over English text; they only ever quote the conversation (never invent), and
each statement is one sentence, shortened.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from memdir.session import facts
from memdir.session.messages import ChatMessage

SENTENCE_CHARS = 220
_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(])|\n+")
_DECISION = re.compile(
    r"\b(?:it is|it'?s)\s*[.!]$|\b(?:I'll|I will|we'll|we will|let's|I'm going to) (?:go with|use|"
    r"switch|keep|stick with|take)\b|\bgoing with\b|\b(?:decided|decision:|chose|chosen|opted|"
    r"settled on|went with)\b|\b(?:use|using|used|switch(?:ed|ing)?|moved?|chose|pick(?:ed)?)\b"
    r".*\b(?:instead of|rather than)\b|\b(?:switched|switching|moved) (?:from \S+(?: \S+)? )?to\b",
    re.IGNORECASE,
)
_CAUSE = re.compile(
    r"\b(?:root cause|the (?:issue|problem|bug|error|culprit) (?:is|was)|caused by|because the|"
    r"the fix (?:is|was)|fixed (?:by|it|the)|this fixes|that fixed|the reason (?:is|was)|"
    r"turns out|doesn'?t (?:exist|work) (?:in|on|with|because)|failed (?:because|due to)|"
    r"failed, (?:but|so))\b",
    re.IGNORECASE,
)
_NOISE = re.compile(
    r"^(?:let me|now let me|i'll (?:check|read|look|run|start)|good|great|perfect)\b", re.I
)
_SHORT_ANSWER = re.compile(
    r"^\s*(?:option\s*)?(?P<pick>[a-h]|\d{1,2})\s*[.)!]?\s*$|"
    r"^\s*(?P<yes>y(?:es|ep|eah)?|ok(?:ay)?|sure|sounds good|looks good|go(?: ahead| for it)?|"
    r"do it|approved?|great|perfect|correct|right|that works|tha works|no|nope)\b[\s.!]*$",
    re.IGNORECASE,
)


def statements(messages: Sequence[ChatMessage]) -> tuple[list[str], list[str]]:
    """(decisions, causes and fixes) stated in the assistant's text, in order, deduplicated."""
    decisions: list[str] = []
    causes: list[str] = []
    for m in messages:
        if m.role == "assistant" and m.has_text:
            said, why = _statements_of(m.text)
            decisions += said
            causes += why
    return list(dict.fromkeys(decisions)), list(dict.fromkeys(causes))


@functools.lru_cache(maxsize=2048)
def _statements_of(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """One reply's statements (cached: the notes merge and the error tracker both ask)."""
    decisions: list[str] = []
    causes: list[str] = []
    for raw in _SENTENCES.split(_plain(text)):
        sentence = raw.strip(" -*#>|")
        if len(sentence) < 12 or _NOISE.match(sentence) or sentence.count("|") > 2:
            continue
        line = facts.one_line(sentence.replace("**", ""), SENTENCE_CHARS)
        if _CAUSE.search(sentence):
            causes.append(line)
        elif _DECISION.search(sentence):
            decisions.append(line)
    return tuple(decisions), tuple(causes)


def resolve_answer(answer: str, asked: str) -> str | None:
    """What a short answer picked, from the assistant's question ``asked``; None when ``answer``
    is not a short answer or nothing in ``asked`` matches it."""
    m = _SHORT_ANSWER.match(answer)
    if not m or not asked.strip():
        return None
    text = _plain(asked)
    if m.group("pick"):
        pick = re.escape(m.group("pick"))
        option = re.search(
            rf"(?:^|\n)\s*(?:[-*]\s*)?(?:\*\*)?(?:option\s+)?\(?{pick}[.):](?:\*\*)?\s*(?P<x>[^\n]+)",
            text,
            re.IGNORECASE,
        )
        if option:
            return facts.one_line(option.group("x").replace("**", ""), 160)
        # options laid out as a table: "| **A) Single-mode MVP** | what it means |"
        row = re.search(
            rf"^\s*\|\s*(?:\*\*)?(?:option\s+)?\(?{pick}[.):]\s*(?P<x>[^|\n]+?)(?:\*\*)?\s*\|"
            r"(?P<more>[^|\n]*)",
            asked,
            re.IGNORECASE | re.MULTILINE,
        )
        if row:
            more = row.group("more").strip()
            label = row.group("x").replace("**", "").strip()
            return facts.one_line(f"{label} — {more}" if more else label, 160)
        return None
    questions = [s for s in _SENTENCES.split(text) if s.strip().strip("*_").endswith("?")]
    if questions:
        return "to: " + facts.one_line(questions[-1].replace("**", "").strip(" -*#"), 160)
    return None


def _plain(text: str) -> str:
    """Text without code blocks and tables (they are not narration)."""
    text = re.sub(r"```.*?(?:```|$)", "\n", text, flags=re.DOTALL)
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("|"))
