"""Transcript shapes Claude Code really writes, each as a small synthetic transcript.

Regression tests for issue 16's defects 1–3: parallel tool calls written as separate entries
with their results interleaved; prompts typed while the agent works (``queue-operation``);
host-generated user entries (task notifications, interrupts, hook feedback, command wrappers).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdir.session import facts
from memdir.session.convert import load_transcript, messages_from_entries
from memdir.session.messages import api_shape_problems, repair, to_api
from memdir.session.notes import builtin_template, parse_notes
from memdir.session.offline import OfflineUpdater


def user(uuid: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": content}, **extra}


def asst(uuid: str, mid: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "assistant",
        "uuid": uuid,
        "message": {"id": mid, "role": "assistant", "content": list(blocks)},
    }


def use(tid: str, command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command}}


def result(tid: str, text: str) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": tid, "content": text}]


def queued(text: str, stamp: str = "2026-01-01T00:00:05.000Z") -> dict[str, Any]:
    return {"type": "queue-operation", "operation": "enqueue", "timestamp": stamp, "content": text}


PARALLEL = [
    user("u1", "check the git state and the test suite"),
    asst("a1", "msg_1", {"type": "text", "text": "Checking both."}),
    asst("a2", "msg_1", use("t1", "git status")),
    user("r1", result("t1", "On branch main")),
    asst("a3", "msg_1", use("t2", "pytest -q")),
    user("r2", result("t2", "3 passed in 0.1s")),
    asst("a4", "msg_2", {"type": "text", "text": "Clean tree, tests pass."}),
]


def test_parallel_tool_calls_pair_with_their_results_and_nothing_is_invented() -> None:
    messages, issues = messages_from_entries(PARALLEL)
    assert issues == []
    fixed, changes = repair(messages)
    assert changes == []  # before the fix: two "had no result" / "kept as text" changes
    api = to_api(fixed)
    assert api_shape_problems(api) == []
    flat = json.dumps(api)
    assert "no result was recorded" not in flat and "[tool result]" not in flat
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1].tool_use_ids == ["t1", "t2"]
    assert messages[2].tool_result_ids == ["t1", "t2"]


def test_parallel_results_are_not_errors_or_requests_in_the_notes() -> None:
    messages, _ = messages_from_entries(PARALLEL)
    notes = parse_notes(OfflineUpdater().render("", messages, builtin_template()))
    assert "no result was recorded" not in notes.body("Errors & Corrections")
    assert "check the git state" in notes.body("Current State")
    assert "[tool result]" not in notes.body("Current State")


def test_merged_reply_keeps_the_last_piece_for_compaction_records() -> None:
    messages, _ = messages_from_entries(PARALLEL)
    assert messages[1].uuid == "a1" and messages[1].metadata["last_uuid"] == "a3"
    assert messages[2].uuid == "r1" and messages[2].metadata["last_uuid"] == "r2"


def test_a_reply_interrupted_by_the_user_is_not_merged() -> None:
    entries = [
        user("u1", "run it"),
        asst("a1", "msg_1", use("t1", "make")),
        user("r1", result("t1", "ok")),
        user("u2", "wait, stop"),
        asst("a2", "msg_1", {"type": "text", "text": "Stopped."}),
    ]
    messages, _ = messages_from_entries(entries)
    assert [m.role for m in messages] == ["user", "assistant", "user", "user", "assistant"]


QUEUED = [
    user("u1", "migrate the orders table"),
    asst("a1", "msg_1", use("t1", "alembic upgrade head")),
    queued("also add an index on customer_id"),
    user("r1", result("t1", "done")),
    asst("a2", "msg_2", {"type": "text", "text": "Migrated."}),
]


def test_a_prompt_typed_while_the_agent_works_is_a_request_after_the_results() -> None:
    messages, _ = messages_from_entries(QUEUED)
    texts = [m.text for m in messages if facts.is_request(m)]
    assert texts == ["migrate the orders table", "also add an index on customer_id"]
    fixed, changes = repair(messages)
    assert changes == []  # the queued prompt did not split t1 from its result
    assert api_shape_problems(to_api(fixed)) == []


def test_queued_prompts_keep_their_order_and_stable_ids(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    more = [*QUEUED, queued("then run the tests", "2026-01-01T00:00:09.000Z")]
    path.write_text("".join(json.dumps(e) + "\n" for e in more))
    first, _ = load_transcript(path)
    again, _ = load_transcript(path)
    asks = [m.text for m in first if facts.is_request(m)]
    assert asks[-2:] == ["also add an index on customer_id", "then run the tests"]
    assert [m.uuid for m in first] == [m.uuid for m in again]


def test_a_queued_prompt_later_delivered_as_a_user_entry_counts_once() -> None:
    entries = [
        queued("What do you recall of the project?"),
        {"type": "queue-operation", "operation": "dequeue"},
        user("u1", "What do you recall of the project?"),
        asst("a1", "msg_1", {"type": "text", "text": "Quite a bit."}),
    ]
    messages, _ = messages_from_entries(entries)
    assert [m.text for m in messages if facts.is_request(m)] == [
        "What do you recall of the project?"
    ]


HARNESS_TEXTS = [
    "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n</task-notification>",
    "[Request interrupted by user for tool use]",
    "[Request interrupted by user]",
    "Stop hook feedback:\n- tests must pass",
    "<command-name>/clear</command-name>\n<command-message>clear</command-message>",
    "<local-command-stdout>Compacted</local-command-stdout>",
    "<bash-input>ls</bash-input>",
    '<ci-monitor-event>CI check "test (ubuntu-latest)" failed on acme/app PR #12. Run `gh pr '
    "checks 12` to see details, then fix the failing check.</ci-monitor-event>",
]


def test_host_generated_user_entries_are_context_not_requests() -> None:
    entries: list[dict[str, Any]] = [user("u0", "fix the flaky login test")]
    for i, text in enumerate(HARNESS_TEXTS):
        entries.append(asst(f"a{i}", f"msg_{i}", {"type": "text", "text": f"step {i}"}))
        entries.append(user(f"h{i}", text))
    entries.append(user("m1", "hidden", isMeta=True))
    entries.append(user("o1", "from a sub-agent", origin={"kind": "task-notification"}))
    entries.append(queued("<task-notification><status>completed</status></task-notification>"))
    messages, _ = messages_from_entries(entries)
    assert [m.text for m in messages if facts.is_request(m)] == ["fix the flaky login test"]
    notes = parse_notes(OfflineUpdater().render("", messages, builtin_template()))
    assert notes.body("Session Title").startswith("fix the flaky login test")
    assert "Latest request: fix the flaky login test" in notes.body("Current State")
    spec = notes.body("Task specification")
    assert "task-notification" not in spec and "interrupted" not in spec
