"""The LLM dream: a sandboxed agent consolidates the memory dir, observable and cancellable.

Invariants:

* The model gets the extraction sandbox (:func:`~memdir.agent.policy.memory_agent_policy`):
  read anywhere, read-only shell, Edit/Write only on Markdown inside the memory dir. Its writes go
  through a :class:`~memdir.consolidate.snapshot.JournalingStore`, so each path is journaled
  before it changes and the snapshot taken before the run can restore it.
* :class:`DreamTask` is the observable state the reference shows: phase (``starting`` until the
  first file is touched, then ``updating``; ``done``, ``failed`` or ``killed`` at the end), the
  sessions being reviewed, files touched, and the last 30 turns (text + tool-use count).
* Cancel (``task.cancel()`` or cancelling the coroutine) and failure restore every file the run
  touched from the snapshot — beyond the reference, which keeps half a dream — and re-raise or
  report, so :func:`~memdir.consolidate.run.maybe_dream` rolls the lock back too.
* Success marks the daily-log bullets the model was shown as distilled, then asks the model for
  the ``applies_when`` of the memories the run changed and of a few that have none
  (:mod:`~memdir.consolidate.applies`; ``applies_limit`` per run, 0 turns it off), written
  through the same journaled store, so ``undo`` covers them too.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memdir.agent.policy import memory_agent_policy
from memdir.agent.runner import AgentRunner
from memdir.agent.tools import memory_tools
from memdir.agent.toolset import ToolResult, Toolset, WrapperToolset
from memdir.consolidate import applies
from memdir.consolidate.base import DreamReport
from memdir.consolidate.logs import DISTILLED_NAME, DistilledRecord
from memdir.consolidate.snapshot import JournalingStore, Snapshots
from memdir.index import ENTRYPOINT_NAME
from memdir.llm.base import Provider, ToolUseBlock
from memdir.prompts.templates import render
from memdir.scan import format_manifest
from memdir.store import MemoryStore

Phase = Literal["starting", "updating", "done", "failed", "killed"]
SUCCESSFUL_STOPS = frozenset({"end_turn", "max_turns"})
MAX_TURN_NOTES = 30


@dataclass(frozen=True, slots=True)
class TurnNote:
    text: str
    tool_use_count: int


@dataclass
class DreamTask:
    """What a running LLM dream is doing (read it from another task; cancel it from anywhere)."""

    sessions_reviewing: int = 0
    phase: Phase = "starting"
    files_touched: list[str] = field(default_factory=list)
    _task: asyncio.Task[Any] | None = None
    _runner: AgentRunner | None = None

    @property
    def turns(self) -> list[TurnNote]:
        """The last 30 assistant turns so far (live while the dream runs)."""
        run = self._runner.current if self._runner is not None else None
        if run is None:
            return []
        notes: deque[TurnNote] = deque(maxlen=MAX_TURN_NOTES)
        for message in list(run.messages):
            if message.role == "assistant":
                uses = sum(isinstance(b, ToolUseBlock) for b in message.blocks)
                notes.append(TurnNote(message.text, uses))
        return list(notes)

    def cancel(self) -> bool:
        """Stop the dream; its changes are rolled back. False if it is not running."""
        if self._task is None or self._task.done():
            return False
        return self._task.cancel()

    def touched(self, rel: str) -> None:
        if rel not in self.files_touched:
            self.files_touched.append(rel)
        if self.phase == "starting":
            self.phase = "updating"

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "sessions_reviewing": self.sessions_reviewing,
            "files_touched": list(self.files_touched),
            "turns": [{"text": t.text[:200], "tool_uses": t.tool_use_count} for t in self.turns],
        }


class _Observe(WrapperToolset):
    """Records successful writes in the task (its phase turns to "updating" on the first)."""

    def __init__(self, inner: Toolset, task: DreamTask, root: Path) -> None:
        super().__init__(inner)
        self.task = task
        self.root = root

    async def call(self, name: str, input: Mapping[str, Any]) -> ToolResult:
        result = await self.inner.call(name, input)
        if result.written_path is not None and not result.is_error:
            self.task.touched(result.written_path.relative_to(self.root).as_posix())
        return result


class AgentDreamer:
    """A :class:`~memdir.consolidate.base.Dreamer` backed by a model in the memory sandbox."""

    def __init__(
        self,
        provider: Provider,
        store: MemoryStore,
        snapshots: Snapshots,
        *,
        transcripts_dir: Path | None = None,
        cwd: Path | None = None,
        max_turns: int = 20,
        time_limit: float = 600.0,
        max_tokens: int = 4096,
        today: dt.date | None = None,
        applies_limit: int = applies.MODEL_PER_RUN,
    ) -> None:
        self.provider = provider
        self.store = store
        self.snapshots = snapshots
        self.transcripts_dir = transcripts_dir
        self.cwd = cwd
        self.max_turns = max_turns
        self.time_limit = time_limit
        self.max_tokens = max_tokens
        self.today = today
        self.applies_limit = applies_limit
        self.task = DreamTask()

    def instruction(self, sessions: Sequence[str], pending_logs: Sequence[str]) -> str:
        headers = [
            h for h in self.store.scan(limit=None).headers if not h.filename.startswith("logs/")
        ]
        return render(
            "dream.md",
            "instruction",
            memory_dir=str(self.store.root),
            today=(self.today or dt.date.today()).isoformat(),
            pending_logs=", ".join(f"`{p}`" for p in pending_logs) or "none",
            transcripts_dir=str(self.transcripts_dir or "(unknown)"),
            sessions=", ".join(sessions[:50]) or "none",
            manifest=format_manifest(headers) or "(no memories yet)",
            **self._stale(headers),
        )

    def _stale(self, headers: Sequence[Any]) -> dict[str, str]:
        """The memories evidence (memdir.evidence) found outgrown, for the instruction."""
        from memdir.evidence import screen
        from memdir.evidence.repo import Deadline
        from memdir.evidence.service import repository

        cwd = self.cwd
        found = repository(cwd, Deadline(5.0)) if cwd is not None else None
        if found is None or cwd is None:
            return {"head": "<commit>", "stale": "- (not checked: no git repository here)"}
        lines = []
        checked = screen([h.path for h in headers], cwd, None, budget=60.0)
        for h, c in zip(headers, checked, strict=True):
            ev = c.evidence
            if ev.stale:
                said = "; ".join(
                    f"`{v.anchor}` {v.state}" + (f" ({v.detail})" if v.detail else "")
                    for v in ev.verdicts
                    if v.depends and v.state != "current"
                )
                lines.append(f"- `{h.filename}`: {said}")
        return {"head": found[1], "stale": "\n".join(lines[:50]) or "- none"}

    async def dream(self, sessions: Sequence[str]) -> DreamReport:
        task = self.task
        task._task = asyncio.current_task()
        task.sessions_reviewing = len(sessions)
        root = self.store.root
        record = await asyncio.to_thread(DistilledRecord, root)
        pending = await asyncio.to_thread(record.pending)
        pending_logs = list(dict.fromkeys(b.log for b in pending))
        instruction = await asyncio.to_thread(self.instruction, sessions, pending_logs)
        snap = await asyncio.to_thread(self.snapshots.take, "llm dream")
        journaled = JournalingStore(self.store, snap, retire_reason="retired by dream")
        toolset = _Observe(
            memory_agent_policy(memory_tools(journaled, cwd=self.cwd), root), task, root
        )
        runner = AgentRunner(
            self.provider,
            toolset,
            system=render("dream.md", "system"),
            max_turns=self.max_turns,
            time_limit=self.time_limit,
            max_tokens=self.max_tokens,
        )
        task._runner = runner
        try:
            run = await runner.run(instruction)
        except BaseException:
            task.phase = "killed"
            await asyncio.shield(asyncio.to_thread(self.snapshots.undo, snap.id, force=True))
            raise
        if run.stop_reason not in SUCCESSFUL_STOPS:
            task.phase = "failed"
            await asyncio.to_thread(self.snapshots.undo, snap.id, force=True)
            return DreamReport("llm", ok=False, error=run.error or run.stop_reason)
        if pending:
            record.mark(pending)
            snap.touch([DISTILLED_NAME])
            await asyncio.to_thread(record.save)
        changed = [
            rel
            for rel in (p.relative_to(root).as_posix() for p in run.written_paths)
            if rel.rsplit("/", 1)[-1] != ENTRYPOINT_NAME
        ]
        details: dict[str, Any] = {}
        if self.applies_limit > 0:
            found = await applies.with_model(journaled, self.provider, changed, self.applies_limit)
            changed += [rel for rel in found.written if rel not in changed]
            details["applies_when"] = {"written": list(found.written), "skipped": found.skipped}
        await asyncio.to_thread(snap.finish, root)
        task.phase = "done"
        details |= {"task": task.as_dict(), "run": run.summary(), "summary": run.final_text}
        return DreamReport("llm", changed=changed, snapshot=snap.id if changed else None,
                           details=details)  # fmt: skip
