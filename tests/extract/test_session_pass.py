"""The hook path extracts what the CLI path extracts: turn by turn over the session so far, the
rules leave the memories one run over the whole transcript leaves."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memdir.extract.base import ExtractionResult, Extractor, Turn
from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.service import messages_since
from memdir.extract.session_pass import WithSessionLessons, extract_session_so_far
from memdir.extract.transcript import turns_from_entries
from memdir.llm.base import Message
from memdir.store import MemoryStore
from memdir.transcripts import read_transcript
from tests.extract.support import FIXED_NOW

CLOCK = lambda: FIXED_NOW  # noqa: E731


def _entries() -> list[dict[str, Any]]:
    """Four turns: a fix proven across two turns after a flaky retry, a check-up asked in two
    turns, the same lesson on two branches, a frustrated user, an explicit rule."""
    out: list[dict[str, Any]] = []

    def user(content: Any) -> None:
        out.append({"type": "user", "uuid": f"e{len(out)}", "message": {"content": content}})

    def shell(tid: str, command: str, result: str, error: bool = False) -> None:
        use = {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command}}
        out.append({"type": "assistant", "uuid": f"e{len(out)}", "message": {"content": [use]}})
        res = {"type": "tool_result", "tool_use_id": tid, "content": result, "is_error": error}
        user([res])

    user("add the lint step and push it")
    shell("t1", "make lint", "make: ruff: command not found", True)
    shell("t2", "make lint", "All checks passed!")  # a flaky retry proves nothing on its own
    shell("t3", "git push", "fatal: The current branch lint-step has no upstream branch.", True)
    shell("t4", "git push -u origin lint-step", "branch 'lint-step' set up to track")
    user("did you push?")
    shell("t5", "uv run make lint", "All checks passed!")  # ...this proves the fix
    user("Never commit generated files. Also did you push it?")
    shell(
        "t6",
        "git switch -c docs-fix && git push",
        "fatal: The current branch docs-fix has no upstream branch.",
        True,
    )
    shell("t7", "git push --set-upstream origin docs-fix", "branch 'docs-fix' set up to track")
    user("we are just guessing now. why dont you read the build docs before the next try")
    return out


def _turns(tmp: Path) -> list[Turn]:
    path = tmp / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _entries()), "utf-8")
    return turns_from_entries(read_transcript(path).entries, include_meta=False)


def _closes(turns: Sequence[Turn]) -> list[int]:
    """Where the host's Stop fires: before each typed user message, and at the end."""
    starts = [i for i, t in enumerate(turns) if t.message.role == "user" and t.message.text]
    return [*starts[1:], len(turns)]


def _files(root: Path) -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(root.glob("*.md"))}


async def _turn_by_turn(turns: list[Turn], extractor: Extractor) -> None:
    cursor: str | None = None
    for end in _closes(turns):
        so_far = turns[:end]
        new = messages_since(so_far, cursor)
        result = await extractor.extract([t.message for t in so_far], new_messages=len(new))
        assert result.ok
        cursor = so_far[-1].uuid


async def test_rules_turn_by_turn_save_what_one_run_over_the_transcript_saves(
    tmp_path: Path,
) -> None:
    turns = _turns(tmp_path)
    hook, cli = MemoryStore(tmp_path / "hook"), MemoryStore(tmp_path / "cli")
    await _turn_by_turn(turns, RuleExtractor(hook, clock=CLOCK))
    whole = await RuleExtractor(cli, clock=CLOCK).extract(
        [t.message for t in turns], new_messages=len(turns)
    )
    saved = _files(cli.root)
    assert len(whole.written) == 5  # never commit, lint via uv run, upstream, push, read docs
    assert _files(hook.root) == saved
    (upstream,) = [text for name, text in saved.items() if "upstream" in name]
    assert "lint-step" in upstream and "docs-fix" in upstream  # one lesson, both sightings


class _SavesNothing:
    """A model extractor that chose to save nothing (the common case on a coding turn)."""

    async def extract(self, messages: Sequence[Message], *, new_messages: int) -> ExtractionResult:
        return ExtractionResult(Path("."))


async def test_a_model_path_wrapped_with_the_session_lessons_saves_them_too(
    tmp_path: Path,
) -> None:
    turns = _turns(tmp_path)
    hook, cli = MemoryStore(tmp_path / "hook"), MemoryStore(tmp_path / "cli")
    await _turn_by_turn(turns, WithSessionLessons(_SavesNothing(), hook, clock=CLOCK))
    whole = extract_session_so_far(
        cli, [t.message for t in turns], new_messages=len(turns), clock=CLOCK
    )
    assert len(whole.written) == 4 and _files(hook.root) == _files(cli.root)


def test_a_second_run_over_the_same_session_writes_nothing(tmp_path: Path) -> None:
    messages = [t.message for t in _turns(tmp_path)]
    store = MemoryStore(tmp_path / "memory")
    first = extract_session_so_far(store, messages, new_messages=len(messages), clock=CLOCK)
    before = {p: p.stat().st_mtime_ns for p in store.root.glob("*.md")}
    again = extract_session_so_far(store, messages, new_messages=len(messages), clock=CLOCK)
    assert first.written and again.written == []
    assert {p: p.stat().st_mtime_ns for p in store.root.glob("*.md")} == before


def test_the_next_day_adds_evidence_to_the_same_memory(tmp_path: Path) -> None:
    messages = [t.message for t in _turns(tmp_path)]
    store = MemoryStore(tmp_path / "memory")
    extract_session_so_far(store, messages, new_messages=len(messages), clock=CLOCK)
    names = sorted(p.name for p in store.root.glob("*.md"))
    later = lambda: FIXED_NOW + dt.timedelta(days=1)  # noqa: E731
    again = extract_session_so_far(store, messages, new_messages=len(messages), clock=later)
    assert len(again.written) == 4 and sorted(p.name for p in store.root.glob("*.md")) == names


async def test_wrapping_the_offline_extractor_costs_nothing_but_the_comparison(
    tmp_path: Path,
) -> None:
    """The hook's fallback already ran the session rules: the wrapper's second pass writes no
    file twice and reports each once."""
    turns = _turns(tmp_path)
    alone, wrapped = MemoryStore(tmp_path / "alone"), MemoryStore(tmp_path / "wrapped")
    await _turn_by_turn(turns, RuleExtractor(alone, clock=CLOCK))
    rules = RuleExtractor(wrapped, clock=CLOCK)
    await _turn_by_turn(turns, WithSessionLessons(rules, wrapped, clock=CLOCK))
    assert _files(wrapped.root) == _files(alone.root)
    messages = [t.message for t in turns]
    again = await WithSessionLessons(rules, wrapped, clock=CLOCK).extract(
        messages, new_messages=len(messages)
    )
    assert again.written == []
