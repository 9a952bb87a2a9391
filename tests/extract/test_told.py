"""Facts told in passing, habits started, tools standing in, and documents that are not the user
(issue #30): each from a small synthetic transcript of the shape the real sessions had."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memdir.extract.commands import stands_in
from memdir.extract.documents import injected_document
from memdir.extract.form import name_of
from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.rules import candidates, classify
from memdir.extract.session_rules import session_candidates
from memdir.extract.specific import specific_tokens
from memdir.extract.told import location, sibling, tracker
from memdir.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from memdir.model import MemoryType
from memdir.store import MemoryStore

TODAY = dt.date(2026, 12, 1)
NOON = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def user(text: str) -> Message:
    return Message("user", [TextBlock(text)])


def shell(tid: str, command: str, output: str, *, error: bool = False) -> list[Message]:
    return [
        Message("assistant", [ToolUseBlock(tid, "Bash", {"command": command})]),
        Message("user", [ToolResultBlock(tid, output, error)]),
    ]


def test_where_a_service_runs_is_a_project_fact_with_the_paths_in_the_body(tmp_path: Path) -> None:
    said = "grafana runs from /srv/compose/grafana with its data mounted from /srv/data/grafana"
    store = MemoryStore(tmp_path / "mem")
    RuleExtractor(store, clock=lambda: NOON).apply_messages([user("yes"), user(said)])
    [header] = store.list()
    memory = store.read(header.filename)
    assert memory.type == "project" and memory.name == "Where grafana runs and keeps its files"
    assert "<path 1>" in memory.description and "<path 2>" in memory.description
    assert specific_tokens(f"{memory.name}\n{memory.description}") == []
    assert "/srv/compose/grafana" in memory.body.split("\n")[0]  # written out where it is used
    assert "**How to apply:** When work needs grafana" in memory.body


def test_a_location_needs_a_lasting_place_and_a_statement() -> None:
    assert location("the log is in /tmp/run-42/out.txt") is None  # not a "lives" verb
    assert location("the build runs from /tmp/build-7") is None  # a temp dir
    assert location("it runs from /srv/app") is None  # what "it" is, the sentence does not say
    assert location("postgres no longer runs from /srv/pg") is None
    assert location("does redis run from /srv/redis") is None
    assert classify("does nginx run from /etc/nginx?", today=TODAY) is None
    found = location("nginx is installed in /opt/nginx")
    assert found is not None and found.name == "Where nginx runs and keeps its files"


def test_where_the_other_half_of_the_system_is_checked_out(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    RuleExtractor(store, clock=lambda: NOON).apply_messages(
        [user("yes"), user("entire backend is in ../entiredb")]
    )
    [header] = store.list()
    memory = store.read(header.filename)
    assert memory.type == "reference" and memory.name == "Where the entire backend is checked out"
    assert memory.description.endswith("beside this repository, at ../entiredb")
    assert specific_tokens(f"{memory.name}\n{memory.description}") == []
    assert "read its code at ../entiredb" in memory.body


def test_a_sibling_checkout_is_a_component_said_plainly() -> None:
    assert sibling("the bug is in ../lib/parse.go") is None  # this task's, not a project
    assert sibling("the fix is in ../entiredb") is None
    assert sibling("it is in ../web") is None
    assert sibling("the backend is not in ../backend anymore") is None
    assert sibling("is the backend in ../api?") is None
    assert sibling("the frontend is in ../web and the api in ../api") is None  # two facts at once
    found = sibling("our api lives in ../api-server/")
    assert found is not None and found.description.endswith("at ../api-server")


def test_the_tracker_a_user_names_work_items_in_is_one_reference_across_sessions(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path / "mem")
    week = [
        "Create a story for that in Azure Devops",
        "Azure Devops story 4809 is now going to be implemented.",
        "address enhancements listed in Azure Devops ticket 5094. Do it in a new branch",
    ]
    for day, said in enumerate(week):
        clock = lambda day=day: NOON + dt.timedelta(days=day)  # noqa: E731
        RuleExtractor(store, clock=clock).apply_messages([user(said)])
    [header] = store.list()  # three sessions, one lesson
    memory = store.read(header.filename)
    assert memory.type == "reference" and memory.name == "Work items are tracked in Azure DevOps"
    assert memory.body.count("- 2026-12-0") == 3  # each session's sentence as evidence
    assert "`az boards`" in memory.body and specific_tokens(memory.description) == []


def test_a_tracker_needs_a_work_item_beside_it_and_no_doubt() -> None:
    assert tracker("we could try Jira or GitHub issues for the tasks") is None  # not chosen
    assert tracker("we don't use Jira for tickets") is None
    assert tracker("which Jira project holds the bugs?") is None
    assert tracker("the loss curve looks linear across the tasks") is None  # a plain word
    assert tracker("I read about Jira once, and then much later we wrote a long story") is None
    found = tracker("file a bug in Linear for the crash")
    assert found is not None and found.name == "Work items are tracked in Linear"


def test_a_habit_the_user_starts_is_feedback_only_when_it_recurs() -> None:
    found = classify(
        "start adding a version number to the ui each time so i can be sure the new build loaded",
        today=TODAY,
    )
    assert found is not None and found.type is MemoryType.FEEDBACK
    assert found.statement.startswith("Keep adding a version number to the ui each time")
    assert found.why == "i can be sure the new build loaded"  # the purpose is the Why
    assert classify("start implementing step 2", today=TODAY) is None  # a task, not a habit
    assert classify("start the server", today=TODAY) is None


def test_a_name_does_not_end_on_a_word_that_needs_the_next() -> None:
    [found] = candidates("start adding a version number to the plugin before testing", today=TODAY)
    assert name_of(found) == "Keep adding a version number"


def test_a_tool_of_the_same_family_standing_in_for_an_unset_one_is_a_lesson() -> None:
    unset = "No version is set for command pnpm\nConsider adding one of the following versions"
    messages = [
        *shell("a", "cd /home/x/app && pnpm install 2>&1", f"Exit code 126\n{unset}", error=True),
        *shell("b", "cd /home/x/app && npm install 2>&1", "added 212 packages"),
    ]
    [found] = session_candidates(messages)
    assert found.name == "Use npm install here where pnpm install fails"
    assert "version manager" in found.statement
    assert specific_tokens(f"{found.name}\n{found.statement}") == []
    assert stands_in("pnpm install", "npm install") and not stands_in("pnpm install", "npm test")
    assert not stands_in("pnpm install", "cargo install")


def test_another_tool_after_a_failure_that_is_not_about_the_tool_proves_nothing() -> None:
    messages = [
        *shell("a", "pnpm install", "ERR_PNPM_FETCH_404 Not Found", error=True),
        *shell("b", "npm install", "added 212 packages"),
    ]
    assert session_candidates(messages) == []


def test_a_skill_or_command_document_in_the_users_turn_is_not_the_user_speaking() -> None:
    skill = "Base directory for this skill: /home/x/.claude/skills/plan\n\nNever skip the plan."
    doc = "# Implement Story\n\nNever start coding without a plan.\n\n## Steps\n\n## Rules\n"
    assert injected_document(skill) and injected_document(doc)
    assert candidates(skill, today=TODAY) == [] and candidates(doc, today=TODAY) == []
    said = "# a note\nnever push to main"  # a user's own heading is still the user
    assert not injected_document(said)
    assert [c.statement for c in candidates(said, today=TODAY)] == ["Never push to main"]


def test_a_place_told_again_with_a_new_path_replaces_the_old_one(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    first = [user("grafana runs from /srv/compose/grafana")]
    RuleExtractor(store, clock=lambda: NOON).apply_messages(first)
    later = NOON + dt.timedelta(days=3)
    moved = [user("grafana runs from /opt/stack/grafana")]
    RuleExtractor(store, clock=lambda: later).apply_messages(moved)
    [header] = store.list()
    body = store.read(header.filename).body
    assert body.startswith("Grafana runs from /opt/stack/grafana.")  # the newer place is the fact
    assert body.count("- 2026-12-0") == 2  # both sightings kept as evidence
    assert RuleExtractor(store, clock=lambda: later).apply_messages(moved).written == []


def test_remember_what_was_just_done_points_at_the_conversation_and_is_not_saved() -> None:
    said = "Remember the fix you just applied. Convert it into a skill or add it to CLAUDE.md"
    assert candidates(said, today=TODAY) == []
    assert classify("remember that we just migrated the db", today=TODAY) is None
    kept = classify("remember that the staging db is read-only", today=TODAY)
    assert kept is not None and kept.statement == "The staging db is read-only"


def test_a_default_the_user_states_with_should_is_feedback_with_its_own_how() -> None:
    said = "local level agents should be used before user level agents whenever possible."
    found = classify(said, today=TODAY)
    assert found is not None and found.rule == "should-default"
    assert found.name == "Local level agents should be used before user level agents"
    assert found.how is not None and found.how.startswith("Make it the default: local level")
    assert classify("the button should be blue", today=TODAY) is None  # one change, no default
    assert classify("it should work whenever possible", today=TODAY) is None  # "it" is unsaid


def test_use_one_thing_and_not_the_other_is_a_correction() -> None:
    found = classify("Use implement-story skill, don't use z-cora", today=TODAY)
    assert found is not None and found.statement == "Use implement-story skill instead of z-cora"


REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). To tell you how to proceed, "
    "the user said:\n"
)


def rejected(tid: str, tool: str, words: str) -> list[Message]:
    """A tool call the user turned down, saying ``words`` (Claude Code's result text)."""
    return [
        Message("assistant", [ToolUseBlock(tid, tool, {"title": "Author mismatch"})]),
        Message("user", [ToolResultBlock(tid, REJECTED + words, True)]),
    ]


def test_what_the_user_types_when_turning_down_a_tool_call_is_read_as_their_words(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path / "mem")
    messages = [
        user("log this as a bug and let's move on"),
        *rejected("t1", "mcp__tracker__create_issue", "no, file a linear bug for it instead"),
    ]
    RuleExtractor(store, clock=lambda: NOON).apply_messages(messages)
    [header] = store.list()
    assert header.name == "Work items are tracked in Linear"
    # the words alone are the user's: without them (a plain "no"), and in an ordinary failed
    # result, nothing is read
    bare = tmp_path / "bare"
    plain = [
        *rejected("t2", "Bash", "")[:1],
        Message("user", [ToolResultBlock("t2", REJECTED.split(" To tell")[0], True)]),
        *shell("t3", "make", "file a linear bug: error 2", error=True),
    ]
    RuleExtractor(MemoryStore(bare), clock=lambda: NOON).apply_messages(plain)
    assert MemoryStore(bare).list() == []


def test_a_link_to_a_work_item_or_a_lower_case_filing_names_the_tracker() -> None:
    url = "have a look at this first https://linear.app/acme/issue/ENT-250/add-an-action-handler"
    for said, name in [
        (url, "Linear"),
        ("see https://acme.atlassian.net/browse/OPS-12 for the details", "Jira"),
        ("https://dev.azure.com/acme/shop/_workitems/edit/5094 is the story", "Azure DevOps"),
        ("log a linear bug and let's move on", "Linear"),
        ("open an ado ticket for the flaky test", "Azure DevOps"),
    ]:
        found = tracker(said)
        assert found is not None and found.name == f"Work items are tracked in {name}", said
    for said in [
        "the linear map is wrong",  # the word, not the tracker
        "is this a linear bug?",  # a question
        "we did not log a linear bug",  # a negation
        "see https://linear.app/pricing first",  # the site, not a work item
    ]:
        assert tracker(said) is None, said


def test_an_accepted_plan_in_the_users_turn_is_the_agents_words() -> None:
    plan = (
        "Implement the following plan:\n\n# Refactor the client\n\n## Verification\n\n"
        "The test must pass to confirm the refactoring is successful."
    )
    assert injected_document(plan)
    assert candidates(plan, today=TODAY) == []
    assert candidates("The schema must be migrated before every release.", today=TODAY) != []


def test_a_reason_after_a_dash_is_the_why_not_part_of_the_rule() -> None:
    [found] = candidates("Don't amend commits - it messes with the entire workflows", today=TODAY)
    assert name_of(found) == "Don't amend commits"
    assert found.statement == "Don't amend commits"
    assert found.why == "it messes with the entire workflows"
    # a dash that does not give a reason stays in the rule
    [kept] = candidates("Don't use playwright to browse the web - use fetch", today=TODAY)
    assert kept.statement == "Don't use playwright to browse the web - use fetch"


def test_a_tracker_named_with_an_items_key_names_where_work_lives() -> None:
    for said in ["brainstorm: linear ent-53 - check the comments", "is jira OPS-12 done?"]:
        assert tracker(said) is not None, said
    for said in ["the linear 2d case", "a linear 3-4 mapping"]:
        assert tracker(said) is None, said


def test_a_directive_about_the_thing_at_hand_is_this_tasks_instruction() -> None:
    for said in [
        "Don't give it a number and it needs no date or status in the file",
        "Don't fix anything, but just validate it works",
        "Never merge this until CI is green",
    ]:
        assert candidates(said, today=TODAY) == [], said
    for said in ["Always run the linter before pushing", "Never mock the database in tests"]:
        assert [c.rule for c in candidates(said, today=TODAY)] == ["directive"], said


def test_that_is_wrong_followed_by_what_the_user_sees_is_a_report() -> None:
    seen = "that is wrong, I can also totally see `Entire-Checkpoint:` trailers in the main branch"
    assert candidates(seen, today=TODAY) == []
    [rule] = candidates("that's wrong, we use pnpm in this repo", today=TODAY)
    assert rule.rule == "correction" and rule.statement == "We use pnpm in this repo"
