"""applies_when: rules derive situations from cues, stored lists are kept, writers keep it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir import applies_when
from memdir.frontmatter import parse_memory
from memdir.model import Memory
from memdir.store import MemoryStore


@pytest.mark.parametrize(
    ("mtype", "description", "body", "expected"),
    [
        ("feedback", "The admin UI uses yarn workspaces; never run npm install", "", "dependency"),
        ("feedback", "Never delete remote branches without asking", "", "branches"),
        ("feedback", "Credentials live in the team vault", "", "secrets"),
        ("user", "User is a data scientist fluent in Python", "Explain by analogy.", "explaining"),
        ("feedback", "Docker base images are pinned by digest", "", "Dockerfiles"),
    ],
)
def test_rules_name_the_situation_of_each_cue(
    mtype: str, description: str, body: str, expected: str
) -> None:
    found = applies_when.derive(mtype, "m", description, body)
    assert any(expected in s for s in found), found
    assert len(found) <= applies_when.MAX_ITEMS


def test_no_cue_no_situation_and_explanations_only_for_user_memories() -> None:
    assert applies_when.derive("project", "Lunch", "The team eats at noon", "") == []
    # "explain" in a project memory is not a user's learning profile.
    found = applies_when.derive("project", "Docs", "Explain the fee table in the FAQ", "")
    assert not any("explaining" in s for s in found)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, []),
        ("installing packages", ["installing packages"]),
        (["a", "a", " b  c ", "", 3, True, None, {"x": 1}], ["a", "b c", "3"]),
        ({"not": "a list"}, []),
        (["x" * 500], ["x" * applies_when.MAX_CHARS]),
        ([f"s{i}" for i in range(20)], [f"s{i}" for i in range(applies_when.MAX_ITEMS)]),
    ],
)
def test_normalise_bounds_any_value(value: object, expected: list[str]) -> None:
    assert applies_when.normalise(value) == expected


def _memory(extra: dict[str, object] | None = None) -> Memory:
    return Memory(
        "m.md", "Use pnpm", "The docs site uses pnpm", "feedback", "pnpm add", extra=extra or {}
    )


def test_a_stored_list_is_never_replaced_by_the_rules() -> None:
    mine = _memory({applies_when.FIELD: ["when I say so"]})
    assert applies_when.stored(applies_when.with_applies_when(mine)) == ["when I say so"]
    filled = applies_when.with_applies_when(_memory())
    assert any("dependency" in s for s in applies_when.stored(filled))


def test_stamp_writes_once_and_edits_keep_the_field(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    created = store.create("Use pnpm", "The docs site uses pnpm, never npm", "feedback", "pnpm add")
    assert applies_when.stamp(store, created.path)
    text = store.read_text(created.path)
    assert "applies_when:" in text
    mtime = store.path_of(created.path).stat().st_mtime_ns
    applies_when.stamp(store, created.path)  # already there: the file is not rewritten
    assert store.path_of(created.path).stat().st_mtime_ns == mtime
    store.edit(created.path, "pnpm add", "pnpm add -D")
    memory = parse_memory(store.read_text(created.path), created.path)
    assert applies_when.stored(memory) == applies_when.stored(parse_memory(text, created.path))


def test_backfill_fills_only_memories_without_the_field(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "mem")
    store.create("Use pnpm", "The docs site uses pnpm", "feedback", "pnpm add")
    store.create("Lunch", "The team eats at noon", "project", "")
    mine = store.create("Vault", "Secrets live in the vault", "project", "")
    applies_when.stamp(store, mine.path, ["when someone asks for a password"], replace=True)
    written, problems = applies_when.backfill(store)
    assert (written, problems) == (["use_pnpm.md"], [])
    assert applies_when.stored(store.read(mine.path)) == ["when someone asks for a password"]
