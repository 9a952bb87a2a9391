"""Uncommitted changes in the Current State: edits after the last commit, cleared by a commit."""

from __future__ import annotations

from typing import Any

from memdir.session import facts, worktree
from memdir.session.messages import ChatMessage
from memdir.session.notes import builtin_template, parse_notes
from memdir.session.offline import OfflineUpdater


def use(tid: str, name: str, **payload: Any) -> ChatMessage:
    return ChatMessage.assistant([{"type": "tool_use", "id": tid, "name": name, "input": payload}])


def result(tid: str, text: str, *, error: bool = False) -> ChatMessage:
    block = {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}
    return ChatMessage.user([block])


def edit(tid: str, path: str) -> list[ChatMessage]:
    payload = {"file_path": path, "old_string": "a", "new_string": "b"}
    return [use(tid, "Edit", **payload), result(tid, "ok")]


def shell(tid: str, command: str, output: str, *, error: bool = False) -> list[ChatMessage]:
    return [use(tid, "Bash", command=command), result(tid, output, error=error)]


def test_edits_after_the_last_commit_are_uncommitted() -> None:
    turns = facts.split_turns(
        [
            ChatMessage.user("fix both modules"),
            *edit("a", "/w/src/a.py"),
            *shell("b", 'git commit -am "fix a"', "[main 1a2b3c4] fix a"),
            *edit("c", "/w/src/b.py"),
        ]
    )
    line = worktree.uncommitted(turns, "")
    assert line == "Uncommitted: 1 file(s) changed since the last commit (b.py)"


def test_a_commit_after_the_edits_clears_it_and_a_failed_one_does_not() -> None:
    done = [ChatMessage.user("commit"), *edit("a", "/w/a.py"), *shell("b", "git commit -m x", "ok")]
    assert worktree.uncommitted(facts.split_turns(done), "Uncommitted: 1 file(s) …") is None
    failed = [
        ChatMessage.user("commit"),
        *edit("a", "/w/a.py"),
        *shell("b", "git commit -m x", "error: hook failed\nexit code 1", error=True),
    ]
    assert worktree.uncommitted(facts.split_turns(failed), "") is not None


def test_a_batch_without_edits_or_commits_keeps_the_previous_line() -> None:
    before = "Latest request: x\nUncommitted: 2 file(s) changed since the last commit (a.py, b.py)"
    turns = facts.split_turns([ChatMessage.user("what next?"), ChatMessage.assistant("Tests.")])
    assert worktree.uncommitted(turns, before) == before.splitlines()[1]


def test_the_line_survives_a_later_merge_of_the_notes() -> None:
    updater = OfflineUpdater()
    first = [ChatMessage.user("rename the helper everywhere"), *edit("a", "/w/util.py")]
    notes = updater.render("", first, builtin_template())
    later = [ChatMessage.user("ok thanks"), ChatMessage.assistant("You're welcome.")]
    state = parse_notes(updater.render(notes, later, builtin_template())).body("Current State")
    assert "Uncommitted: 1 file(s) changed since the last commit (util.py)" in state
