"""Relevance rules: each kind of evidence keeps a memory, its absence drops it, with a reason."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from memdir.recall.embed import MiniLMEmbedder
from memdir.recall.local import LocalSelector
from memdir.recall.relevance import DEFAULT_RULE, CosineFloor, EvidenceRule, KeepAll, ScoredDoc
from memdir.store import MemoryStore


def doc(semantic: float, coverage: float) -> ScoredDoc:
    return ScoredDoc("m.md", 1.0, 1.0, semantic, "m", "", coverage)


@pytest.mark.parametrize(
    ("semantic", "coverage", "kept"),
    [
        (0.45, 0.0, True),  # strong meaning alone
        (0.29, 0.40, True),  # the merge-freeze case: the first rule dropped it
        (0.20, 0.10, False),  # weak meaning, a chance word
        (0.10, 0.90, False),  # words without meaning (a rare word in an unrelated request)
        (0.35, 0.14, False),
        (0.16, 0.60, False),  # under the weak bar (0.18 since the applies_when clauses)
    ],
)
def test_evidence_rule(semantic: float, coverage: float, kept: bool) -> None:
    reason = EvidenceRule().drop_reason(doc(semantic, coverage))
    assert (reason is None) is kept
    if reason is not None:
        assert f"{semantic:.2f}" in reason


def test_other_rules() -> None:
    assert CosineFloor(0.3).drop_reason(doc(0.29, 0.9)) is not None
    assert CosineFloor(0.3).drop_reason(doc(0.30, 0.0)) is None
    assert KeepAll().drop_reason(doc(-1.0, 0.0)) is None
    assert "0.40" in EvidenceRule().label


@pytest.fixture(scope="module")
def coding_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = MemoryStore(tmp_path_factory.mktemp("coding") / "mem")
    store.create(
        "Merge freeze",
        "Merge freeze from 2026-12-03 until the mobile release is cut",
        "project",
        "Only critical fixes may merge during the freeze, and Dana must approve them.",
    )
    store.create(
        "Integration tests hit a real database",
        "Integration tests must use the real PostgreSQL container, never mocks",
        "feedback",
        "Mocked tests passed while the production migration failed.",
    )
    store.create(
        "EXPLAIN before indexes",
        "Show EXPLAIN ANALYZE output before proposing a new database index",
        "feedback",
        "Two proposed indexes slowed inserts without helping reads.",
    )
    return store.root


def test_task_requests_surface_and_unrelated_ones_do_not(coding_dir: Path, tmp_path: Path) -> None:
    selector = LocalSelector(coding_dir, tmp_path / "cache", embedder=MiniLMEmbedder())
    picked = selector.select_sync("Is it OK to merge this refactor today?", None)
    assert [s.filename for s in picked][:1] == ["merge_freeze.md"]
    assert selector.select_sync("Should I mock Postgres in the new ledger tests?", None)
    # A request word the memory dir happens to use ("explain") is not evidence on its own.
    assert selector.select_sync("Explain the CAP theorem", None) == []
    assert selector.select_sync("Write a haiku about autumn leaves", None) == []


def test_cjk_questions_need_words_with_an_english_model() -> None:
    from memdir.recall.relevance import WordsRequired, rule_for

    rule = rule_for("all-MiniLM-L6-v2-int8", cjk_query=True)
    assert isinstance(rule, WordsRequired)
    assert rule.drop_reason(doc(0.60, 0.0)) is not None  # MiniLM's cosine alone: not evidence
    assert rule.drop_reason(doc(0.30, 0.10)) is None
    assert rule.drop_reason(doc(0.30, 0.05)) is not None
    assert not isinstance(rule_for("use-multilingual-v3", cjk_query=True), WordsRequired)
    assert rule_for("all-MiniLM-L6-v2-int8") is DEFAULT_RULE


def typed(semantic: float, mtype: str, words: tuple[str, ...], best: int = 0) -> ScoredDoc:
    return ScoredDoc(
        "m.md",
        1.0,
        0.0,
        semantic,
        "m",
        "",
        0.0,
        mtype,
        words,
        ("a situation",) * bool(words),
        best or min(len(words), 1),
    )


@pytest.mark.parametrize(
    ("semantic", "mtype", "words", "best", "kept"),
    [
        (0.22, "feedback", ("depend",), 1, True),  # broad type: its prior is low
        (0.27, "project", ("depend",), 1, False),  # narrow type needs more topical evidence
        (0.31, "project", ("depend",), 1, True),
        (0.05, "reference", ("instal", "librari"), 2, True),  # two words of one situation
        # Two words, each from a different situation ("handle … script"): one word's prior.
        (0.11, "reference", ("handl", "script"), 1, False),
        (0.22, "feedback", ("handl", "script"), 1, True),
        (-0.05, "feedback", ("instal", "librari"), 2, False),
        (0.30, "feedback", (), 0, False),  # no situation matched: the rule before #20
    ],
)
def test_applies_when_evidence_and_type_priors(
    semantic: float, mtype: str, words: tuple[str, ...], best: int, kept: bool
) -> None:
    doc = typed(semantic, mtype, words, best)
    reason = DEFAULT_RULE.drop_reason(doc)
    assert (reason is None) is kept
    if kept:
        assert "applies when" in DEFAULT_RULE.keep_reason(doc)  # type: ignore[operator]
    assert EvidenceRule(typed_prior=None).drop_reason(doc) is not None  # before #20: dropped


def test_no_shared_word_request_surfaces_with_explain(tmp_path: Path) -> None:
    """The issue's "done when": install the charting library → the pnpm memory, and why."""
    store = MemoryStore(tmp_path / "mem")
    store.create(
        "Frontend package manager",
        "This repo uses pnpm; npm and yarn break the lockfile",
        "feedback",
        "Why: mixed lockfiles broke CI twice.",
    )
    store.create("Lunch", "The team eats together at noon on Fridays", "project", "")
    selector = LocalSelector(store.root, tmp_path / "cache", embedder=MiniLMEmbedder())
    picked = selector.select_sync("install the charting library", None)
    assert [s.filename for s in picked] == ["frontend_package_manager.md"]
    assert "applies when" in picked[0].reason
    before = LocalSelector(
        store.root, tmp_path / "c0", embedder=MiniLMEmbedder(), applies_when=False
    )
    before.relevance = EvidenceRule(typed_prior=None)
    assert before.select_sync("install the charting library", None) == []
    explained = selector.explain("install the charting library")
    assert explained[0].selected
    assert "applies when" in explained[0].reason and "similarity" in explained[0].reason


def test_an_intent_is_evidence_at_its_own_prior() -> None:
    """A request's class of task named by a situation needs only the intent prior (0.05)."""
    base = typed(0.06, "project", (), 0)
    doc = replace(
        base,
        applies_intent="deleting or resetting something ('Wipe the staging database')",
        intent_situation="deleting, dropping, wiping … data",
    )
    assert DEFAULT_RULE.drop_reason(doc) is None
    reason = DEFAULT_RULE.keep_reason(doc)
    assert reason is not None and "the request asks for deleting" in reason
    assert "'Wipe the staging database'" in reason and "0.06 ≥ 0.05" in reason
    low = replace(doc, semantic=0.03)
    dropped = DEFAULT_RULE.drop_reason(low)
    assert dropped is not None and "asks for deleting" in dropped and "under 0.05" in dropped
    assert EvidenceRule(intent_prior=None).drop_reason(doc) is not None
    assert DEFAULT_RULE.drop_reason(base) is not None  # no intent, no word: dropped
    both = replace(low, applies_words=("wipe",), applies_best=1)
    dropped = DEFAULT_RULE.drop_reason(both)  # --explain names every clause that was tried
    assert dropped is not None and "project prior 0.30" in dropped and "(prior 0.05)" in dropped
