"""Recall never spends two slots on the same memory: copies surface once, as the newest."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from memdir.recall.embed import HashingEmbedder
from memdir.recall.fold import Entry, SameMemory, fold
from memdir.recall.keyword import KeywordSelector
from memdir.recall.local import LocalSelector
from memdir.scan import scan_headers
from memdir.store import MemoryStore

PNPM = (
    "Use pnpm",
    "The web app uses pnpm; npm and yarn break the lockfile",
    "Run `pnpm add <pkg>`.",
)
LINT = ("Lint before pushing", "Run ruff before every push", "CI rejects lint errors.")


def _dir(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memory")
    for rel, (name, description, body), age in [
        ("pnpm.md", PNPM, 300),
        ("pnpm_copy.md", PNPM, 100),  # the same memory, updated more recently
        ("pnpm_near.md", (PNPM[0], PNPM[1] + " here", PNPM[2]), 200),
        ("lint.md", LINT, 50),
    ]:
        store.create(name, description, "feedback", body, rel=rel)
        stamp = os.stat(store.root / rel).st_mtime - age
        os.utime(store.root / rel, (stamp, stamp))
    return store


def test_fold_keeps_the_newest_copy_in_the_best_slot() -> None:
    entries = [Entry(r, t, r, r) for r, t in [("a.md", 1.0), ("b.md", 3.0), ("c.md", 2.0)]]
    entries.append(Entry("d.md", 0.5, "D", "another memory"))
    group = {"a.md", "c.md", "b.md"}  # three copies of one memory

    def same(entry: Entry, kept: Sequence[Entry]) -> tuple[Entry, str] | None:
        twin = next((k for k in kept if {k.rel, entry.rel} <= group), None)
        return (twin, "exact") if twin is not None else None

    folding = fold(entries, same, limit=5)
    assert [e.rel for e in folding.kept] == ["b.md", "d.md"]
    assert folding.folded == {"a.md": ("b.md", "exact"), "c.md": ("b.md", "exact")}
    assert folding.reason("a.md") == "folded into b.md: a copy of it, updated more recently"
    assert folding.reason("b.md") is None


def test_copies_and_near_copies_are_the_same_memory_other_memories_are_not(tmp_path: Path) -> None:
    store = _dir(tmp_path)
    same = SameMemory(store.root)
    heads = {
        h.filename: Entry(h.filename, h.mtime, h.name or "", h.description or "")
        for h in store.list()
    }
    pnpm, copy, near, lint = (
        heads[r] for r in ("pnpm.md", "pnpm_copy.md", "pnpm_near.md", "lint.md")
    )
    assert same.same_as(copy, [lint, pnpm]) == (pnpm, "exact")
    found = same.same_as(near, [lint, pnpm])
    assert found is not None and found[0] == pnpm and found[1] in ("exact", "near")
    assert same.same_as(lint, [pnpm]) is None


def test_local_recall_surfaces_one_copy_and_explain_names_the_folded(tmp_path: Path) -> None:
    store = _dir(tmp_path)
    selector = LocalSelector(
        store.root, tmp_path / "cache", embedder=HashingEmbedder(), min_similarity=None
    )
    query = "which package manager does the web app use, pnpm or npm"
    picked = [s.filename for s in selector.select_sync(query, None, limit=5)]
    assert picked.count("pnpm_copy.md") == 1
    assert not {"pnpm.md", "pnpm_near.md"} & set(picked)
    why = {e.filename: e for e in selector.explain(query, None, limit=5)}
    assert (
        why["pnpm.md"].reason.startswith("folded into pnpm_copy.md") and not why["pnpm.md"].selected
    )
    assert why["pnpm_copy.md"].selected


def test_keyword_recall_folds_copies_too(tmp_path: Path) -> None:
    store = _dir(tmp_path)
    headers = scan_headers(store.root).headers
    picked = [s.filename for s in KeywordSelector().select_sync("pnpm lockfile", headers)]
    assert picked == ["pnpm_copy.md"]


def test_chinese_near_copies_fold_and_two_chinese_rules_do_not(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory")
    rules = [  # no Latin word in any of them: the comparison has only the Chinese to go on
        ("lint.md", "提交前先跑代码检查", "提交前先跑代码检查"),
        ("lint_again.md", "提交前都先跑代码检查", "提交前都先跑代码检查"),
        ("reply.md", "回复必须是中文", "你给出的回复必须是中文"),
    ]
    for rel, name, description in rules:
        body = f"{description}。\n\n**Why:** 用户明确这样说过。 Seen in:\n- 2026-12-03: said"
        store.create(name, description, "feedback", body, rel=rel)
    same = SameMemory(store.root)
    heads = {
        h.filename: Entry(h.filename, h.mtime, h.name or "", h.description or "")
        for h in store.list()
    }
    lint, again, reply = (heads[r] for r in ("lint.md", "lint_again.md", "reply.md"))
    found = same.same_as(again, [reply, lint])
    assert found is not None and found[0] == lint
    assert same.same_as(reply, [lint]) is None  # the same scaffolding, a different rule
