"""What a conversation's structure says, without a model: turns, requests, files, commands, errors.

The offline updater is built on these pure functions. They read tool calls the way the common
agent harnesses name them (Claude Code's Read/Edit/Write/Bash, the text-editor and shell tools of
the Anthropic API, memdir's own agent tools), and they never raise on odd input: a tool input that
is not an object, a path that is not a string, a result with no text — all are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memdir.script import word_count
from memdir.session.harness import is_harness_text
from memdir.session.messages import ChatMessage, readable_result
from memdir.session.microcompact import CLEARED

READ_TOOLS = frozenset({"Read", "read_file", "view", "NotebookRead"})
EDIT_TOOLS = frozenset(
    {
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "str_replace_based_edit_tool",
        "edit_file",
        "str_replace",
        "apply_patch",
    }
)
WRITE_TOOLS = frozenset({"Write", "write_file", "create", "create_file"})
SHELL_TOOLS = frozenset({"Bash", "bash", "shell", "run_command", "run_shell_command"})
_PATH_KEYS = ("file_path", "path", "notebook_path", "filename")
_FUNCTION = re.compile(
    r"\b(?:def|class|function|func|fn)\s+([A-Za-z_][\w]*)|"
    r"\b(?:const|let|var)\s+([A-Za-z_]\w*)\s*=\s*(?:async\s*)?\("
)
_ERROR_LINE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b|\berror(?:\[\w+\])?:|\bfatal:|\bpanic:|"
    r"command not found|No such file or directory|Permission denied"
)
_EXCEPTION_LINE = re.compile(r"\b[A-Z][\w.]*(?:Error|Exception)\b:\s*\S")
_WEAK_ERROR_LINE = re.compile(r"\bFAILED\b|\b\d+ failed\b|exit code [1-9]|\berror\b", re.I)
_RESULT_LINE = re.compile(
    r"\b\d+ (?:passed|failed|errors?)\b|\bcoverage\b.*\d+%|^\[\w[\w/.-]* [0-9a-f]{7,}\]|"
    r"\bcommitted\b|\bbenchmark\b.*\d",
    re.IGNORECASE,
)


def tool_path(tool_use: Mapping[str, Any]) -> str | None:
    raw = tool_use.get("input")
    if not isinstance(raw, Mapping):
        return None
    for key in _PATH_KEYS:
        value = raw.get(key)
        if isinstance(value, str) and value.strip() and "\n" not in value:
            return value.strip()
    return None


def tool_command(tool_use: Mapping[str, Any]) -> str | None:
    raw = tool_use.get("input")
    if not isinstance(raw, Mapping):
        return None
    value = raw.get("command", raw.get("cmd"))
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    return value.strip() if isinstance(value, str) and value.strip() else None


def file_action(name: str, tool_use: Mapping[str, Any]) -> str | None:
    """'read', 'edited' or 'written' for a file tool call, else None."""
    raw = tool_use.get("input")
    command = raw.get("command") if isinstance(raw, Mapping) else None
    if name == "str_replace_based_edit_tool" and command in ("view",):
        return "read"
    if name == "str_replace_based_edit_tool" and command == "create":
        return "written"
    if name in READ_TOOLS:
        return "read"
    if name in EDIT_TOOLS:
        return "edited"
    if name in WRITE_TOOLS:
        return "written"
    return None


def functions_in(tool_use: Mapping[str, Any]) -> list[str]:
    """Function/class names a write or edit introduced or touched (from its new text)."""
    raw = tool_use.get("input")
    if not isinstance(raw, Mapping):
        return []
    texts = [raw.get(k) for k in ("new_string", "content", "new_str", "file_text")]
    edits = raw.get("edits")
    if isinstance(edits, list):
        texts += [e.get("new_string") for e in edits if isinstance(e, Mapping)]
    names: list[str] = []
    for text in texts:
        if isinstance(text, str):
            for match in _FUNCTION.finditer(text):
                name = match.group(1) or match.group(2)
                if name and name not in names:
                    names.append(name)
    return names


def one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)].rstrip() + "…"


_CUE = re.compile(
    r"\b(?:please|pls|can you|could you|would you|add|fix|implement|make|use|update|remove|"
    r"rename|write|change|create|don't|do not|never|always|instead|should|must|let's|go with|"
    r"decided?|need|want|remember)\b|^(?:no|nope|wrong)\b|[?？]$|"
    r"请|帮我|我要|我想|需要|如何|怎么|为什么|为啥|能否|能不能|不要|别再",  # the same, in Chinese
    re.IGNORECASE,
)
_LOG_LINE = re.compile(
    r"^\s*(?:\d{4}-\d\d-\d\d|\[?\d\d:\d\d|(?:DEBUG|INFO|WARN|WARNING|ERROR|TRACE)\b|"
    # box drawing (a terminal's tables), prompt glyphs and ``user@host:dir$`` shell prompts
    r"at\s|File \"|\s{4}|[{}\[\]<>|$#\u2500-\u257f❯›»]|[\w.-]+@[\w.-]+:\S*[$#]\s)"
)
# a full stop and a space, or a CJK full stop (no space follows one)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_PASTED = re.compile(r"^\[\d+ pasted lines\]$")


def condense(text: str, limit: int) -> str:
    """``text`` on one line within ``limit`` chars, keeping what carries intent.

    Pasted logs and code (runs of 3+ such lines) become ``[N pasted lines]``; then sentences that
    ask, decide or correct are kept before the rest, in their original order, with ``…`` where
    something was left out. A user's request after a paragraph of context survives this, where
    cutting at ``limit`` would lose it.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    sentences = _sentences(text)
    ranked = sorted(range(len(sentences)), key=lambda i: (not _CUE.search(sentences[i]), i))
    chosen: set[int] = set()
    used = 0
    for i in ranked:
        cost = len(sentences[i]) + 2
        if used + cost <= limit:
            chosen.add(i)
            used += cost
    if not chosen:
        return one_line(flat, limit)
    out: list[str] = []
    for i, sentence in enumerate(sentences):
        if i in chosen:
            out.append(sentence)
        elif not out or out[-1] != "…":
            out.append("…")
    return " ".join(out)


