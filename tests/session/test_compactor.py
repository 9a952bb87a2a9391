"""The ladder end to end: which rung fires, fallbacks, breaker, transcript, recall budget."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.errors import PromptTooLongError, ProviderUnavailableError
from memdir.llm.base import Completion, CompletionRequest
from memdir.llm.scripted import ScriptedProvider
from memdir.recall.session import RecallSession
from memdir.session.compactor import Compactor
from memdir.session.convert import load_transcript
from memdir.session.full_compact import DROPPED_MARKER, INSTRUCTION
from memdir.session.keep import invariant_problems
from memdir.session.memory import SessionMemory
from memdir.session.messages import ChatMessage, api_shape_problems, to_api
from memdir.session.offline import OfflineUpdater
from memdir.session.tokens import Window, estimate_tokens
from memdir.transcripts import Transcript
from tests.session.strategies import conversations

SID = "5d1c8a0e-2f3b-4c5d-8e9f-0a1b2c3d4e5f"
SUMMARY = Completion.from_text(
    "<analysis>scratch thoughts</analysis>\n<summary>THE SUMMARY</summary>"
)


def _long(turns: int = 60, chars: int = 3000) -> list[ChatMessage]:
    msgs: list[ChatMessage] = []
    for i in range(turns):
        msgs.append(ChatMessage.user(f"request {i}: please change module_{i}.py"))
        use = {
            "type": "tool_use",
            "id": f"t{i}",
            "name": "Read",
            "input": {"file_path": f"/src/module_{i}.py"},
        }
        msgs.append(ChatMessage.assistant([use], message_id=f"m{i}"))
        msgs.append(
            ChatMessage.user(
                [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "z" * chars}]
            )
        )
        msgs.append(
            ChatMessage.assistant(f"changed module_{i}.py " + "w" * chars, message_id=f"m{i}")
        )
    return msgs


def _memory(tmp_path: Path) -> SessionMemory:
    return SessionMemory(tmp_path / SID / "session-memory" / "summary.md", OfflineUpdater())


def _check(result_messages: list[ChatMessage], original: list[ChatMessage]) -> None:
    assert api_shape_problems(to_api(result_messages)) == []
    kept = [m for m in result_messages if m.uuid in {o.uuid for o in original}]
    if kept:
        start = next(i for i, o in enumerate(original) if o.uuid == kept[0].uuid)
        assert [m.uuid for m in kept] == [o.uuid for o in original[start:] if not o.is_boundary]
        assert invariant_problems(original[start:], original[:start]) == []


async def test_offline_session_memory_compaction(tmp_path: Path) -> None:
    msgs = _long()
    transcript = Transcript(tmp_path / f"{SID}.jsonl", SID, "/w")
    recall = RecallSession(used_bytes=50_000)
    compactor = Compactor(
        session_memory=_memory(tmp_path), transcript=transcript, recall_session=recall
    )
    result = await compactor.maybe_compact(msgs, 40_000)
    report = result.report
    assert report.rung == "session_memory" and result.compacted
    assert report.tokens_before > Window(40_000).threshold > report.tokens_after
    assert report.tokens_after == estimate_tokens(result.messages)
    assert result.messages[0].is_boundary and result.messages[1].kind == "compact_summary"
    summary = result.messages[1].text
    assert "request 0: please change module_0.py" in summary and "/src/module_0.py" in summary
    assert str(transcript.path) in summary
    _check(result.messages, msgs)
    assert report.kept_messages == len(result.messages) - 2
    assert recall.used_bytes == 0
    resumed, issues = load_transcript(transcript.path)  # boundary + summary; kept are not in it
    assert [m.kind for m in resumed] == ["compact_boundary", "compact_summary"] and issues == []


async def test_below_threshold_nothing_happens(tmp_path: Path) -> None:
    msgs = _long(turns=2, chars=10)
    result = await Compactor(session_memory=_memory(tmp_path)).maybe_compact(msgs, 200_000)
    assert result.report.rung == "none" and result.messages == msgs


async def test_fallback_to_full_compaction_reattaches_files(tmp_path: Path) -> None:
    src = tmp_path / "app.py"
    src.write_text("def main():\n    return 42\n")
    msgs = _long(turns=30)
    use = {"type": "tool_use", "id": "tx", "name": "Read", "input": {"file_path": str(src)}}
    msgs += [
        ChatMessage.user("look at app.py"),
        ChatMessage.assistant([use]),
        ChatMessage.user([{"type": "tool_result", "tool_use_id": "tx", "content": "def main()"}]),
    ]
    provider = ScriptedProvider([SUMMARY])
    result = await Compactor(provider=provider).maybe_compact(msgs, 40_000)
    assert result.report.rung == "full" and result.report.fallback_reason == "no session memory"
    texts = [m.text for m in result.messages]
    assert "THE SUMMARY" in texts[1] and "scratch thoughts" not in texts[1]
    assert any("return 42" in t and str(src) in t for t in texts[2:])
    request = provider.last_request
    assert INSTRUCTION in request.messages[-1].text and request.max_tokens <= Window(40_000).reserve
    _check(result.messages, msgs)


@pytest.mark.parametrize("why", ["no notes file", "the notes are still the empty template"])
async def test_fallback_reasons(tmp_path: Path, why: str) -> None:
    mem = _memory(tmp_path)

    class NoOp:
        name = "noop"
        cursor_at_end = False

        async def update(self, path: Path, **kw: object):  # type: ignore[no-untyped-def]
            from memdir.session.memory import UpdateOutcome

            return UpdateOutcome(ok=True, updater="noop")

    mem.updater = NoOp()
    if why != "no notes file":
        mem.path.parent.mkdir(parents=True)
        mem.path.write_text(mem.template)
    result = await Compactor(
        session_memory=mem, provider=ScriptedProvider([SUMMARY])
    ).maybe_compact(_long(), 40_000)
    assert result.report.rung == "full" and result.report.fallback_reason == why


async def test_prompt_too_long_drops_oldest_groups_and_retries() -> None:
    msgs = _long(turns=40)
    provider = ScriptedProvider(
        [PromptTooLongError("too long", gap_tokens=5_000), PromptTooLongError("too long"), SUMMARY]
    )
    result = await Compactor(provider=provider, reattach_files=False).maybe_compact(msgs, 40_000)
    assert result.report.rung == "full" and result.report.retries == 2
    sizes = [len(r.messages) for r in provider.requests]
    assert sizes[0] > sizes[1] > sizes[2]
    assert DROPPED_MARKER in provider.requests[1].messages[0].text


async def test_breaker_opens_after_three_failures_and_force_still_tries() -> None:
    provider = ScriptedProvider.always(ProviderUnavailableError("down"))
    compactor = Compactor(provider=provider)
    msgs = _long()
    for n in range(1, 4):
        result = await compactor.maybe_compact(msgs, 40_000)
        assert result.report.rung == "failed" and compactor.failures == n
        assert result.messages[0].uuid == msgs[0].uuid  # the conversation is not lost
    calls = provider.calls
    result = await compactor.maybe_compact(msgs, 40_000)
    assert result.report.rung in ("breaker_open", "microcompact") and provider.calls == calls
    await compactor.maybe_compact(msgs, 40_000, force=True)
    assert provider.calls == calls + 1


async def test_too_long_after_all_retries_is_a_failure() -> None:
    provider = ScriptedProvider.always(PromptTooLongError("too long"))
    result = await Compactor(provider=provider).maybe_compact(_long(), 40_000)
    assert result.report.rung == "failed" and provider.calls == 4
    assert "too long to summarise" in (result.report.error or "")


def _summary_for(request: CompletionRequest) -> Completion:
    return SUMMARY


@given(conversations, st.sampled_from([8_000, 20_000, 40_000, 200_000]), st.booleans())
def test_any_rung_leaves_a_valid_conversation(
    msgs: list[ChatMessage], window: int, with_notes: bool
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        mem = _memory(Path(tmp)) if with_notes else None
        compactor = Compactor(session_memory=mem, provider=ScriptedProvider.always(_summary_for))
        result = asyncio.run(compactor.maybe_compact(msgs, window, force=True))
        assert result.report.rung in ("session_memory", "full")
        _check(result.messages, msgs)
        assert not any(m.is_boundary for m in result.messages[1:])
