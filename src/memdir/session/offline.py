"""The offline notes updater: fills the 10 sections from the conversation's structure alone.

No model is involved, so it is deterministic and fast, and compaction keeps its meaning with no
API key. It is incremental: it reads the current notes, merges in what the new messages add, and
writes one file in the template's structure. What it fills:

* Session Title — the first real ask (kept once set); Current State — the latest request (a
  one-word answer with the option it picked), the latest real reply, the task list with its state
  (:mod:`~memdir.session.tasks`, kept across merges) and the assistant's "next" statements;
* Task specification — every user request (queued ones included), short, answers resolved
  (:mod:`~memdir.session.narration`); only when over the cap are the oldest shortened, then folded;
* Files and Functions — each path read/edited/written with counts and the functions an edit
  touched; Workflow — the latest shell commands with counts; Errors & Corrections — error → fix
  pairs (:mod:`~memdir.session.outcomes`), causes stated in the narration and the user's
  corrections; Learnings — the user's standing instructions and the decisions in the narration;
  Key results — test-run summaries of common runners and commits; Worklog — one line per turn.

Invariants: the output always has exactly the template's sections (hand-written lines it cannot
parse are kept as they are); every section stays under its cap and the whole under the total,
trimming the least important lines first; file paths are the last thing ever trimmed.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memdir.extract.rules import candidates
from memdir.script import word_count
from memdir.session import answers, facts, narration, outcomes, tasks, worktree
from memdir.session.memory import UpdateOutcome
from memdir.session.messages import ChatMessage
from memdir.session.notes import (
    SECTION_MAX_TOKENS,
    TOTAL_MAX_TOKENS,
    parse_notes,
    render_notes,
    write_notes,
)
from memdir.session.notes_budget import fit_sections

REQUEST_CHARS = 400
WORKFLOW_LINES = 25
CORRECTION_RULES = frozenset({"correction"})
LEARNING_RULES = frozenset({"from-now-on", "directive", "preference", "remember"})
_FILE_LINE = re.compile(
    r"^- `(?P<path>[^`]+)` — (?P<counts>[a-z]+ \d+(?:, [a-z]+ \d+)*)(?: — fn: (?P<fns>.*))?$"
)
_CMD_LINE = re.compile(r"^- `(?P<cmd>.+)`(?: ×(?P<n>\d+))?$")
ACTIONS = ("read", "edited", "written")


@dataclass
class _FileInfo:
    counts: dict[str, int] = field(default_factory=dict)
    functions: list[str] = field(default_factory=list)

    def line(self, path: str, *, with_functions: bool = True) -> str:
        counts = ", ".join(f"{a} {self.counts[a]}" for a in ACTIONS if self.counts.get(a))
        fns = f" — fn: {', '.join(self.functions[:8])}" if with_functions and self.functions else ""
        return f"- `{path}` — {counts or 'read 0'}{fns}"


def _bullets(body: str) -> tuple[list[str], list[str]]:
    """(bullet lines, other lines) of a section body."""
    lines = [ln for ln in body.splitlines() if ln.strip()]
    return [ln for ln in lines if ln.startswith("- ")], [
        ln for ln in lines if not ln.startswith("- ")
    ]


class OfflineUpdater:
    """Merges new messages into notes text; see the module docstring."""

    name = "offline"
    cursor_at_end = True

    def __init__(
        self,
        *,
        section_tokens: int = SECTION_MAX_TOKENS,
        total_tokens: int = TOTAL_MAX_TOKENS,
        today: Callable[[], dt.date] = dt.date.today,
    ) -> None:
        self.section_chars = section_tokens * 4
        self.total_chars = total_tokens * 4
        self.today = today

    def render(self, current: str, new_messages: Sequence[ChatMessage], template: str) -> str:
        notes = parse_notes(current)
        known = {s.name for s in parse_notes(template).sections}
        bodies: dict[str, str] = {}
        for section in notes.sections:  # a section repeated by hand: keep both bodies
            if section.name in known:
                bodies[section.name] = _append(bodies.get(section.name, ""), [section.body])
        stray = [s for s in notes.sections if s.name not in known]
        if notes.preamble or stray:  # hand edits outside the sections: keep them, in the worklog
            kept = [notes.preamble] + [f"{s.name}: {s.body}" for s in stray]
            note = " / ".join(facts.one_line(k, 300) for k in kept if k.strip())
            if note:
                bodies["Worklog"] = (bodies.get("Worklog", "") + f"\n- (kept) {note}").strip()
        turns = facts.split_turns(new_messages)
        if turns:
            self._merge(bodies, turns)
        self._fit(bodies)
        return render_notes(bodies, template)

    async def update(
        self,
        path: Path,
        *,
        current: str,
        template: str,
        messages: Sequence[ChatMessage],
        new_messages: Sequence[ChatMessage],
        instruction_extra: str,
    ) -> UpdateOutcome:
        """Write the merged notes (``instruction_extra`` is for models; caps apply anyway)."""
        text = self.render(current, new_messages, template)
        changed = text != current
        if changed:
            await asyncio.to_thread(write_notes, path, text)
        tokens = parse_notes(text).total_tokens
        return UpdateOutcome(ok=True, updater=self.name, changed=changed, notes_tokens=tokens)

    # -- merging ----------------------------------------------------------------------------

    def _merge(self, bodies: dict[str, str], turns: list[facts.Turn]) -> None:
        requests = [t.request for t in turns if t.request is not None]
        if requests and not bodies.get("Session Title", "").strip():
            # the first real ask, not "ok" or the "1" that picked an option
            asks = [r for r in requests if word_count(r.text) >= 5] or requests
            bodies["Session Title"] = facts.title(asks[0].text, 80)
        previous = _latest_reply(bodies.get("Current State", ""))
        self._requests(bodies, turns, previous)
        self._files(bodies, turns)
        self._commands(bodies, turns)
        self._errors_and_learnings(bodies, turns)
        runs = [
            run
            for t in turns
            for run in outcomes.summary_runs(t.results, {str(u.get("id")): u for u in t.tool_uses})
        ]
        bodies["Key results"] = _latest_per_command(bodies.get("Key results", ""), runs)
        active = [t for t in turns if t.request is not None or t.tool_uses or t.final_text]
        bodies["Worklog"] = _append(bodies.get("Worklog", ""), [self._worklog(t) for t in active])
        state = tasks.update(tasks.parse(bodies.get("Current State", "").splitlines()), turns)
        bodies["Current State"] = self._current_state(
            turns, state, previous, bodies.get("Current State", "")
        )

    def _requests(self, bodies: dict[str, str], turns: list[facts.Turn], previous: str) -> None:
        lines = []
        for turn in turns:
            if turn.request is not None:
                lines.append(f"- {_request_line(turn.request.text, previous)}")
            lines += [f"- {said}" for said in answers.said([turn])]
            previous = turn.final_text or previous
        bodies["Task specification"] = _append(bodies.get("Task specification", ""), lines)

    def _files(self, bodies: dict[str, str], turns: list[facts.Turn]) -> None:
        bullets, other = _bullets(bodies.get("Files and Functions", ""))
        files: dict[str, _FileInfo] = {}
        loose: list[str] = []
        for line in bullets:
            m = _FILE_LINE.match(line)
            if not m:
                loose.append(line)
                continue
            info = files.setdefault(m.group("path"), _FileInfo())
            for part in m.group("counts").split(", "):
                action, n = part.rsplit(" ", 1)
                info.counts[action] = info.counts.get(action, 0) + int(n)
            if m.group("fns"):
                info.functions += [f for f in m.group("fns").split(", ") if f]
        for turn in turns:
            for use in turn.tool_uses:
                name = str(use.get("name", ""))
                action = facts.file_action(name, use)
                path = facts.tool_path(use)
                if action is None or path is None:
                    continue
                info = files.setdefault(path, _FileInfo())
                info.counts[action] = info.counts.get(action, 0) + 1
                for fn in facts.functions_in(use):
                    if fn not in info.functions:
                        info.functions.append(fn)
        lines = other + loose + [info.line(path) for path, info in files.items()]
        bodies["Files and Functions"] = "\n".join(lines)

    def _commands(self, bodies: dict[str, str], turns: list[facts.Turn]) -> None:
        bullets, other = _bullets(bodies.get("Workflow", ""))
        counts: dict[str, int] = {}
        loose: list[str] = []
        for line in bullets:
            m = _CMD_LINE.match(line)
            if m:
                counts[m.group("cmd")] = counts.get(m.group("cmd"), 0) + int(m.group("n") or 1)
            else:
                loose.append(line)
        for turn in turns:
            for use in turn.tool_uses:
                if str(use.get("name", "")) in facts.SHELL_TOOLS:
                    command = facts.tool_command(use)
                    if command:
                        key = facts.one_line(command, 160).replace("`", "'")
                        counts[key] = counts.pop(key, 0) + 1  # most recent last
        lines = [f"- `{c}`" + (f" ×{n}" if n > 1 else "") for c, n in counts.items()]
        # the most recent commands, not a ledger of every one (the worklog keeps the order)
        bodies["Workflow"] = "\n".join(other + loose + lines[-WORKFLOW_LINES:])

    def _errors_and_learnings(self, bodies: dict[str, str], turns: list[facts.Turn]) -> None:
        existing = [ln for ln in bodies.get("Errors & Corrections", "").splitlines() if ln.strip()]
        prior = [ln for ln in existing if outcomes.OPEN_LINE.match(ln) and "→ fixed:" not in ln]
        bodies["Errors & Corrections"] = "\n".join(ln for ln in existing if ln not in prior)
        errors = outcomes.error_fixes(turns, prior)
        decisions, causes = narration.statements([m for t in turns for m in t.messages])
        errors += [f"- Cause/fix: {c}" for c in causes if not any(c in e for e in errors)]
        learnings: list[str] = [f"- Decided: {d}" for d in decisions]
        today = self.today()
        for turn in turns:
            if turn.request is None:
                continue
            for cand in candidates(turn.request.text, today=today):
                if cand.rule in CORRECTION_RULES:
                    errors.append(f"- User correction: {facts.one_line(cand.source, 300)}")
                elif cand.rule in LEARNING_RULES and cand.kind == "save":
                    learnings.append(f"- {facts.one_line(cand.statement, 300)}")
        bodies["Errors & Corrections"] = _append_unique(
            bodies.get("Errors & Corrections", ""), errors
        )
        bodies["Learnings"] = _append_unique(bodies.get("Learnings", ""), learnings)

    def _worklog(self, turn: facts.Turn) -> str:
        tools: dict[str, int] = {}
        paths: list[str] = []
        for use in turn.tool_uses:
            name = str(use.get("name", "?"))
            tools[name] = tools.get(name, 0) + 1
            path = facts.tool_path(use)
            if path and path not in paths:
                paths.append(path.rsplit("/", 1)[-1])
        ask = facts.one_line(turn.request.text, 70) if turn.request else "(continued)"
        did = ", ".join(f"{n}×{c}" if c > 1 else n for n, c in tools.items()) or "answered"
        where = f" [{', '.join(dict.fromkeys(paths[:4]))}]" if paths else ""
        failed = " (errors)" if facts.failed_results(turn) else ""
        return f"- {ask} → {did}{where}{failed}"

    def _current_state(
        self, turns: list[facts.Turn], state: dict[str, str], previous: str, previous_state: str
    ) -> str:
        last = turns[-1]
        lines = []
        for i in range(len(turns) - 1, -1, -1):
            request = turns[i].request
            if request is not None:
                before = next((t.final_text for t in reversed(turns[:i]) if t.final_text), previous)
                lines.append(f"Latest request: {_request_line(request.text, before, 500)}")
                lines += [f"Then the user: {said}" for said in answers.said(turns[i:])[-2:]]
                break
        reply = next((t.final_text for t in reversed(turns) if _real_reply(t.final_text)), "")
        if reply:
            lines.append(f"Latest reply: {facts.one_line(reply, 600)}")
        task_lines = tasks.lines(state)
        if task_lines:
            lines.append("Tasks (from the task list; [ ] pending, [~] in progress, [x] done):")
            lines += task_lines
        lines += [f"Next (said): {n}" for n in tasks.next_steps(turns)]
        uncommitted = worktree.uncommitted(turns, previous_state)
        if uncommitted:
            lines.append(uncommitted)
        last_tools = [str(u.get("name")) for u in last.tool_uses]
        if last_tools:
            lines.append(f"Last step used: {', '.join(dict.fromkeys(last_tools))}")
            pending = last.messages[-1].role == "assistant" and bool(last.messages[-1].tool_uses)
            if pending:
                lines.append("A tool call was still running when these notes were written.")
        return "\n".join(lines)

    # -- caps -------------------------------------------------------------------------------

    def _fit(self, bodies: dict[str, str]) -> None:
        fit_sections(bodies, self.section_chars, self.total_chars)


_REPLY_LINE = re.compile(r"^Latest reply: (?P<x>.*)$", re.MULTILINE)
_HARNESS_REPLIES = frozenset({"No response requested.", "(no content)"})


def _latest_reply(current_state: str) -> str:
    m = _REPLY_LINE.search(current_state)
    return m.group("x") if m else ""


def _real_reply(text: str) -> bool:
    return bool(text.strip()) and text.strip() not in _HARNESS_REPLIES


def _request_line(text: str, asked: str, limit: int = REQUEST_CHARS) -> str:
    """A request as a notes line; a one-word answer says what it answered ("1 → Develop…")."""
    picked = narration.resolve_answer(text, asked)
    line = facts.condense(text, limit)
    return f"{line} → {picked}" if picked else line


def _append(body: str, lines: Sequence[str]) -> str:
    return "\n".join([*(ln for ln in body.splitlines() if ln.strip()), *lines])


_RESULT_KEY = re.compile(r"^`(?P<command>[^`]*)`: ")
_COMMIT_LINE = re.compile(r"^\[[\w/.-]+ [0-9a-f]{7,}\] ")


def _latest_per_command(body: str, runs: Sequence[Sequence[str]]) -> str:
    """Key results: a command's newest run replaces its earlier ones (the handover needs where
    the suite stands; the history is in Errors & Corrections); other lines are kept once."""

    def command(line: str) -> str | None:
        m = _RESULT_KEY.match(line)
        if m is None or _COMMIT_LINE.match(line[m.end() :]):
            return None  # every commit is a result of its own, whatever its command looked like
        return m.group("command")

    kept = [ln for ln in body.splitlines() if ln.strip()]
    for run in runs:
        rerun = {command(ln) for ln in run} - {None}
        kept = [ln for ln in kept if command(ln) not in rerun]
        kept += [ln for ln in dict.fromkeys(run) if ln not in kept]
    return "\n".join(kept)


def _append_unique(body: str, lines: Sequence[str]) -> str:
    existing = [ln for ln in body.splitlines() if ln.strip()]
    seen = set(existing)
    for line in lines:
        if line not in seen:
            existing.append(line)
            seen.add(line)
    return "\n".join(existing)


async def aupdate_notes_from_transcript(
    transcript_path: Path,
    notes_path: Path,
    *,
    template: str | None = None,
) -> UpdateOutcome:
    """Bring ``notes_path`` up to date with a transcript file, offline (hooks, CLI).

    Resumes from the session-memory state beside the notes, so running it again over a grown
    transcript only merges what is new.
    """
    from memdir.session.convert import load_transcript
    from memdir.session.memory import SessionMemory

    messages, _issues = await asyncio.to_thread(load_transcript, transcript_path)
    memory = SessionMemory(notes_path, OfflineUpdater(), template=template)
    return await memory.update_now(messages)


def update_notes_from_transcript(
    transcript_path: Path, notes_path: Path, *, template: str | None = None
) -> UpdateOutcome:
    """:func:`aupdate_notes_from_transcript` for synchronous callers (no running event loop)."""
    return asyncio.run(
        aupdate_notes_from_transcript(transcript_path, notes_path, template=template)
    )
