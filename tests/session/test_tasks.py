"""Pending and finished tasks from TodoWrite, TaskCreate/TaskUpdate and "next I will…"."""

from __future__ import annotations

from typing import Any

from memdir.session import facts, tasks
from memdir.session.messages import ChatMessage
from memdir.session.notes import builtin_template, parse_notes
from memdir.session.offline import OfflineUpdater


def use(tid: str, name: str, **payload: Any) -> ChatMessage:
    return ChatMessage.assistant([{"type": "tool_use", "id": tid, "name": name, "input": payload}])


def result(tid: str, text: str) -> ChatMessage:
    return ChatMessage.user([{"type": "tool_result", "tool_use_id": tid, "content": text}])


def todo(*items: tuple[str, str], tid: str = "t1") -> list[ChatMessage]:
    todos = [{"content": c, "status": s, "activeForm": c} for c, s in items]
    use = {"type": "tool_use", "id": tid, "name": "TodoWrite", "input": {"todos": todos}}
    result = {"type": "tool_result", "tool_use_id": tid, "content": "Todos have been modified"}
    return [ChatMessage.assistant([use]), ChatMessage.user([result])]


def test_todo_lists_carry_pending_and_done_across_merges() -> None:
    updater = OfflineUpdater()
    items = [("Write the parser", "completed"), ("Add tests", "in_progress")]
    first = [ChatMessage.user("plan it"), *todo(*items, ("Update docs", "pending"))]
    notes = updater.render("", first, builtin_template())
    state = parse_notes(notes).body("Current State")
    assert "- [x] Write the parser" in state and "- [~] Add tests" in state
    assert "- [ ] Update docs" in state
    later = [ChatMessage.user("go on"), ChatMessage.assistant("Working on it.")]
    state = parse_notes(updater.render(notes, later, builtin_template())).body("Current State")
    assert "- [ ] Update docs" in state  # no new list in this batch: the old one stays
    done = [("Add tests", "completed"), ("Update docs", "completed")]
    final = [ChatMessage.user("finish"), *todo(*done, tid="t2")]
    state = parse_notes(updater.render(notes, final, builtin_template())).body("Current State")
    assert "- [x] Write the parser" in state and "- [x] Update docs" in state
    assert "- [ ]" not in state and "- [~]" not in state


def test_task_create_and_update() -> None:
    messages = [
        ChatMessage.user("do it"),
        use("c1", "TaskCreate", subject="Migrate the users table", description="…"),
        result("c1", "Task #3 created successfully"),
    ]
    state = tasks.update({}, facts.split_turns(messages))
    assert state == {"Migrate the users table": " "}
    messages += [use("u1", "TaskUpdate", taskId="3", status="completed"), result("u1", "ok")]
    assert tasks.update({}, facts.split_turns(messages)) == {"Migrate the users table": "x"}


def test_next_steps_said_by_the_assistant() -> None:
    messages = [
        ChatMessage.user("status?"),
        ChatMessage.assistant("The parser works. Next, I'll wire it into the CLI and add docs."),
    ]
    notes = parse_notes(OfflineUpdater().render("", messages, builtin_template()))
    assert "Next (said): Next, I'll wire it into the CLI and add docs" in notes.body(
        "Current State"
    )


def test_a_next_steps_list_in_a_reply_is_pending_work() -> None:
    reply = (
        "Done. When you return, the next steps are:\n"
        "1. Entity page template spec\n2. Backend API\n\nAnything else?"
    )
    messages = [ChatMessage.user("wrap up"), ChatMessage.assistant(reply)]
    state = parse_notes(OfflineUpdater().render("", messages, builtin_template())).body(
        "Current State"
    )
    assert "Next (said): Next steps: Entity page template spec; Backend API" in state


def test_a_next_steps_heading_with_a_list() -> None:
    reply = "## Summary\nAll good.\n\n**Next Steps:**\n- Wire the CLI\n- Write docs\n"
    messages = [ChatMessage.user("status"), ChatMessage.assistant(reply)]
    state = parse_notes(OfflineUpdater().render("", messages, builtin_template())).body(
        "Current State"
    )
    assert "Next steps: Wire the CLI; Write docs" in state


def test_a_remaining_changes_list_written_as_numbered_headings() -> None:
    reply = (
        "Here are the remaining changes (all client-side):\n\n"
        "### 1. `Toolbar` — show the export button\n- move it out of the admin block\n\n"
        "### 2. Settings page — a default format\n- add a select\n"
    )
    turns = facts.split_turns([ChatMessage.user("what is left?"), ChatMessage.assistant(reply)])
    assert tasks.next_steps(turns) == [
        "Next steps: `Toolbar` — show the export button; Settings page — a default format"
    ]
