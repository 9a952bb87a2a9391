"""Recall, extraction and compaction as the real CLI runs them, asserted on what reached the model.

The fake model only answers; memdir's hooks decide what the host adds to each request. A marker
that lives only in a memory's body (never in its description, so never in MEMORY.md) shows
whether recall put the memory into a request, and how often.
"""

from __future__ import annotations

from pathlib import Path

from tests.realhost.host import ClaudeHost, wait_for

MARKER = "heron-lake-7731"
RECALL_BLOCK = "UserPromptSubmit hook additional context"


def add_memory(host: ClaudeHost, name: str, description: str, body: str) -> Path:
    host.memdir("add", name, "--type", "project", "--description", description, "--body", body)
    return host.memory_dir()


def ask_about_staging(host: ClaudeHost) -> None:
    """A memory whose body alone holds the marker, then a question it answers."""
    add_memory(
        host,
        "staging-db",
        "the staging database",
        f"The staging database is called {MARKER}; it is reset every Monday.",
    )
    host.prompt("What is the staging database called, and when is it reset?")


def test_recall_reaches_the_model_once_and_never_twice_in_a_session(installed: ClaudeHost) -> None:
    ask_about_staging(installed)
    first = installed.api.main_requests()[-1].text()
    assert first.count(MARKER) == 1, "the memory must be in the request exactly once"
    assert RECALL_BLOCK in first

    # The same question again in the same session (--continue): the earlier injection is part of
    # the replayed history; the new prompt must not bring the same memory a second time.
    installed.api.clear()
    installed.prompt("Remind me: what is the staging database called?", resume=True)
    again = installed.api.main_requests()[-1].text()
    assert "Remind me: what is the staging database" in again
    assert again.count(MARKER) == 1, "a memory surfaced earlier in the session came back"


def test_the_next_session_recalls_what_the_first_one_saved(installed: ClaudeHost) -> None:
    said = f"Remember that the staging database is called {MARKER}."
    installed.prompt(said)
    memory_dir = installed.memory_dir()

    def saved() -> bool:
        return any(
            MARKER in p.read_text(errors="replace")
            for p in memory_dir.glob("*.md")
            if p.name != "MEMORY.md"
        )

    wait_for(saved, "the extraction worker to save the memory")

    installed.api.clear()
    installed.prompt("What is the staging database called?")  # a new session, not --continue
    last = installed.api.main_requests()[-1]
    assert said not in last.message_texts()  # really a fresh context, not the old turn
    recalled = last.text().split(RECALL_BLOCK, 1)
    assert len(recalled) == 2 and MARKER in recalled[1], "the saved memory was not recalled"


def test_session_notes_come_back_after_compact(installed: ClaudeHost) -> None:
    installed.api.script("We deploy to staging-kiwi first, then production.")
    installed.prompt("Plan the release: we deploy to staging-kiwi first.")
    installed.prompt("The release branch is named release-mango-42.", resume=True)
    installed.prompt("/compact", resume=True)

    installed.api.clear()
    installed.prompt("What was the release branch called?", resume=True)
    request = installed.api.main_requests()[-1].text()
    notes = request.split("Session notes (kept across the compaction)", 1)
    assert len(notes) == 2, "SessionStart after the compaction did not bring the notes back"
    assert "release-mango-42" in notes[1]
    events = [(r["event"], r.get("source")) for r in installed.wait_until_ended(4)]
    assert ("pre-compact", None) in events and ("session-start", "compact") in events


def test_with_the_default_cold_wait_the_memory_arrives_once_first_or_next_prompt(
    installed: ClaudeHost,
) -> None:
    """The default: a first prompt that finds the daemon still loading is not held up; recall's
    answer then comes with the session's next prompt. Either way it reaches the model once."""
    installed.extra_env["MEMDIR_RECALL_COLD_WAIT"] = ""  # the default, not the suite's wait
    ask_about_staging(installed)
    first = installed.api.main_requests()[-1].text()
    log = installed.hook_log()
    [prompt] = [r for r in log if r["event"] == "user-prompt-submit"]
    if first.count(MARKER) == 0:  # the daemon was still loading: answered without recall
        assert str(prompt["via"]).startswith("daemon (still loading"), prompt
        wait_for(
            lambda: any(r["event"] == "recall-settled" for r in installed.hook_log()),
            "the recall to settle",
        )
    else:
        assert first.count(MARKER) == 1
    installed.api.clear()
    installed.prompt("And who resets it?", resume=True)
    again = installed.api.main_requests()[-1].text()
    assert again.count(MARKER) == 1, "the memory must reach the model exactly once"


def test_a_resume_after_a_compaction_does_not_get_the_start_block_again(
    installed: ClaudeHost,
) -> None:
    """Issue #27.9: SessionStart(compact) put the instructions and MEMORY.md into the compacted
    context; the SessionStart(resume) of the next ``--continue`` must not add them a second time."""
    installed.prompt("Plan the release: we deploy to staging-kiwi first.")
    installed.prompt("/compact", resume=True)
    installed.api.clear()
    installed.prompt("What do we deploy to first?", resume=True)
    request = installed.api.main_requests()[-1].text()
    assert request.count("# Memory (memdir)") == 1, "the start block reached the model twice"
    starts = [r for r in installed.hook_log() if r["event"] == "session-start"]
    assert [r.get("source") for r in starts][-2:] == ["compact", "resume"]
    assert starts[-1].get("skipped") == "this context already holds the same block"
