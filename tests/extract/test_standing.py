"""Standing rules said without "always" or "never" (issue #30): each form, and the near misses
from the same real sessions that must stay unsaved."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memdir.extract.rule_extractor import RuleExtractor
from memdir.extract.rules import classify
from memdir.extract.specific import specific_tokens
from memdir.llm.base import Message, TextBlock
from memdir.model import Memory, MemoryType
from memdir.store import MemoryStore

TODAY = dt.date(2026, 12, 1)
NOON = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def saved(tmp_path: Path, said: str) -> Memory:
    """The one memory the offline extractor writes from ``said`` (after a first "yes")."""
    store = MemoryStore(tmp_path / "mem")
    RuleExtractor(store, clock=lambda: NOON).apply_messages(
        [Message("user", [TextBlock("yes")]), Message("user", [TextBlock(said)])]
    )
    [header] = store.list()
    return store.read(header.filename)


@pytest.mark.parametrize(
    ("said", "rule", "type_", "statement"),
    [
        (
            "no, I did not say commit anything",
            "unasked",
            MemoryType.FEEDBACK,
            "Don't commit anything unless the user asks",
        ),
        (
            "I didn't ask you to push to the remote",
            "unasked",
            MemoryType.FEEDBACK,
            "Don't push to the remote unless the user asks",
        ),
        (
            "if you change the api, update the docs",
            "condition",
            MemoryType.FEEDBACK,
            "If you change the api, update the docs",
        ),
        (
            "Each test should take <30s with the exception of an E2E grounding.",
            "each-should",
            MemoryType.PROJECT,
            "Each test should take <30s with the exception of an E2E grounding",
        ),
        (
            "We're not supposed to use the MLFlow docker in dev mode.",
            "not-supposed",
            MemoryType.FEEDBACK,
            "Don't use the MLFlow docker in dev mode",
        ),
        (
            "use prefix 'rwr/' for the branch name",
            "convention",
            MemoryType.FEEDBACK,
            "Use prefix 'rwr/' for the branch name",
        ),
        (
            "please use the british spelling :)",
            "spelling",
            MemoryType.FEEDBACK,
            "Use British spelling in code, comments and docs",
        ),
        (
            "my github user is khaong",
            "account",
            MemoryType.USER,
            "The user's github user is khaong",
        ),
        (
            "use uv as the package manager",
            "tool-role",
            MemoryType.FEEDBACK,
            "Use uv as the package manager",
        ),
        (
            "yes go, you can commit whenever you want (early and often with conventional commits)",
            "permission",
            MemoryType.FEEDBACK,
            "The agent may commit whenever it sees fit, early and often with conventional commits",
        ),
    ],
)
def test_each_form(said: str, rule: str, type_: MemoryType, statement: str) -> None:
    found = classify(said, today=TODAY)
    assert found is not None
    assert (found.rule, found.type, found.statement) == (rule, type_, statement)


@pytest.mark.parametrize(
    "said",
    [
        "I didn't ask you to change that",  # the thing at hand
        "I didn't say it was broken",  # not an action the agent took
        "if it fails, try again",  # no "you" doing a kind of change
        "when you have done that, run the tests",  # a step of this task
        "if you change this function, I will review it",  # the change at hand, and no imperative
        "each one should be fine",  # "each one": what is at hand
        "it was supposed to, yeah?",
        "Isn't it supposed to fire after 30s?",
        "any chance we can use aus/british spelling?",  # a question
        "use the british spelling for this file for now",  # one-off
        "use it for the branch name",
        "my bad",
        "my local git config is messed up",
        "we should use the new parser instead of the old one for now",  # one-off
        "use it as the formatter",
        "use the second one as the database for now",
        "you can try whenever you want",  # no standing action
    ],
)
def test_near_misses_say_nothing(said: str) -> None:
    assert classify(said, today=TODAY) is None


def test_a_condition_is_named_as_the_rule_it_sets(tmp_path: Path) -> None:
    said = (
        "If you change something that can influence the quality of results, test for real by "
        "piping a protocol through the backend."
    )
    memory = saved(tmp_path, said)
    assert memory.name == (
        "Test for real when you change something that can influence the quality of results"
    )
    assert specific_tokens(f"{memory.name}\n{memory.description}") == []


def test_a_tool_choice_keeps_where_it_holds_and_its_reason(tmp_path: Path) -> None:
    said = (
        "In dev, we should be using a local mlflow rather from the docker so we can use claude "
        "mlflow assistant."
    )
    memory = saved(tmp_path, said)
    assert memory.name == "Use a local mlflow in dev"
    assert memory.description == "In dev, use a local mlflow instead of the docker"
    assert "**Why:** we can use claude mlflow assistant" in memory.body


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("it shouldnt sound so AI generated", "Don't write text that sounds AI-generated"),
        (
            "i think it's like the staccato short sentences i dont like",
            "Don't write text that sounds AI-generated",
        ),
        (
            "Check in after each task completes — do not silently run through all of them.",
            "Check in with the user after each task",
        ),
        ("Push early and open a draft PR on first push", "Push early and open a draft PR"),
    ],
)
def test_how_the_work_should_read_and_flow(said: str, name: str, tmp_path: Path) -> None:
    memory = saved(tmp_path, said)
    assert memory.name == name and memory.type == "feedback"
    assert specific_tokens(f"{memory.name}\n{memory.description}") == []


@pytest.mark.parametrize(
    "said",
    [
        "some of it sounds a little complicated",
        "the words space pulsating is kinda weird and too small",
        "please inform me.",
        "let's push it now",
        "check everything whether it works",
    ],
)
def test_task_feedback_is_not_a_way_of_working(said: str) -> None:
    assert classify(said, today=TODAY) is None


def test_the_live_deployment_is_a_reference_and_a_preview_is_not(tmp_path: Path) -> None:
    from memdir.extract.told import deployed

    found = deployed("ok do it https://eagerminds-bookmarks.vercel.app/ check everything works")
    assert found is not None and found.name == "Where the live app is deployed"
    assert "https://eagerminds-bookmarks.vercel.app" in found.description
    assert deployed("see https://eagerminds-git-feat-x-nish.vercel.app") is None
    assert deployed("it is not on https://acme.netlify.app any more") is None
    assert deployed("look at http://localhost:3000") is None
    # a link on a page the user pasted, or named in passing, is not where this app runs
    assert deployed("* [AI Catalog specification](https://agent-card.github.io/ai-catalog)") is None
    assert deployed("the spec is at https://agent-card.github.io/ai-catalog") is None


def test_a_task_brief_bounds_its_own_donts_but_not_what_outlives_it() -> None:
    from memdir.extract.rules import candidates

    brief = (
        "The dashboard has real layout bugs. Fix these specific issues.\n\n"
        + "\n".join(f"BUG {n}: the card grid overflows on narrow screens, fix it" for n in range(4))
        + "\n\nCONSTRAINTS:\n- Don't change any text content\n- Don't add new dependencies\n"
        "- Don't restructure components beyond what's needed\n- Output must be valid JSON\n\n"
        "Check in after each task completes.\nRemember that the staging site is rebuilt every "
        "night.\n" + "Context: " + "the dashboard shows pain moments. " * 20
    )
    found = candidates(brief, today=TODAY)
    assert [c.rule for c in found] == ["check-in", "remember"]
    assert not any(c.statement.startswith("Don't") for c in found)
    # the same constraint said on its own, outside a brief, is still the user's rule
    outside = candidates("Don't add new dependencies without asking", today=TODAY)
    assert [c.rule for c in outside] == ["directive"]


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("do not commit anything", False),  # this turn's instruction
        ("don't bump version", False),
        ("Don't accept anything at face value", False),
        ("make sure to review both code changes", False),  # "review" the verb, not a process
        ("Make sure those repositories don't land in our own commits", False),  # the task's
        ("Don't use playwright to browse the web", True),  # a tool choice
        ("please don't amend commits - it messes with the entire workflows", True),  # a reason
        ("Don't mock the database in integration tests", True),  # a scope that recurs
        ("don't push before the tests pass", True),
        ("make sure the tests pass before every commit", True),
    ],
)
def test_a_dont_said_once_is_a_rule_only_when_it_outlives_the_task(said: str, kept: bool) -> None:
    assert (classify(said, today=TODAY) is not None) is kept


@pytest.mark.parametrize(
    "said",
    [
        "不要在周五部署。如果你改了接口，请更新文档。",  # CJK: no form matches, nothing breaks
        "Ne déploie jamais le vendredi, s'il te plaît — c'est la règle",
        "use " + "x" * 1_990 + " as the package manager",  # one huge token
        "if you change " + "a, " * 600 + "update the docs",
        "\x00\x01 my github user is \u202ekhaong",
    ],
)
def test_hostile_and_foreign_sentences_say_nothing_and_never_raise(said: str) -> None:
    from memdir.extract.rules import candidates

    found = candidates(said, today=TODAY)
    # control characters and bidi overrides are dropped before the rules read: none is saved
    assert all(c.statement.isprintable() and c.source.isprintable() for c in found)
    assert all(len(c.statement) < 2_100 for c in found)