def title(text: str, limit: int) -> str:
    """A session's title from its first real ask: the first sentence that asks, decides or
    corrects (else the first sentence), never a line of what was pasted with it."""
    sentences = [x for x in _sentences(text) if not _PASTED.match(x)]
    if not sentences:
        return one_line(text, limit)
    asks = [x for x in sentences if _CUE.search(x)]
    return one_line((asks or sentences)[0], limit)


def _sentences(text: str) -> list[str]:
    """``text``'s sentences, each on one line; runs of 3+ pasted log, code or table lines
    become one ``[N pasted lines]`` each."""
    parts: list[str] = []
    run: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.strip() and _LOG_LINE.match(line):
            run.append(line)
            continue
        if run:
            parts.append(f"[{len(run)} pasted lines]" if len(run) >= 3 else " ".join(run))
            run = []
        if line.strip():
            parts.append(line)
    return [x.strip() for p in parts for x in _SENTENCE_END.split(" ".join(p.split())) if x.strip()]


_DECIDES = re.compile(
    r"^(?:no|nope|wrong)\b|\b(?:that's wrong|that is wrong|instead of|rather than|let's|let us|"
    r"go with|decided?|from now on|going forward|always|never|don't|do not|must|should)\b",
    re.IGNORECASE,
)
_ASKS = re.compile(
    r"\b(?:please|pls|can you|could you|would you|add|fix|implement|make|update|remove|rename|"
    r"write|change|create|need|want|use|build|refactor|migrate|delete)\b",
    re.IGNORECASE,
)


