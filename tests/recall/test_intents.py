"""Classes of task in a request, linked to the situations that name them."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.applies_rules import DEPENDENCY, SITUATIONS
from memdir.recall.embed import MiniLMEmbedder
from memdir.recall.intents import request_intents, situation_names
from memdir.recall.local import LocalSelector
from memdir.recall.relevance import EvidenceRule
from memdir.store import MemoryStore

DESTRUCTIVE = next(s for s, _ in SITUATIONS if s.startswith("deleting, dropping, wiping"))


@pytest.mark.parametrize(
    ("query", "intent", "cue"),
    [
        ("Bring lodash into the back-office console", "adding a dependency", "Bring lodash into"),
        ("Get black onto my machine", "adding a dependency", "Get black onto"),
        ("Pull in a library for parsing YAML", "adding a dependency", "Pull in"),
        ("Wipe the staging database", "deleting or resetting something", None),
        ("Ship the hotfix on Friday", "deploying or releasing", "Ship"),
        ("The nightly export takes forever", "speeding up slow code", "takes forever"),
        ("Run a count of active users against live", "touching production", "against live"),
        ("Add a phone field to the signup form", "building user interface", "signup form"),
        ("Send the newsletter to all subscribers", "sending messages to people", None),
        ("Handle the timeout case in the client", "handling errors and failures in code", None),
        ("Silence the unused-import warning", "silencing checker or linter warnings", None),
        ("Copy the customer's address into a fixture", "handling people's personal data", None),
        ("Summarise what you changed", "shaping a reply: summaries, length and tone", None),
    ],
)
def test_requests_name_their_class_of_task(query: str, intent: str, cue: str | None) -> None:
    hits = {hit.intent.name: hit.cue for hit in request_intents(query)}
    assert intent in hits
    if cue is not None:
        assert hits[intent] == cue


@pytest.mark.parametrize(
    ("query", "absent"),
    [
        # A harmless object is not a destructive operation.
        ("How do I remove duplicates from an array?", "deleting or resetting something"),
        # Node.js is not a cluster node.
        ("Explain the event loop in Node.js", "changing infrastructure or cluster configuration"),
        ("Write a haiku about autumn", None),
        # "form" the verb is not a form on a page (found on the held-out unrelated requests).
        ("How does a rainbow form?", None),
        ("Write a birthday message for my grandmother", None),
        ("Translate 'good morning' into Italian", None),
        ("What's the capital of Australia?", None),
        # Everyday senses of the same words (found by running the intents over LoCoMo's
        # conversational questions, where they made other people's questions surface memories).
        ("When did Anna join the choir?", None),
        ("What painting did Tom share with his sister?", None),
        ("When did Maria get into a car accident?", None),
        ("How did she promote her bakery's new store?", None),
        ("What does he do besides basketball training?", None),
        ("The bowl is a reminder of her trip", None),
        ("Why did he shut down his bank account?", None),
        ("She saw her film on the big screen", None),
        ("What is the recurring dream he keeps having?", None),
        ("Did they record a podcast together?", None),
    ],
)
def test_what_is_not_a_class_of_task(query: str, absent: str | None) -> None:
    names = {hit.intent.name for hit in request_intents(query)}
    assert (absent not in names) if absent else not names


def test_a_situation_names_the_class_in_ordinary_words() -> None:
    """The link is made of words: the rules', a model's or a person's situation all work."""
    hits = request_intents("Bring lodash into the console")
    assert situation_names(DEPENDENCY, hits) is not None
    assert situation_names("bringing a JavaScript library into a project", hits) is not None
    assert situation_names("writing shell scripts, utilities and automation", hits) is None
    wipe = request_intents("Drop the old tables in staging")
    assert situation_names(DESTRUCTIVE, wipe) is not None


def test_an_intent_surfaces_a_memory_no_word_links_and_explain_says_why(tmp_path: Path) -> None:
    """Regression (issue #20): "Get dayjs into the documentation website" shares no word with
    the pnpm memory or its situations, so the word match alone never surfaced it."""
    store = MemoryStore(tmp_path / "mem")
    store.create(
        "Docs site uses pnpm",
        "The docs site is built with pnpm; do not use npm or yarn in docs/",
        "feedback",
        "pnpm-lock.yaml is the only lockfile there.",
    )
    store.create("Standup", "Standup is at 9:30 in the small room", "project", "")
    query = "Get dayjs into the documentation website"
    selector = LocalSelector(store.root, tmp_path / "cache", embedder=MiniLMEmbedder())
    picked = selector.select_sync(query, None)
    assert [s.filename for s in picked] == ["docs_site_uses_pnpm.md"]
    assert "asks for adding a dependency ('Get dayjs into')" in picked[0].reason
    assert "applies when 'adding, installing" in picked[0].reason
    selector.relevance = EvidenceRule(intent_prior=None)  # intents off: the rule before
    assert selector.select_sync(query, None) == []
    # Unrelated requests name no class of task and surface nothing.
    selector.relevance = EvidenceRule()
    assert selector.select_sync("Write a haiku about autumn", None) == []


def test_only_the_opening_of_a_long_prompt_is_read() -> None:
    """A pasted log after the task must not cost the hook, nor add classes of task."""
    pasted = "Fix the flaky parser. " + "lorem ipsum " * 100 + "then wipe the staging database"
    assert request_intents(pasted) == ()
    assert request_intents("wipe the staging database")
