"""The offline selector on a small real corpus, with the real MiniLM embedder."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memdir.model import MemoryHeader
from memdir.recall.base import Selector
from memdir.recall.embed import HashingEmbedder, MiniLMEmbedder, Vectors
from memdir.recall.local import LocalSelector
from memdir.recall.search_index import RefreshReport
from memdir.scan import scan_headers
from memdir.store import MemoryStore

CORPUS = [
    (
        "deploying-to-staging.md",
        "Deploying to staging",
        "How to ship the web app to the staging environment",
        "Run `make deploy-staging` once CI is green. Staging lives at staging.internal.",
    ),
    (
        "database-migrations.md",
        "Database migrations",
        "How schema migrations are written and applied",
        "Use alembic revision --autogenerate, review the file, then alembic upgrade head.",
    ),
    (
        "indentation.md",
        "Indentation preference",
        "User wants tabs, not spaces, in Go code",
        "Always format Go with gofmt; never convert tabs to spaces.",
    ),
    (
        "tests-hit-a-real-database.md",
        "Tests hit a real database",
        "Integration tests must not mock PostgreSQL",
        "We got burned when mocked tests passed but the prod migration failed.",
    ),
    (
        "release-freeze.md",
        "Release freeze",
        "Merge freeze before the mobile release on 2026-12-05",
        "Only critical fixes after the freeze; ask Dana before merging.",
    ),
    (
        "latency-dashboard.md",
        "Latency dashboard",
        "Grafana board the on-call engineer watches for API latency",
        "grafana.internal/d/api-latency is the board to check when p95 alerts fire.",
    ),
    (
        "user-background.md",
        "User background",
        "User is a data scientist, new to React",
        "Explain frontend concepts with analogies to pandas and notebooks.",
    ),
    (
        "on-call-rotation.md",
        "On-call rotation",
        "Who carries the pager and how to escalate",
        "The pager rotates weekly on Mondays; escalate to the team lead after 30 minutes.",
    ),
    (
        "secrets.md",
        "Secrets location",
        "API keys live in the vault, never in the repo",
        "Read keys with `vault kv get secret/app`; .env files are git-ignored.",
    ),
    (
        "pet.md",
        "Pet",
        "User's dog is called Biscuit",
        "Biscuit is a beagle; the user walks him before standups.",
    ),
    (
        "bug-tracker.md",
        "Bug tracker",
        "Pipeline bugs are tracked in the Linear project INGEST",
        "File ingestion pipeline bugs in Linear INGEST, not GitHub issues.",
    ),
    (
        "ripgrep-usage.md",
        "ripgrep usage",
        "How to call the rg tool with globs",
        "Use rg -g '*.py' pattern to restrict by glob.",
    ),
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    store = MemoryStore(tmp_path / "memory")
    for rel, name, description, body in CORPUS:
        store.create(name, description, "project", body, rel=rel)
    return store.root


@pytest.fixture
def selector(memory_dir: Path, tmp_path: Path, minilm: MiniLMEmbedder) -> LocalSelector:
    return LocalSelector(memory_dir, tmp_path / "cache", embedder=minilm)


def headers(memory_dir: Path) -> list[MemoryHeader]:
    return scan_headers(memory_dir, limit=1000).headers


def test_is_a_selector(selector: LocalSelector) -> None:
    assert isinstance(selector, Selector)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("deploy staging", "deploying-to-staging.md"),
        ("how do I ship my changes to the pre-production environment?", "deploying-to-staging.md"),
        ("what's the name of my dog?", "pet.md"),
        ("where should I file a bug about the ingestion pipeline", "bug-tracker.md"),
        ("should I mock postgres in the integration tests", "tests-hit-a-real-database.md"),
        ("who has the pager this week", "on-call-rotation.md"),
    ],
)
async def test_picks_the_relevant_memory_first(
    selector: LocalSelector, memory_dir: Path, query: str, expected: str
) -> None:
    selected = await selector.select(query, headers(memory_dir))
    assert selected and selected[0].filename == expected
    assert selected[0].score is not None and selected[0].reason


@pytest.mark.parametrize(
    "query", ["banana bread recipe with walnuts", "who won the 1998 football world cup"]
)
async def test_unrelated_query_selects_nothing(
    selector: LocalSelector, memory_dir: Path, query: str
) -> None:
    assert await selector.select(query, headers(memory_dir)) == []


async def test_without_the_gate_it_fills_the_limit(
    memory_dir: Path, tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    ungated = LocalSelector(memory_dir, tmp_path / "cache", embedder=minilm, min_similarity=None)
    selected = await ungated.select("banana bread recipe", headers(memory_dir), limit=3)
    assert len(selected) == 3


async def test_only_given_headers_are_selected(selector: LocalSelector, memory_dir: Path) -> None:
    subset = [h for h in headers(memory_dir) if h.filename != "deploying-to-staging.md"]
    selected = await selector.select("deploy staging", subset, limit=5)
    assert "deploying-to-staging.md" not in {s.filename for s in selected}
    assert {s.filename for s in selected} <= {h.filename for h in subset}
    assert len(selected) <= 5


async def test_new_and_edited_memories_are_seen_without_a_manual_refresh(
    selector: LocalSelector, memory_dir: Path
) -> None:
    await selector.select("deploy staging", headers(memory_dir))
    MemoryStore(memory_dir).create(
        "Kubernetes namespaces",
        "Which k8s namespace each service runs in",
        "project",
        "payments runs in pay-prod",
        rel="kubernetes-namespaces.md",
    )
    selected = await selector.select(
        "which kubernetes namespace is payments in", headers(memory_dir)
    )
    assert selected[0].filename == "kubernetes-namespaces.md"


async def test_recently_used_tool_docs_are_skipped_but_warnings_kept(
    selector: LocalSelector, memory_dir: Path
) -> None:
    query = "how to search python files with rg globs"
    hs = headers(memory_dir)
    assert (await selector.select(query, hs))[0].filename == "ripgrep-usage.md"
    with_tool = await selector.select(query, hs, recent_tools=["rg"])
    assert "ripgrep-usage.md" not in {s.filename for s in with_tool}


def test_rank_orders_every_memory(selector: LocalSelector) -> None:
    ranked = selector.rank("grafana latency board", k=100)
    assert len(ranked) == len(CORPUS)
    assert ranked[0].filename == "latency-dashboard.md"
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
    assert ranked[0].lexical > 0 and ranked[0].semantic > ranked[-1].semantic


def test_explain_gives_scores_and_reasons(selector: LocalSelector) -> None:
    explained = selector.explain("deploy staging", limit=1, top=None)
    assert len(explained) == len(CORPUS)
    first = explained[0]
    assert (first.filename, first.selected, first.rank) == ("deploying-to-staging.md", True, 1)
    dropped = [e for e in explained if not e.selected]
    assert all("similarity" in e.reason or "limit" in e.reason for e in dropped)
    assert any("similarity" in e.reason and "under" in e.reason for e in dropped)
    assert all(e.fused <= first.fused for e in explained)


class ExplodingEmbedder(HashingEmbedder):
    def embed(self, texts: Sequence[str]) -> Vectors:
        if texts == ["boom"]:
            raise RuntimeError("model crashed")
        return super().embed(texts)


async def test_select_never_raises(
    memory_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    selector = LocalSelector(memory_dir, tmp_path / "c", embedder=ExplodingEmbedder())
    with caplog.at_level(logging.ERROR):
        assert await selector.select("boom", headers(memory_dir)) == []
    assert "local recall failed" in caplog.text


@pytest.mark.parametrize(("query", "limit"), [("", 5), ("   ", 5), ("deploy", 0)])
async def test_empty_query_or_zero_limit_selects_nothing(
    selector: LocalSelector, memory_dir: Path, query: str, limit: int
) -> None:
    assert await selector.select(query, headers(memory_dir), limit=limit) == []


async def test_empty_memory_dir(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    selector = LocalSelector(tmp_path / "empty", tmp_path / "cache", embedder=HashingEmbedder())
    assert await selector.select("anything at all", []) == []
    assert selector.rank("anything") == []


def test_scores_are_finite(selector: LocalSelector) -> None:
    assert all(np.isfinite([r.score, r.lexical, r.semantic]).all() for r in selector.rank("x"))


@pytest.mark.parametrize("k", [1, 3, 11])
def test_partial_rank_matches_the_full_order(selector: LocalSelector, k: int) -> None:
    full = selector.rank("who should I ask before merging during the freeze", k=100)
    assert selector.rank("who should I ask before merging during the freeze", k=k) == full[:k]


async def test_headers_outside_the_index_do_not_force_a_walk_per_query(
    selector: LocalSelector, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    foreign = MemoryHeader("elsewhere/other.md", memory_dir / "x.md", 1.0, "not here", None)
    hs = [*headers(memory_dir), foreign]
    await selector.select("deploy staging", hs)
    walks: list[RefreshReport] = []
    real_refresh = selector.index.refresh

    def counting_refresh() -> RefreshReport:
        walks.append(real_refresh())
        return walks[-1]

    monkeypatch.setattr(selector.index, "refresh", counting_refresh)
    await selector.select("who has the pager", hs)
    assert walks == []