def intent(line: str) -> int:
    """How much a user message says about the task: 3 corrects or decides, 2 asks for work,
    1 anything else (questions, pastes), 0 a bare acknowledgement ("ok continue")."""
    text = line[2:] if line.startswith("- ") else line
    if _DECIDES.search(text):
        return 3
    if _ASKS.search(text):
        return 2
    return 0 if word_count(text) < 4 and not text.rstrip().endswith(("?", "？")) else 1


def is_request(message: ChatMessage) -> bool:
    """A message the user typed (not a tool result carrier, not injected, not a summary)."""
    if message.role != "user" or message.is_meta or message.kind != "message":
        return False
    if any(b.get("type") == "tool_result" for b in message.content):
        return False
    text = message.text
    return bool(text) and not is_harness_text(text)


@dataclass
class Turn:
    """A user request and everything the assistant did until the next request."""

    request: ChatMessage | None
    messages: list[ChatMessage] = field(default_factory=list)

    @property
    def tool_uses(self) -> list[Mapping[str, Any]]:
        return [b for m in self.messages if m.role == "assistant" for b in m.tool_uses]

    @property
    def results(self) -> list[Mapping[str, Any]]:
        return [
            b
            for m in self.messages
            if m.role == "user"
            for b in m.content
            if b.get("type") == "tool_result"
        ]

    @property
    def final_text(self) -> str:
        for m in reversed(self.messages):
            if m.role == "assistant" and m.has_text:
                return m.text
        return ""


def split_turns(messages: Sequence[ChatMessage]) -> list[Turn]:
    turns: list[Turn] = []
    for m in messages:
        if m.is_boundary or m.kind == "compact_summary":
            continue
        if is_request(m):
            turns.append(Turn(m))
        elif turns:
            turns[-1].messages.append(m)
        else:
            turns.append(Turn(None, [m]))
    return turns


def failed_results(turn: Turn) -> list[tuple[str, str]]:
    """(tool description, first error line) for every failed tool result in ``turn``.

    A result failed when the harness flagged it (``is_error``), or when it is shell output that
    says so (a traceback, FAILED, a non-zero exit code). File contents are never read as
    errors: code that mentions ``ValueError`` is not a failure.
    """
    uses = {str(b.get("id")): b for b in turn.tool_uses}
    found: list[tuple[str, str]] = []
    for block in turn.results:
        text = readable_result(block.get("content"))
        if text == CLEARED:
            continue  # microcompacted: what it said is gone from this copy
        use = uses.get(str(block.get("tool_use_id")))
        shell = use is not None and str(use.get("name", "")) in SHELL_TOOLS
        flagged = bool(block.get("is_error")) or (shell and bool(FAILURE_MARK.search(text)))
        if not flagged:
            continue
        line = first_error_line(text)
        what = "tool"
        if use is not None:
            target = tool_path(use) or tool_command(use) or ""
            what = f"{use.get('name', 'tool')} {one_line(target, 80)}".strip()
        found.append((what, one_line(line or text, 240)))
    return found


FAILURE_MARK = re.compile(
    r"Traceback \(most recent call last\)|\bFAILED\b|exit (?:code|status) [1-9]|"
    r"command not found|^error(?:\[\w+\])?:|\bfatal:|\bpanic:",
    re.MULTILINE,
)


def first_error_line(text: str) -> str | None:
    lines = [ln.strip() for ln in text.splitlines()[-400:] if ln.strip()]  # errors end output
    for pattern in (_EXCEPTION_LINE, _ERROR_LINE, _WEAK_ERROR_LINE):
        for ln in reversed(lines):  # the last error line is usually the real one (tracebacks)
            if pattern.search(ln):
                return ln
    return None


def result_lines(turn: Turn) -> list[str]:
    """Lines of tool output that state a result (test summaries, commits, benchmark figures)."""
    found: list[str] = []
    for block in turn.results:
        for ln in readable_result(block.get("content")).splitlines():
            if _RESULT_LINE.search(ln) and len(ln.strip()) > 3:
                found.append(one_line(ln.strip(" =-"), 200))
    return found
