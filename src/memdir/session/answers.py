"""What the user said inside tool results: answers to the agent's questions, reasons for a refusal.

Claude Code delivers two kinds of the user's own words as tool results, not as user messages:
the answer to a question tool (``User has answered your questions: "Q"="A" …``) and the comment
a user types when refusing a tool call (``… the user said:\\n<words>``). They are requests and
decisions as much as anything typed at the prompt ("hold on", "don't proceed yet", "option A"),
so the notes list them with the requests; everything else in a tool result stays tool output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memdir.session import facts
from memdir.session.messages import readable_result

ANSWER_CHARS = 480
QUESTION_CHARS = 70
_ANSWERED = re.compile(r"^User has answered your questions?:\s*(?P<body>.*)", re.DOTALL)
_PAIR = re.compile(r'"(?P<q>[^"]{3,300})"\s*=\s*"(?P<a>[^"]{1,300})"')
_NOTES = re.compile(r"user notes:\s*(?P<n>.+?)(?:\.\s*You can now continue|$)", re.DOTALL)
_REFUSED = re.compile(
    r"user doesn't want to proceed with this tool use.*?the user said:\s*(?P<said>.+)",
    re.DOTALL | re.IGNORECASE,
)


def said(turns: Sequence[facts.Turn]) -> list[str]:
    """One line per answer or refusal comment in these turns, in order."""
    lines: list[str] = []
    for turn in turns:
        uses = {str(u.get("id")): u for u in turn.tool_uses}
        for block in turn.results:
            text = readable_result(block.get("content")).strip()
            use = uses.get(str(block.get("tool_use_id")), {})
            line = _line(text, str(use.get("name", "a tool call")))
            if line:
                lines.append(line)
    return lines


def _line(text: str, tool: str) -> str | None:
    answered = _ANSWERED.match(text)
    if answered:
        body = answered.group("body")
        # the answer is what the notes must keep: long questions are shortened, never answers
        pairs = [
            f"{facts.one_line(p['q'].strip(), QUESTION_CHARS)} → {p['a'].strip()}"
            for p in _PAIR.finditer(body)
        ]
        notes = _NOTES.search(body)
        if notes and notes.group("n").strip() not in {p.split(" → ")[-1] for p in pairs}:
            pairs.append(f"notes: {notes.group('n').strip()}")
        if pairs:
            return facts.one_line("(answered) " + "; ".join(pairs), ANSWER_CHARS)
        return None
    refused = _REFUSED.search(text)
    if refused and refused.group("said").strip():
        words = facts.one_line(refused.group("said").strip(), ANSWER_CHARS)
        return f"(refused {tool}) {words}"
    return None
