"""Relevance rules: each kind of evidence keeps a memory, its absence drops it, with a reason."""

from __future__ import annotations

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
