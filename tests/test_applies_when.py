"""applies_when: rules derive situations from cues, stored lists are kept, writers keep it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir import applies_when, frontmatter
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
        (["x" * (applies_when.MAX_CHARS - 1) + " y"], ["x" * (applies_when.MAX_CHARS - 1)]),
        ([f"s{i}" for i in range(20)], [f"s{i}" for i in range(applies_when.MAX_ITEMS)]),
        # one printable line each: terminal escapes, NULs and bidi overrides go, whitespace folds
        (
            ["red\x1b[31m", "pay\u202eusd", "nu\x00ll", "a\nb\tc\u2028d"],
            ["red[31m", "payusd", "null", "a b c d"],
        ),
        (["添加依赖项时", "key: value", "---"], ["添加依赖项时", "key: value", "---"]),
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


def test_the_agents_list_is_stored_alone_marked_and_read_after_the_rules() -> None:
    rules = applies_when.derive("feedback", "Use pnpm", "The docs site uses pnpm", "pnpm add")
    assert rules
    # a one-shot iterator (a generator) is read once: the mark once went missing for it
    given = (s for s in ["deleting git branches", rules[0], " bumping the docs theme "])
    found = applies_when.from_agent(
        "feedback", "Use pnpm", "The docs site uses pnpm", "pnpm add", given
    )
    agents = ["deleting git branches", rules[0], "bumping the docs theme"]
    assert found == {applies_when.FIELD: agents, applies_when.BY_FIELD: applies_when.BY_AGENT}
    # recall reads the rules' situations first, then the agent's new ones
    assert applies_when.for_recall(rules, agents) == [
        *rules,
        "deleting git branches",
        "bumping the docs theme",
    ]
    # nothing usable from the agent: the rules' list alone, not marked (as a save without one)
    assert applies_when.from_agent(
        "feedback", "Use pnpm", "The docs site uses pnpm", "pnpm add", ["", "  "]
    ) == applies_when.initial("feedback", "Use pnpm", "The docs site uses pnpm", "pnpm add")


def test_a_full_rules_list_squeezes_nothing_of_the_agents_out() -> None:
    """The bound applies to each list, not to the two together: the rules filling their
    ``MAX_ITEMS`` once cut a model's items from the stored list."""
    rules = [f"rule {i}" for i in range(applies_when.MAX_ITEMS)]
    agents = [f"agent {i}" for i in range(applies_when.MAX_ITEMS)]
    assert applies_when.for_recall(rules, agents) == [*rules, *agents]


@given(st.lists(st.text(), max_size=30))
def test_any_list_is_stored_bounded_and_reads_back_as_stored(items: list[str]) -> None:
    """Whatever a caller sends (YAML syntax, CJK, huge or empty items) is stored as its
    normalised form, and the file reads back exactly that."""
    found = applies_when.normalise(items)
    assert len(found) <= applies_when.MAX_ITEMS
    assert all(0 < len(s) <= applies_when.MAX_CHARS and s == " ".join(s.split()) for s in found)
    assert applies_when.normalise(found) == found
    text = frontmatter.dump({"name": "m", applies_when.FIELD: found}, "body\n")
    assert applies_when.stored(parse_memory(text, "m.md")) == found


def _derive_scanning_every_cue(
    memory_type: str, name: str, description: str, body: str
) -> list[str]:
    """derive as it was before its word-start prefilter: both scans of every cue."""
    from memdir.applies_when import _COMPILED, _EXPLAIN_RE, _STYLE_RE, EXPLAIN, STYLE

    head, low_body = f"{name}\n{description}".lower(), body.lower()
    found = []
    for situation, pattern in _COMPILED:
        hits = len(pattern.findall(head)) * 3 + len(pattern.findall(low_body))
        if hits:
            found.append((hits, situation))
    if memory_type == "user" and _EXPLAIN_RE.search(f"{name}\n{description}\n{body}"):
        found.append((100, EXPLAIN))
    if memory_type in ("user", "feedback") and _STYLE_RE.search(f"{name}\n{description}"):
        found.append((50, STYLE))
    found.sort(key=lambda pair: -pair[0])
    return [situation for _, situation in found[:8]]


def test_the_word_start_prefilter_changes_no_situation() -> None:
    """The prefilter only skips cues that cannot match: random texts of cue words, their
    neighbours ("pip" / "pipx" / "pipe"), punctuation and non-ASCII words get the lists the
    full scans give."""
    import random
    import re

    from memdir.applies_rules import SITUATIONS

    for _, cue in SITUATIONS:  # derive scans head and body as one text: no cue spans a line
        assert not re.search(r"\\[sWDS]|\[\^|(?<!\\)\.", cue), cue
    cues = [cue.lower().replace("\\", "") for _, cue in SITUATIONS]  # "n\\+1" reads "n+1"
    words = sorted({w for cue in cues for w in re.findall(r"[a-z0-9_.#@+-]+", cue)})
    words += [w[:-1] for w in words if len(w) > 2]  # "prs?" matches "pr": the optional cut
    words += ["pipe", "pipx", "go", "get", "mod", "env", ".env", "#available", "日本", "Ünïcode"]
    rng = random.Random(20)
    seen = set()
    for _ in range(3000):

        def text(n: int) -> str:
            parts = [rng.choice(words) + rng.choice(["", "s", "ing", "x", "-"]) for _ in range(n)]
            return rng.choice([" ", ", ", "\n", "/", "_"]).join(parts)

        args = (rng.choice(["user", "feedback", "project"]), text(3), text(5), text(30))
        expected = _derive_scanning_every_cue(*args)
        assert applies_when.derive(*args) == expected, args
        seen.update(expected)
    assert len(seen) > 30  # the texts did reach most situations
