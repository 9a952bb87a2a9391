"""The LLM dream end to end: the scripted model makes real tool calls through the real sandbox."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from pathlib import Path

from memdir.consolidate.agent import AgentDreamer
from memdir.consolidate.gate import DreamConfig, DreamGate
from memdir.consolidate.lock import LOCK_NAME, ConsolidationLock
from memdir.consolidate.logs import DistilledRecord
from memdir.consolidate.run import maybe_dream
from memdir.consolidate.snapshot import Snapshots
from memdir.daily_log import append_log
from memdir.errors import ProviderUnavailableError
from memdir.llm.base import Completion, CompletionRequest
from memdir.llm.scripted import ScriptedProvider
from memdir.store import MemoryStore
from tests.consolidate.conftest import put, tree

MERGED = """---
name: Package manager
description: use pnpm, never npm
type: feedback
---
Use pnpm for every install, also in CI scripts.
"""


def setup(store: MemoryStore) -> None:
    put(store.root, "pnpm.md", "Package manager", "use pnpm", "Use pnpm for installs.\n")
    put(store.root, "pnpm_ci.md", "pnpm in CI", "pnpm in CI too", "CI scripts use pnpm too.\n")
    store.rebuild_index()
    append_log(
        store.root, "user said CI must use pnpm", now=dt.datetime(2026, 11, 29, 9).astimezone()
    )


def script(root: Path, outside: Path) -> list[Completion]:
    retired = (
        (root / "pnpm_ci.md")
        .read_text()
        .replace(
            "type: project\n", "type: project\nretired: '2026-11-30'\nretired_reason: merged\n"
        )
    )
    return [
        Completion.from_tool_calls(
            [
                ("Read", {"file_path": str(root / "MEMORY.md")}),
                ("Bash", {"command": f"ls {root}"}),
                ("Grep", {"pattern": "pnpm", "path": str(root / "logs")}),
            ]
        ),
        Completion.from_tool_calls(
            [
                ("Write", {"file_path": str(root / "pnpm.md"), "content": MERGED}),
                ("Write", {"file_path": str(root / "pnpm_ci.md"), "content": retired}),
                ("Write", {"file_path": str(outside), "content": MERGED}),
                ("Bash", {"command": f"rm {root / 'pnpm_ci.md'}"}),
                ("Write", {"file_path": str(root / "logs" / "x.md"), "content": "rewritten"}),
            ]
        ),
        Completion.from_text("Merged the two pnpm memories and retired the older one."),
    ]


async def test_llm_dream_through_the_sandbox(
    store: MemoryStore, snaps: Snapshots, tmp_path: Path
) -> None:
    setup(store)
    before = tree(store.root)
    outside = tmp_path / "outside.md"
    provider = ScriptedProvider(script(store.root, outside))
    dreamer = AgentDreamer(
        provider, store, snaps, transcripts_dir=tmp_path / "t", today=dt.date(2026, 11, 30)
    )
    report = await dreamer.dream(["s-1", "s-2"])

    assert report.ok and sorted(report.changed) == ["pnpm.md", "pnpm_ci.md"]  # parallel calls
    assert report.notice == "Improved 2 memories"
    assert (store.root / "pnpm.md").read_text() == MERGED
    assert (store.root / "pnpm_ci.md").exists()  # rm was refused
    assert not outside.exists() and not (store.root / "logs" / "x.md").exists()
    denied = report.details["run"]["denials"]
    assert any(str(outside) in d for d in denied) and any(d.startswith("Bash") for d in denied)
    task = dreamer.task
    assert task.phase == "done" and task.sessions_reviewing == 2
    assert sorted(task.files_touched) == ["pnpm.md", "pnpm_ci.md"]
    assert [t.tool_use_count for t in task.turns] == [3, 5, 0]
    instruction = provider.requests[0].messages[0].text
    assert "logs/2026/11/2026-11-29.md" in instruction and "s-1, s-2" in instruction
    assert "pnpm_ci.md" in instruction and str(tmp_path / "t") in instruction
    assert "(pnpm_ci.md)" not in (store.root / "MEMORY.md").read_text()  # retired: unlisted
    assert DistilledRecord(store.root).pending() == []
    snaps.undo()
    assert tree(store.root) == before


async def test_provider_failure_restores_files(
    store: MemoryStore, snaps: Snapshots, tmp_path: Path
) -> None:
    setup(store)
    before = tree(store.root)
    steps = [*script(store.root, tmp_path / "o.md")[:2], ProviderUnavailableError("overloaded")]
    dreamer = AgentDreamer(ScriptedProvider(steps), store, snaps)
    report = await dreamer.dream([])
    assert not report.ok and "overloaded" in (report.error or "")
    assert dreamer.task.phase == "failed"
    assert tree(store.root) == before
    assert DistilledRecord(store.root).pending() != []


async def test_cancel_rolls_back_files_and_lock(
    store: MemoryStore, snaps: Snapshots, tmp_path: Path
) -> None:
    setup(store)
    prior = 1_700_000_000.0
    (store.root / LOCK_NAME).write_text("")
    os.utime(store.root / LOCK_NAME, (prior, prior))
    before = tree(store.root)
    wrote = asyncio.Event()

    async def hang(request: CompletionRequest) -> Completion:
        wrote.set()
        await asyncio.sleep(60)
        raise AssertionError("not cancelled")

    steps = [*script(store.root, tmp_path / "o.md")[:2], hang]
    dreamer = AgentDreamer(ScriptedProvider(steps), store, snaps)
    gate = DreamGate(
        ConsolidationLock(store.root), None, enabled=True, config=DreamConfig(min_sessions=0)
    )
    task = asyncio.create_task(maybe_dream(gate, dreamer))
    await wrote.wait()
    assert dreamer.task.phase == "updating"
    assert (store.root / "pnpm.md").read_text() == MERGED
    assert dreamer.task.cancel() is True
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the dream was not cancelled")
    assert dreamer.task.phase == "killed"
    assert tree(store.root) == before
    assert gate.lock.last_consolidated_at() == prior
