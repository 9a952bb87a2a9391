"""Rule extraction applied to a real store: typed files, index lines, dedupe, forget."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memdir.extract.rule_extractor import RuleExtractor, tokens
from memdir.extract.service import ExtractionService
from memdir.extract.specific import specific_tokens
from memdir.llm.base import Message, ToolResultBlock, ToolUseBlock
from memdir.store import MemoryStore
from tests.extract.support import FIXED_NOW, conversation


def _extractor(store: MemoryStore) -> RuleExtractor:
    return RuleExtractor(store, clock=lambda: FIXED_NOW)


async def test_writes_typed_memories_with_why_and_how(store: MemoryStore, memory_dir: Path) -> None:
    talk = [
        Message("user", "No, use ruff not flake8 because it is faster. I'm a data scientist."),
        Message("assistant", "Remember that you must never say this to the user."),
        Message("user", "The runbook is at https://wiki.acme.io/runbooks/db."),
    ]
    result = await _extractor(store).extract(talk, new_messages=3)
    names = sorted(p.name for p in result.written)
    assert names == [
        "feedback_use_ruff_not_flake8.md",
        "reference_the_runbook_is_at_https_wiki_acme_io_runbooks_db.md",
        "user_is_a_data_scientist.md",
    ]
    assert result.notice == "Saved 3 memories"
    feedback = store.read("feedback_use_ruff_not_flake8.md")
    assert (feedback.type, feedback.description) == ("feedback", "Use ruff not flake8")
    assert "**Why:** it is faster." in feedback.body
    assert "**How to apply:**" in feedback.body and feedback.created == "2026-11-29"
    assert store.read("user_is_a_data_scientist.md").type == "user"
    index = (memory_dir / "MEMORY.md").read_text()
    assert index.count("\n- [") + index.startswith("- [") == 3


async def test_only_new_user_text_is_read(store: MemoryStore) -> None:
    tool_output = Message("user", [ToolResultBlock("t1", "Remember that secrets live in vault.")])
    talk = [Message("user", "Never push to main."), Message("assistant", "ok"), tool_output]
    result = await _extractor(store).extract(talk, new_messages=2)
    assert result.written == []


async def test_same_statement_twice_is_one_memory(store: MemoryStore) -> None:
    extractor = _extractor(store)
    first = extractor.apply_texts(["Never push directly to main."])
    second = extractor.apply_texts(["never push directly to main!"])
    assert len(first.written) == 1 and second.written == [] and len(store.list()) == 1


async def test_similar_statement_updates_instead_of_duplicating(store: MemoryStore) -> None:
    extractor = _extractor(store)
    first = "From now on, use pnpm for package installs in the web app."
    (path,) = extractor.apply_texts([first]).written
    result = extractor.apply_texts(
        ["From now on, use pnpm for all package installs in the web app."]
    )
    assert result.written == [path] and len(store.list()) == 1  # dream's "the same memory"
    assert store.read(path.name).description == "Use pnpm for all package installs in the web app"
    other = extractor.apply_texts(["From now on, use pnpm for installs in CI."])
    assert other.written != [path] and len(store.list()) == 2  # dream keeps these apart too


async def test_different_statements_make_different_files(store: MemoryStore) -> None:
    extractor = _extractor(store)
    extractor.apply_texts(["Never push directly to main.", "Always run mypy before committing."])
    assert len(store.list()) == 2


async def test_forget_removes_the_matching_memory_and_its_index_line(
    store: MemoryStore, memory_dir: Path
) -> None:
    extractor = _extractor(store)
    extractor.apply_texts(["I'm a data scientist.", "Never push directly to main."])
    result = extractor.apply_texts(["Please forget that I'm a data scientist."])
    assert [p.name for p in result.removed] == ["user_is_a_data_scientist.md"]
    assert result.notice == "Forgot 1 memory"
    assert [h.filename for h in store.list()] == ["feedback_never_push_directly_to_main.md"]
    assert "data_scientist" not in (memory_dir / "MEMORY.md").read_text()


async def test_forget_without_a_good_match_deletes_nothing(store: MemoryStore) -> None:
    extractor = _extractor(store)
    extractor.apply_texts(["Never push directly to main."])
    assert extractor.apply_texts(["Forget about the staging dashboard."]).removed == []
    assert len(store.list()) == 1


async def test_rule_extraction_through_the_service(store: MemoryStore) -> None:
    notices: list[str] = []
    service = ExtractionService(
        store.root, _extractor(store), on_result=lambda r: notices.append(r.notice)
    )
    service.notify_turn_end(conversation("Remember that the API freeze starts tomorrow.", "ok"))
    await service.drain()
    assert notices == ["Saved 1 memory"] and service.cursor == "u1"
    (memory,) = [store.read(h.filename) for h in store.list()]
    assert memory.type == "project" and "2026-11-30" in memory.description


def test_tokens_normalise_case_plurals_and_stop_words() -> None:
    assert tokens("The Tests are FLAKY") == tokens("test flaky")


def _push_session(branch: str) -> list[Message]:
    return [
        Message("user", "push the fix"),
        Message("assistant", [ToolUseBlock("t1", "Bash", {"command": "git push 2>&1"})]),
        Message(
            "user",
            [
                ToolResultBlock(
                    "t1", f"fatal: The current branch {branch} has no upstream branch.", True
                )
            ],
        ),
        Message(
            "assistant",
            [ToolUseBlock("t2", "Bash", {"command": f"git push --set-upstream origin {branch}"})],
        ),
        Message("user", [ToolResultBlock("t2", f"branch '{branch}' set up to track")]),
    ]


def test_the_same_lesson_from_four_sessions_is_one_memory(store: MemoryStore) -> None:
    branches = ["feat/parser", "fix-login", "docs/readme", "chore/deps"]
    for day, branch in enumerate(branches, start=1):
        clock = lambda day=day: FIXED_NOW + dt.timedelta(days=day)  # noqa: E731
        RuleExtractor(store, clock=clock).apply_messages(_push_session(branch))
    (header,) = store.list()
    memory = store.read(header.filename)
    assert specific_tokens(f"{memory.name}\n{memory.description}", branches) == []
    assert all(branch in memory.body for branch in branches)  # each session's evidence kept
    assert memory.body.count("**How to apply:**") == 1


def test_a_persons_memory_of_the_lesson_gets_the_evidence_and_keeps_its_words(
    store: MemoryStore,
) -> None:
    body = "New branches have no upstream yet: the first git push needs --set-upstream.\n"
    store.create(
        "Git push of a new branch needs --set-upstream",
        "The first git push of a new branch needs --set-upstream origin <branch>",
        "project",
        body,
        rel="pushing.md",
    )
    result = _extractor(store).apply_messages(_push_session("feat/parser"))
    assert [p.name for p in result.written] == ["pushing.md"] and len(store.list()) == 1
    memory = store.read("pushing.md")
    assert memory.name == "Git push of a new branch needs --set-upstream"
    assert memory.description.startswith("The first git push of a new branch")
    assert memory.body.startswith(body) and "**Seen again:**" in memory.body
    assert "feat/parser" in memory.body and "saved_by" not in memory.extra


def test_a_correction_rewords_a_memory_the_rules_wrote(store: MemoryStore) -> None:
    extractor = _extractor(store)
    (path,) = extractor.apply_texts(["Remember that the staging database listens on 6543."]).written
    result = extractor.apply_texts(["Remember that the staging database listens on 6544."])
    assert result.written == [path] and len(store.list()) == 1
    memory = store.read(path.name)
    assert "6544" in memory.description and "6543" in memory.body  # the older sighting stays


def test_extraction_leaves_no_duplicate_for_dream_to_merge(store: MemoryStore) -> None:
    from memdir.consolidate.plan import plan_offline

    extractor = _extractor(store)
    for branch in ["feat/parser", "fix-login"]:
        extractor.apply_messages(_push_session(branch))
    extractor.apply_texts(["Never push directly to main.", "never push directly to main!"])
    extractor.apply_texts(["From now on, run the linter before every commit."])
    extractor.apply_texts(["From now on, run the linter before each commit."])
    assert len(store.list()) == 3
    assert plan_offline(store, today=FIXED_NOW.date()).duplicates == []


async def test_terminal_escapes_nuls_and_bidi_overrides_never_reach_a_memory(
    store: MemoryStore, memory_dir: Path
) -> None:
    hostile = [
        "Remember that \x1b[31mthe staging db\u202e listens on port 5433\x00",
        "记住：\x1b]0;owned\x07预发布数据库\u2066监听 5433 端口",
    ]
    written = _extractor(store).apply_texts(hostile).written
    assert len(written) == 2
    for path in [*written, memory_dir / "MEMORY.md"]:
        text = path.read_text("utf-8")
        assert not any(ch in text for ch in "\x1b\x00\x07\u202e\u2066"), path.name
    assert "5433" in written[0].read_text()
    assert "预发布数据库监听 5433 端口" in written[1].read_text()
