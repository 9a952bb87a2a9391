"""Pending and finished tasks, read from the host's task tools and the assistant's own words.

Claude Code carries the task list in tool calls: ``TodoWrite`` sends the whole list with a status
per item (``pending`` / ``in_progress`` / ``completed``); the newer ``TaskCreate`` / ``TaskUpdate``
tools create one task (its id comes back in the result, "Task #3 created…") and change its
status. Where there is no list, the assistant says what it will do next ("Next, I'll…", "Remaining:
…"); the latest such statement is the best pending-work hint there is.

The state lives in the notes as checkbox lines (``- [ ] task``, ``- [~] task`` for in progress,
``- [x] task``), so merging a few turns at a time keeps it: a new full list replaces the open
items, finished items stay finished (the most recent :data:`KEEP_DONE` of them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from memdir.session import facts
from memdir.session.messages import readable_result

KEEP_DONE = 15
_BOX = re.compile(r"^- \[(?P<mark>[ x~])\] (?P<text>.+)$")
_MARKS = {"pending": " ", "in_progress": "~", "completed": "x"}
_CREATED = re.compile(r"Task #?(\w+) created", re.IGNORECASE)
_NEXT = re.compile(
    r"(?:^|(?<=[.!:]\s))((?:next|then),? (?:I'll|I will|I need to|we'll|we need to|let me)\b"
    r"[^.\n]{8,200}|"
    r"(?:remaining|still to do|todo|next steps?|pending)\s*:\s*[^\n]{8,200})",
    re.IGNORECASE,
)


_NEXT_WORDS = (
    r"(?:next steps?|what'?s next|remaining(?: \w+){0,3}|still to do|pending(?: tasks)?|"
    r"not (?:yet )?done|left to do|to do next)"
)
_NEXT_HEADING = re.compile(  # "## Next steps", "**Remaining:**", "…, the next steps are:"
    rf"^\W*(?:suggested |recommended |possible )?{_NEXT_WORDS}\W*$|"
    rf"\b{_NEXT_WORDS}\b[^:\n]{{0,40}}:\W*$",
    re.IGNORECASE,
)
_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(?:\[[ x]\]\s*)?")
_HEADED_ITEM = re.compile(r"^\s*#{1,4}\s+(?:\d+[.)]|step \d+:?)\s+", re.IGNORECASE)


def parse(lines: Sequence[str]) -> dict[str, str]:
    """Checkbox lines of earlier notes as ``{task: mark}``."""
    state: dict[str, str] = {}
    for line in lines:
        if m := _BOX.match(line.strip()):
            state[m.group("text")] = m.group("mark")
    return state


def update(state: dict[str, str], turns: Sequence[facts.Turn]) -> dict[str, str]:
    """``state`` after the task-tool calls in ``turns`` (a new dict; order: oldest first)."""
    out = dict(state)
    ids: dict[str, str] = {}
    for turn in turns:
        results = {str(b.get("tool_use_id")): b for b in turn.results}
        for use in turn.tool_uses:
            name = str(use.get("name", ""))
            raw = use.get("input")
            if not isinstance(raw, Mapping):
                continue
            if name == "TodoWrite":
                out = _todo_write(out, raw.get("todos"))
            elif name == "TaskCreate":
                text = _task_text(raw)
                if text:
                    out.setdefault(text, " ")
                    created = _CREATED.search(_result(results, use))
                    if created:
                        ids[created.group(1)] = text
            elif name == "TaskUpdate":
                task = ids.get(str(raw.get("taskId", raw.get("id", ""))))
                status = str(raw.get("status", ""))
                if task and status in _MARKS:
                    out.pop(task, None)
                    out[task] = _MARKS[status]
    return _bounded(out)


def next_steps(turns: Sequence[facts.Turn]) -> list[str]:
    """The assistant's latest "next I will…" statements and "Next steps:" lists (at most three,
    newest last)."""
    found: list[str] = []
    for turn in turns:
        for m in turn.messages:
            if m.role == "assistant" and m.has_text:
                found += [facts.one_line(x, 200) for x in _NEXT.findall(m.text)]
                found += _listed_next(m.text)
    return list(dict.fromkeys(found))[-3:]


def _listed_next(text: str) -> list[str]:
    """A "Next steps" / "Remaining" heading followed by a list: its items, on one line."""
    found = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not _NEXT_HEADING.search(line):
            continue
        items = _headed_items(lines[i + 1 : i + 60])
        for item in [] if items else lines[i + 1 : i + 12]:
            if _ITEM.match(item):
                items.append(_ITEM.sub("", item).replace("**", "").strip())
            elif item.strip() and items:
                break
        if items:
            found.append("Next steps: " + facts.one_line("; ".join(items[:5]), 300))
    return found


def _headed_items(lines: Sequence[str]) -> list[str]:
    """Items written as numbered headings ("### 3. Navbar — …"), when the list starts with one:
    the headings are the steps, the bullets under them their details."""
    first = next((ln for ln in lines if ln.strip()), "")
    if not _HEADED_ITEM.match(first):
        return []
    return [
        _HEADED_ITEM.sub("", ln).replace("**", "").strip() for ln in lines if _HEADED_ITEM.match(ln)
    ]


def lines(state: Mapping[str, str]) -> list[str]:
    open_ = [f"- [{mark}] {task}" for task, mark in state.items() if mark != "x"]
    done = [f"- [x] {task}" for task, mark in state.items() if mark == "x"]
    return open_ + done


def _todo_write(state: dict[str, str], todos: Any) -> dict[str, str]:
    if not isinstance(todos, list):
        return state
    listed: dict[str, str] = {}
    for item in todos:
        if isinstance(item, Mapping):
            text = _task_text(item)
            mark = _MARKS.get(str(item.get("status", "pending")), " ")
            if text:
                listed[text] = mark
    # a full list: it replaces the open items; items finished earlier stay finished
    done = {t: m for t, m in state.items() if m == "x" and t not in listed}
    return {**done, **listed}


def _task_text(item: Mapping[str, Any]) -> str:
    for key in ("content", "subject", "title", "description"):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return facts.one_line(value, 160).replace("[", "(").replace("]", ")")
    return ""


def _result(results: Mapping[str, Mapping[str, Any]], use: Mapping[str, Any]) -> str:
    block = results.get(str(use.get("id")))
    return readable_result(block.get("content")) if block else ""


def _bounded(state: dict[str, str]) -> dict[str, str]:
    done = [t for t, m in state.items() if m == "x"]
    drop = set(done[:-KEEP_DONE]) if len(done) > KEEP_DONE else set()
    return {t: m for t, m in state.items() if t not in drop}
