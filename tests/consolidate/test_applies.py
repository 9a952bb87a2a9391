"""Dream backfills applies_when (rules offline, the model in an LLM dream); nothing else changes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memdir import applies_when, frontmatter
from memdir.consolidate import applies
from memdir.consolidate.agent import AgentDreamer
from memdir.consolidate.offline import OfflineDreamer, apply_plan
from memdir.consolidate.plan import plan_offline
from memdir.consolidate.snapshot import Snapshots
from memdir.errors import ConflictError
from memdir.llm.base import Completion, CompletionRequest
from memdir.llm.scripted import ScriptedProvider
from memdir.recall.applies_model import BY_FIELD
from memdir.store import MemoryStore
from tests.consolidate.conftest import put, tree

TODAY = dt.date(2026, 11, 30)
# Written by hand: a comment, odd quoting, trailing spaces in the body.
HAND = """---
name: Remote branches
# asked by the release manager
description: "never delete remote branches: ask Marta first"
type: feedback
created: 2026-01-05
updated: 2026-01-05
---
Never delete a branch on origin without asking Marta.{pad}
**Why:** release tags point at them.
""".format(pad="  ")
YARN = "The admin UI uses yarn workspaces; never run npm there"


def _added_lines(before: str, after: str) -> list[str]:
    """The lines of ``after`` that are not in ``before``, checking nothing else changed."""
    b, a = before.splitlines(keepends=True), after.splitlines(keepends=True)
    kept = [line for line in a if line in b]
    assert kept == b, "every line of the file must stay, in order"
    return [line for line in a if line not in b]


def test_offline_dream_fills_old_memories_and_keeps_every_other_byte(
    store: MemoryStore, snaps: Snapshots
) -> None:
    (store.root / "branches.md").write_text(HAND, "utf-8")
    put(store.root, "admin.md", "Admin UI package manager", YARN, "yarn workspace admin add x\n")
    store.rebuild_index()
    before = tree(store.root)
    report = OfflineDreamer(store, snaps, today=TODAY).run()
    assert sorted(report.changed) == ["admin.md", "branches.md"]
    after = (store.root / "branches.md").read_text("utf-8")
    added = _added_lines(HAND, after)
    assert added[0] == "applies_when:\n" and all(line.startswith("- ") for line in added[1:])
    assert frontmatter.parse(after).body == frontmatter.parse(HAND).body
    situations = applies_when.stored(store.read("branches.md"))
    assert any("git branches" in s for s in situations)
    assert store.read("branches.md").updated == "2026-01-05"  # not a content change
    assert any("dependency" in s for s in applies_when.stored(store.read("admin.md")))
    # the next dream has nothing left to do, and undo puts every byte back
    assert plan_offline(store, today=TODAY).empty
    snaps.undo()
    assert tree(store.root) == before


def test_each_dream_fills_at_most_its_bound(
    store: MemoryStore, snaps: Snapshots, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(5):
        put(store.root, f"m{i}.md", f"Tests {i}", f"write pytest fixtures for suite {i}", "x\n")
    store.rebuild_index()
    monkeypatch.setattr(applies, "RULES_PER_RUN", 2)
    filled = []
    for _ in range(3):
        OfflineDreamer(store, snaps, today=TODAY).run()
        filled.append(sum(bool(applies_when.stored(store.read(f"m{i}.md"))) for i in range(5)))
    assert filled == [2, 4, 5]


def test_a_persons_and_a_models_list_are_kept(store: MemoryStore) -> None:
    put(store.root, "mine.md", "Mine", YARN, "x\n", applies_when=["only when I say so"])
    put(store.root, "model.md", "Model", "deploys on Tuesdays", "x\n")
    applies_when.stamp(store, "model.md", ["shipping on a weekday"], replace=True)
    text = (store.root / "model.md").read_text()
    (store.root / "model.md").write_text(frontmatter.with_keys(text, {BY_FIELD: "model"}))
    plan = plan_offline(store, today=TODAY)
    assert "mine.md" not in plan.changes and "model.md" not in plan.changes


def test_a_merge_refreshes_the_rules_list_of_the_memory_it_rewrote(store: MemoryStore) -> None:
    put(store.root, "pnpm.md", "Package manager", "user prefers pnpm over npm",
        "Use pnpm, not npm, for installs.\n**Why:** the lockfile is pnpm's; CI tests use it.\n",
        type_="feedback", day="2026-10-01")  # fmt: skip
    put(store.root, "pnpm_again.md", "Package manager preference",
        "user prefers pnpm over npm for installs", "Use pnpm, not npm, for installs.\n",
        type_="feedback", day="2026-11-02")  # fmt: skip
    old = store.read("pnpm_again.md")
    rules_before = applies_when.derive(old.type, old.name, old.description, old.body)
    applies_when.stamp(store, "pnpm_again.md")  # the rules' list, as `memdir reindex` writes it
    plan = plan_offline(store, today=TODAY)
    change = plan.changes["pnpm_again.md"]
    assert applies.REASON_REFRESHED in change.reasons
    merged = frontmatter.parse(change.after).meta[applies_when.FIELD]
    assert len(merged) > len(rules_before)
    assert any("tests" in s for s in merged)  # from the merged line
    assert applies_when.FIELD not in frontmatter.parse(plan.changes["pnpm.md"].after).meta


def test_a_file_edited_after_the_plan_is_not_written(store: MemoryStore, snaps: Snapshots) -> None:
    put(store.root, "admin.md", "Admin UI package manager", YARN, "x\n")
    plan = plan_offline(store, today=TODAY)
    assert "admin.md" in plan.changes
    edited = (store.root / "admin.md").read_text() + "A person's new line.\n"
    (store.root / "admin.md").write_text(edited)
    with store.lock(), pytest.raises(ConflictError):
        apply_plan(plan, store, snaps.take("test"))
    assert (store.root / "admin.md").read_text() == edited


# -- with a model ---------------------------------------------------------------------------------
def _listing(*situations: str) -> Completion:
    return Completion.from_json({"applies_when": list(situations)})


async def test_llm_dream_asks_the_model_for_lists_it_lacks(
    store: MemoryStore, snaps: Snapshots
) -> None:
    put(store.root, "admin.md", "Admin UI package manager", YARN, "yarn workspace admin add x\n")
    put(store.root, "mine.md", "Mine", "a note", "x\n", applies_when=["only when I say so"])
    put(store.root, "old.md", "Old", "gone", "x\n", retired="2026-11-01", retired_reason="r")
    store.rebuild_index()
    before = tree(store.root)
    text = (store.root / "admin.md").read_text()
    provider = ScriptedProvider(
        [Completion.from_text("Nothing to merge."), _listing("bringing a library into a console")]
    )
    report = await AgentDreamer(provider, store, snaps, today=TODAY).dream([])
    assert report.ok and report.changed == ["admin.md"]
    assert report.details["applies_when"]["written"] == ["admin.md"]
    memory = store.read("admin.md")
    stored = applies_when.stored(memory)
    assert stored[-1] == "bringing a library into a console"  # after the rules' own
    assert memory.extra[BY_FIELD] == "model"
    assert len(_added_lines(text, (store.root / "admin.md").read_text())) == len(stored) + 2
    assert provider.calls == 2  # the person's list and the retired memory are not sent
    assert "admin UI uses yarn" in provider.requests[1].messages[0].text
    snaps.undo()
    assert tree(store.root) == before


class _EditsDuringTheCall(ScriptedProvider):
    """A person saves the memory while the model is writing its list."""

    path: Path

    async def complete(self, request: CompletionRequest) -> Completion:
        if request.json_schema is not None:
            self.path.write_text(self.path.read_text() + "Edited meanwhile.\n")
        return await super().complete(request)


async def test_llm_dream_never_writes_over_an_edit_made_while_the_model_was_asked(
    store: MemoryStore, snaps: Snapshots
) -> None:
    put(store.root, "admin.md", "Admin UI package manager", YARN, "x\n")
    provider = _EditsDuringTheCall([Completion.from_text("Nothing."), _listing("adding a package")])
    provider.path = store.root / "admin.md"
    report = await AgentDreamer(provider, store, snaps, today=TODAY).dream([])
    assert report.details["applies_when"]["skipped"] == {
        "admin.md": "changed while the model was asked"
    }
    text = (store.root / "admin.md").read_text()
    assert text.endswith("Edited meanwhile.\n") and applies_when.FIELD not in text
