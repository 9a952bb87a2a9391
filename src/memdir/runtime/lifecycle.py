"""MemoryRuntime: the memory lifecycle of one agent session, as explicit steps an agent loop calls.

::

    rt = MemoryRuntime(settings, paths, provider=provider)   # provider may be None (offline)
    await rt.start()                        # prompt section, team pull, snapshot check, dream gate
    system = BASE_PROMPT + rt.system_prompt
    rt.on_user_message(text)                # recall starts (prompt + recent context); returns
    messages = rt.attach(messages, await rt.attachments())
    messages = await rt.before_model_call(messages, context_window=200_000)
    ...                                     # the model call and tools: the caller's
    await rt.on_turn_end(messages)          # transcript, extraction, session notes, team push
    report = await rt.end()                 # drain (bounded), flush, maybe dream

Invariants:

* Nothing a background job does can break a turn: recall, extraction, session notes, team sync
  and dream run as tasks whose failures are recorded in :meth:`status` and logged, never raised.
* Every background job is bounded (a time limit each; :meth:`end` waits ``drain_timeout`` in
  total and cancels and reports what is left) and cancellable (:meth:`cancel`).
* Settings are resolved once, by the caller, and passed in; the runtime never reads the process
  environment. With ``provider=None`` every step still works offline (local or keyword recall,
  rule extraction); with memory disabled the runtime only keeps the transcript.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memdir.agents import AgentMemory, check_snapshot, initialize
from memdir.atomic import ensure_dir
from memdir.config import Settings
from memdir.errors import MemdirError
from memdir.extract.base import ExtractionResult, Extractor
from memdir.extract.service import ExtractionService
from memdir.llm.base import Message, Provider
from memdir.paths import ResolvedPaths, sanitize_path
from memdir.prompt_context import RecallContext
from memdir.prompts.memory import build_prompt_for_paths
from memdir.recall.engine import MemoryRecall
from memdir.recall.session import RecallSession
from memdir.recall.surface import Attachment
from memdir.runtime.compaction import CompactionOutcome, CompactionStep, failed_report
from memdir.runtime.conversation import ConversationLog, chat_messages, with_attachments
from memdir.runtime.options import EndReport, RuntimeOptions, StartReport
from memdir.runtime.recall_step import MemoRecallSession
from memdir.runtime.recall_turn import RecallTurn, build_engine
from memdir.runtime.steps import DreamStep, TeamStep
from memdir.runtime.tasks import TaskBoard, TaskStatus
from memdir.team.guard import guarded_store
from memdir.transcripts import Transcript

if TYPE_CHECKING:
    from memdir.consolidate import Dreamer, DreamGate
    from memdir.session import SessionMemory
    from memdir.session.compactor import Compactor
    from memdir.team.client import TeamSyncClient

log = logging.getLogger(__name__)

COMPONENTS = ("recall", "extraction", "session_memory", "compaction", "team", "dream")


class MemoryRuntime:
    """One object per agent session; see the module docstring for the call order."""

    def __init__(
        self,
        settings: Settings,
        paths: ResolvedPaths,
        *,
        provider: Provider | None = None,
        session_id: str | None = None,
        agent: AgentMemory | None = None,
        recall: MemoryRecall | None = None,
        extractor: Extractor | None = None,
        team_client: TeamSyncClient | None = None,
        session_memory: SessionMemory | None = None,
        compactor: Compactor | None = None,
        dreamer: Dreamer | None = None,
        dream_gate: DreamGate | None = None,
        options: RuntimeOptions | None = None,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.provider = provider
        self.session_id = session_id or str(uuid.uuid4())
        self.agent = agent
        self.options = options or RuntimeOptions()
        self.enabled = settings.auto_memory_enabled
        self.memory_dir: Path = agent.memory_dir if agent is not None else paths.memory_dir
        self.cache_dir = (
            paths.cache_dir
            if agent is None
            else settings.memdir_home / "cache" / sanitize_path(str(agent.memory_dir))
        )
        self.store = guarded_store(  # the credential guards hold for background writers too
            self.memory_dir, settings.private_secrets, self.cache_dir / "headers.json"
        )
        self.system_prompt = ""
        self.recall_session: RecallSession = MemoRecallSession()
        self.board = TaskBoard()
        self.log = ConversationLog(
            Transcript(paths.transcript_path(self.session_id), self.session_id, str(paths.cwd)),
            model=self.options.model_name,
        )
        self._recall = recall
        self._turn = RecallTurn(self.board, self.recall_session, self.options, paths.project_root)
        self._extractor = extractor
        self._extraction: ExtractionService | None = None
        self._team_client = team_client
        self._team: TeamStep | None = None
        self._dream: DreamStep | None = None
        self._dreamer = dreamer
        self.session_memory = session_memory
        self.compactor = compactor
        self._compaction: CompactionStep | None = None
        self.transcript_lock = asyncio.Lock()  # compaction boundaries and appends stay in order
        self._writer: asyncio.Task[None] | None = None
        self._dream_gate = dream_gate
        self._notices: list[str] = []
        self._started = False
        self._ended = False

    @property
    def recall_engine(self) -> MemoryRecall | None:
        """The recall in use (built by :meth:`start` unless one was passed in)."""
        return self._recall

    # -- start ---------------------------------------------------------------------------
    async def start(self) -> StartReport:
        """Resolve the memory side of the session; returns the system-prompt section."""
        if self._started:
            raise MemdirError("MemoryRuntime.start() was already called")
        self._started = True
        report = StartReport(system_prompt="")
        if not self.enabled:
            for name in COMPONENTS:
                self.board.set(name, state="off", detail="auto memory is disabled")
            return report
        ensure_dir(self.memory_dir)
        if self._team_client is not None and self.agent is None:
            self._team = TeamStep(
                self._team_client,
                self.board,
                debounce=self.options.team_debounce,
                pull_timeout=self.options.team_pull_timeout,
            )
            await self._team.start()
        if self.agent is not None:
            report.snapshot = await asyncio.to_thread(self._snapshot_check)
        if self._recall is None:
            built, note = await asyncio.to_thread(
                build_engine, self.settings, self.memory_dir, self.cache_dir, self.provider
            )
            self._recall = built
            if note:
                self.board.set("recall", detail=note)
        self._turn.use(self._recall)
        self._turn.warm_up()
        self._extraction = self._build_extraction()
        self._build_session_memory()
        self._build_compaction()
        self.system_prompt = await asyncio.to_thread(self._build_prompt)
        report.system_prompt = self.system_prompt
        self._start_dream()
        report.notices = self.notices()
        return report

    def _default_dreamer(self) -> Dreamer:
        from memdir.consolidate.factory import snapshots

        saved = snapshots(self.store, self.paths)
        if self.provider is not None:
            from memdir.consolidate.agent import AgentDreamer

            return AgentDreamer(
                self.provider,
                self.store,
                saved,
                transcripts_dir=self.paths.transcripts_dir,
                cwd=self.paths.cwd,
            )
        from memdir.consolidate.offline import OfflineDreamer

        return OfflineDreamer(self.store, saved, project_root=self.paths.project_root)

    def _start_dream(self) -> None:
        if self.agent is not None or not self.options.dream:  # the main agent's memory only
            self.board.set("dream", state="off", detail="no dreamer for agent memory or turned off")
            return
        if self._dreamer is None:
            self._dreamer = self._default_dreamer()
        gate = self._dream_gate

        def make_gate() -> DreamGate:
            if gate is not None:
                return gate
            from memdir.consolidate.factory import dream_gate

            return dream_gate(self.settings, self.paths)

        self._dream = DreamStep(
            self._dreamer,
            make_gate,
            self.board,
            self._notices.append,
            session_id=self.session_id,
            timeout=self.options.dream_timeout,
        )
        self._dream.maybe()

    def _build_prompt(self) -> str:
        if self.agent is not None:
            return self.agent.prompt(extra_guidelines=self.settings.extra_guidelines)
        return build_prompt_for_paths(
            self.paths, self.settings, search_past_context=self.options.search_past_context
        )

    def _snapshot_check(self) -> str:
        assert self.agent is not None
        check = check_snapshot(self.agent, self.paths.agent_snapshot_dir(self.agent.agent_type))
        if check.note:
            self._notices.append(f"agent snapshot: {check.note}")
        if check.action == "initialize":
            copied = initialize(self.agent, check)
            self._notices.append(
                f"Initialised {self.agent.agent_type} memory from the project snapshot "
                f"({len(copied.copied)} files, {check.updated_at})"
            )
        elif check.action == "prompt-update":
            self._notices.append(
                f"The project snapshot of {self.agent.agent_type} ({check.updated_at}) is newer "
                f"than its memory: run `memdir agent sync {self.agent.agent_type} "
                f"--scope {self.agent.scope}` to adopt it"
            )
        return check.action

    def _build_session_memory(self) -> None:
        if not self.options.session_memory:
            self.session_memory = None
            self.board.set("session_memory", state="off", detail="turned off")
            return
        if self.session_memory is None:
            from memdir.session import OfflineUpdater, SessionMemory
            from memdir.session.llm_updater import LLMUpdater

            path = self.paths.session_memory_path(self.session_id)
            updater = LLMUpdater(self.provider) if self.provider is not None else OfflineUpdater()
            self.session_memory = SessionMemory(path, updater)
        self.board.set("session_memory", detail=f"{self.session_memory.updater.name} notes")

    def _build_compaction(self) -> None:
        if not self.options.compaction:
            self.board.set("compaction", state="off", detail="turned off")
            return
        if self.compactor is None:
            from memdir.session.compactor import Compactor

            self.compactor = Compactor(
                session_memory=self.session_memory,
                provider=self.provider,
                transcript=self.log.transcript,
                recall_session=self.recall_session,
            )
        self._compaction = CompactionStep(self.compactor, self.log, self.transcript_lock)
        rungs = ["microcompact"]
        rungs += ["session notes"] if self.compactor.session_memory is not None else []
        rungs += ["full summary"] if self.compactor.provider is not None else []
        self.board.set("compaction", detail=" → ".join(rungs))

    def _build_extraction(self) -> ExtractionService | None:
        mode = self.options.extraction
        if mode == "off":
            self.board.set("extraction", state="off", detail="turned off")
            return None
        extractor = self._extractor
        if extractor is None:
            if self.provider is not None and mode in ("auto", "llm"):
                from memdir.extract.agent import AgentExtractor

                extractor = AgentExtractor(self.provider, self.store, cwd=self.paths.cwd)
                detail = "LLM extraction agent"
            else:
                from memdir.extract.rule_extractor import RuleExtractor

                extractor = RuleExtractor(self.store)
                detail = "offline rules"
            self.board.set("extraction", detail=detail)
        return ExtractionService(
            self.memory_dir,
            extractor,
            every_n_turns=self.options.extract_every_n_turns,
            on_result=self._on_extraction,
        )

    # -- each turn -----------------------------------------------------------------------
    def on_user_message(
        self,
        text: str,
        *,
        recent_tools: Sequence[str] = (),
        context: RecallContext | None = None,
    ) -> None:
        """Start recall for this turn in the background (needs a running loop); never blocks.

        The query carries ``context`` (default: the recent turns, files and tools of the
        conversation given to the last :meth:`on_turn_end`; memdir.runtime.recall_turn).
        """
        if self.enabled:
            self._turn.start(text, recent_tools, context)

    async def attachments(self, *, wait: float | None = None) -> list[Attachment]:
        """This turn's recalled memories if recall has finished (waiting at most ``wait``).

        Taken attachments are recorded as surfaced (never shown twice) and count against the
        session budget; a recall still running after ``wait`` is left for a later call.
        """
        return await self._turn.take(wait)

    @staticmethod
    def attach(messages: Sequence[Message], attachments: Sequence[Attachment]) -> list[Message]:
        """``messages`` with the attachments joined to the last user message."""
        return with_attachments(messages, attachments)

    async def before_model_call(
        self,
        messages: Sequence[Message],
        *,
        context_window: int,
        usage_tokens: int | None = None,
    ) -> list[Message]:
        """The compaction ladder; returns the messages to send (the same ones if nothing fired).

        ``usage_tokens``: the provider's input-token count of the last call, when known (more
        exact than the estimate). A compaction that fails leaves the messages as they were.
        """
        if self._compaction is None or not self.enabled:
            return list(messages)
        outcome = await self._compact(messages, context_window, False, usage_tokens)
        return outcome.messages

    async def compact_now(
        self, messages: Sequence[Message], *, context_window: int = 200_000
    ) -> tuple[list[Message], str]:
        """A manual compaction (``/compact``): the new messages and the line to show."""
        if self._compaction is None:
            return list(messages), "compaction is off in this runtime"
        if not messages:
            return [], "nothing to compact yet"
        outcome = await self._compact(messages, context_window, True, None)
        report = outcome.report
        return outcome.messages, outcome.notice or f"not compacted: {report.error or report.rung}"

    async def _compact(
        self, messages: Sequence[Message], window: int, force: bool, usage: int | None
    ) -> CompactionOutcome:
        assert self._compaction is not None
        try:
            outcome = await self._compaction.run(messages, window, force=force, usage_tokens=usage)
        except Exception as exc:  # the ladder reports its own failures; anything else is a bug
            log.exception("compaction step failed")
            self.board.set("compaction", state="failed", last_error=f"{type(exc).__name__}: {exc}")
            return CompactionOutcome(list(messages), failed_report(window))
        report = outcome.report
        status = self.board.status("compaction")
        if report.rung == "failed" or report.error:
            self.board.set("compaction", state="failed", last_error=report.error)
            self._notices.append(f"compaction failed: {report.error}")
        elif report.rung != "none":
            self.board.set(
                "compaction",
                state="ok",
                runs=status.runs + int(outcome.compacted),
                last_error=None,
                last_seconds=report.elapsed_s,
                detail=f"last: {report.rung}, {report.tokens_before:,} → {report.tokens_after:,}",
            )
        if outcome.notice:
            self._notices.append(outcome.notice)
        return outcome

    async def on_turn_end(self, messages: Sequence[Message]) -> None:
        """The turn is complete: schedule the transcript append, extraction, notes and sync."""
        snapshot = list(messages)
        self._turn.remember(snapshot)
        turns = self.log.assign(snapshot)
        self._write_transcript(snapshot)
        if not self.enabled:
            return
        if self._extraction is not None:
            self._extraction.notify_turn_end(turns)
            self.board.set("extraction", state="running" if self._extraction.in_progress else "ok")
        if self.session_memory is not None:
            try:
                started = self.session_memory.maybe_update(chat_messages(turns))
            except Exception as exc:  # the notes are a convenience; the turn goes on
                log.warning("session notes update not started: %s", exc)
                started = False
            if started:
                self.board.set("session_memory", state="running")
        if self._team is not None:
            self._team.notify()

    def _write_transcript(self, messages: list[Message]) -> None:
        """Append in the background, in turn order: each write waits for the one before."""
        previous = self._writer

        async def write() -> None:
            if previous is not None:
                await asyncio.wait({previous})
            async with self.transcript_lock:
                try:
                    await asyncio.to_thread(self.log.record, messages)
                except (OSError, MemdirError) as exc:  # a full disk must not end the session
                    log.warning("could not append to the transcript: %s", exc)
                    self._notices.append(f"transcript not written: {exc}")

        self._writer = asyncio.get_running_loop().create_task(write(), name="memdir-transcript")

    # -- background results --------------------------------------------------------------
    def _on_extraction(self, result: ExtractionResult) -> None:
        status = self.board.status("extraction")
        if not result.ok:
            self.board.set("extraction", state="failed", last_error=result.error)
            self._notices.append(f"memory extraction failed: {result.error}")
        else:
            self.board.set("extraction", state="ok", last_error=None)
        run = result.run
        self.board.set(
            "extraction",
            runs=status.runs + (0 if result.skipped else 1),
            detail=result.notice or result.skipped or status.detail,
            last_seconds=run.elapsed if run is not None else status.last_seconds,
        )
        if result.notice:
            self._notices.append(result.notice)

    async def dream_now(self) -> str:
        """A manual dream (gates skipped, the lock respected), awaited; the line to show."""
        if self._dream is None:
            return "no dreamer configured"
        return await self._dream.now()

    def notices(self) -> list[str]:
        """User-facing lines since the last call ("Saved 2 memories", failures); cleared."""
        out = list(self._notices)
        self._notices.clear()  # in place: the dream step holds a reference to this list
        return out

    def status(self) -> list[TaskStatus]:
        """Every background component with its state, run count, last error and detail."""
        if self._extraction is not None and self._extraction.in_progress:
            self.board.set("extraction", state="running")
        self._session_status()
        return [self.board.status(name) for name in COMPONENTS]

    def _session_status(self) -> None:
        memory = self.session_memory
        if memory is None or self.board.status("session_memory").state == "off":
            return
        state = memory.state
        outcome = memory.last_outcome
        if memory.in_progress:
            self.board.set("session_memory", state="running", runs=state.updates)
        elif outcome is not None:
            self.board.set(
                "session_memory",
                state="ok" if outcome.ok else "failed",
                runs=state.updates,
                last_error=outcome.error,
                last_seconds=outcome.elapsed_s,
                detail=f"{memory.updater.name} notes, {outcome.notes_tokens} tokens",
            )

    async def cancel(self, name: str) -> bool:
        """Stop one background component now; True if something was running."""
        if name == "recall":
            return self._turn.cancel()
        if name == "session_memory" and self.session_memory is not None:
            running = self.session_memory.in_progress
            await self.session_memory.cancel()
            return running
        if name == "extraction" and self._extraction is not None:
            running = self._extraction.in_progress
            await self._extraction.cancel()
            if running:
                self.board.set("extraction", state="cancelled")
            return running
        return await self.board.cancel(name)

    # -- end -----------------------------------------------------------------------------
    async def end(self, *, timeout: float | None = None) -> EndReport:
        """Drain background work (``timeout`` in total), flush team sync; report what was late."""
        report = EndReport()
        if self._ended:
            return report
        self._ended = True
        budget = self.options.drain_timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        self._turn.cancel()
        await self._turn.stop_warm_up()
        if self._writer is not None:  # the transcript first: it is the session's record
            await asyncio.wait({self._writer}, timeout=max(5.0, budget))
        if self._extraction is not None:
            if await self._extraction.drain(timeout=max(0.0, deadline - time.monotonic())):
                report.drained.append("extraction")
            else:
                await self._extraction.cancel()
                report.timed_out.append("extraction")
                self.board.set(
                    "extraction", state="timed_out", last_error=f"still running after {budget:g}s"
                )
        if self.session_memory is not None and self.session_memory.in_progress:
            left = max(0.0, deadline - time.monotonic())
            if await self.session_memory.drain(timeout=left):
                report.drained.append("session_memory")
            else:
                await self.session_memory.cancel()
                report.timed_out.append("session_memory")
                self.board.set("session_memory", state="timed_out")
        self._session_status()
        if self._dream is not None:
            left = max(0.0, deadline - time.monotonic())
            (report.drained if await self._dream.finish(left) else report.timed_out).append("dream")
        if self._team is not None:
            left = max(0.0, deadline - time.monotonic())
            (report.drained if await self._team.stop(left) else report.timed_out).append("team")
        report.notices = self.notices()
        return report
