"""MEMORY.md stays whole at any number of memories (issue #39): past its flat size it keeps the
user and feedback entries and one line per section; every memory is listed exactly once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memdir import index_sections
from memdir.index import MAX_ENTRYPOINT_CHARS, MAX_ENTRYPOINT_LINES, entries
from memdir.model import Memory
from memdir.store import MemoryStore

TYPES = ("user", "feedback", "project", "reference")


def _fill(store: MemoryStore, n: int, start: int = 0) -> list[str]:
    rels = []
    for i in range(start, start + n):
        kind = TYPES[i % 4]
        m = store.create(f"Fact {i:04d} about area {i % 9}", f"what fact {i} says", kind, f"{i}\n")
        rels.append(m.path)
    return rels


def _within_limits(text: str) -> bool:
    return len(text.strip().splitlines()) <= MAX_ENTRYPOINT_LINES and len(text) <= (
        MAX_ENTRYPOINT_CHARS
    )


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "mem")


def test_a_big_dir_keeps_an_index_within_its_limits_that_lists_every_memory(
    store: MemoryStore,
) -> None:
    (store.root).mkdir(parents=True)
    (store.root / "MEMORY.md").write_text("# My memory\n\nNotes I wrote myself.\n")
    rels = _fill(store, 420)
    text = (store.root / "MEMORY.md").read_text()
    assert _within_limits(text)
    assert text.startswith("# My memory\n\nNotes I wrote myself.\n")  # a person's lines kept
    listed = index_sections.entries(store.root)
    assert sorted(listed) == sorted(rels) and len(listed) == len(set(listed))
    # what governs how to work with the person stays in every prompt
    inline = entries(text)
    assert any(link.startswith("index/") for link in inline)
    kinds = {store.read(link).type for link in inline if not link.startswith("index/")}
    assert kinds <= {"user", "feedback"} and kinds
    for section in (store.root / "index").iterdir():
        assert _within_limits(section.read_text())
    [report] = store.check_index()
    assert report.ok, report
    # sections are not memories: nothing else is listed, scanned or recalled
    assert len(store.scan(limit=None).headers) == 420


def test_updates_and_retirements_land_in_the_right_section(store: MemoryStore) -> None:
    rels = _fill(store, 300)
    project = next(r for r in rels if store.read(r).type == "project")
    assert project not in entries((store.root / "MEMORY.md").read_text())

    def describe(m: Memory) -> Memory:
        m.description = "the new description of this fact"
        return m

    store.update(project, describe)
    sections = "".join(p.read_text() for p in (store.root / "index").iterdir())
    assert "the new description of this fact" in sections
    assert index_sections.entries(store.root).count(project) == 1
    store.delete(project)
    assert project not in index_sections.entries(store.root)
    assert store.check_index()[0].ok


def test_an_entry_an_agent_appended_is_taken_into_the_layout(store: MemoryStore) -> None:
    _fill(store, 200)
    # a host agent writes a memory file and a pointer line with its own file tools
    (store.root / "deploy_notes.md").write_text(
        "---\nname: Deploy notes\ndescription: how deploys run\ntype: project\n---\nfly\n"
    )
    with (store.root / "MEMORY.md").open("a") as fh:
        fh.write("- [Deploy notes](deploy_notes.md) — how deploys run\n")
    store.create("One more", "another fact", "project", "x\n")  # any write settles the index
    text = (store.root / "MEMORY.md").read_text()
    assert "deploy_notes.md" not in entries(text)  # a project memory: moved into its section
    assert index_sections.entries(store.root).count("deploy_notes.md") == 1


def test_the_sections_fold_back_when_the_memories_fit_again(store: MemoryStore) -> None:
    rels = _fill(store, 200)
    assert (store.root / "index").is_dir()
    for rel in rels[:120]:
        store.delete(rel)
    assert not (store.root / "index").exists()
    text = (store.root / "MEMORY.md").read_text()
    assert sorted(entries(text)) == sorted(rels[120:])


def test_rebuild_lays_out_a_huge_hand_made_index(store: MemoryStore) -> None:
    rels = _fill(store, 100)
    # a MEMORY.md another tool wrote: 2,000 lines of which 100 real
    junk = [f"- [gone {i}](gone_{i}.md) — nothing" for i in range(1900)]
    (store.root / "MEMORY.md").write_text("\n".join(junk) + "\n")
    _fill(store, 100, start=100)
    store.rebuild_index()
    text = (store.root / "MEMORY.md").read_text()
    assert _within_limits(text)
    assert sorted(index_sections.entries(store.root)) == sorted(
        rels + [f"fact_{i:04d}_about_area_{i % 9}.md" for i in range(100, 200)]
    )
    assert store.check_index()[0].ok


def test_hostile_section_files_are_not_followed(store: MemoryStore, tmp_path: Path) -> None:
    _fill(store, 160)
    outside = tmp_path / "outside.md"
    outside.write_text("- [secret](../../secret.md) — from outside\n")
    os.symlink(outside, store.root / "index" / "other.md")
    os.mkfifo(store.root / "index" / "reference-9.md")
    store.create("After", "a write after the tampering", "project", "x\n")  # does not hang
    listed = index_sections.entries(store.root)
    assert "../secret.md" not in listed and "secret.md" not in listed
    assert len(listed) == 161


def test_team_scope_has_its_own_sections(store: MemoryStore) -> None:
    for i in range(170):
        store.create(f"Team fact {i}", f"shared fact {i}", "project", "x\n", rel=f"team/t{i}.md")
    team_index = (store.root / "team" / "MEMORY.md").read_text()
    assert _within_limits(team_index) and "index/project.md" in team_index
    assert (store.root / "team" / "index" / "project.md").is_file()
    assert len(index_sections.entries(store.root, "team/MEMORY.md")) == 170


def test_many_parts_keep_one_line_per_type_in_memory_md(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100,000 memories make hundreds of parts: MEMORY.md lists one line per type, and
    ``index/<type>.md`` lists that type's parts (a small part size stands in for the scale)."""
    monkeypatch.setattr(index_sections, "SECTION_ENTRIES", 10)
    rels = _fill(store, 200)
    text = (store.root / "MEMORY.md").read_text()
    section_lines = [link for link in entries(text) if link.startswith("index/")]
    kinds = ["index/user.md", "index/feedback.md", "index/project.md", "index/reference.md"]
    assert section_lines == kinds  # one line per type, however many parts
    listing = (store.root / "index" / "project.md").read_text()
    assert "(index/" not in listing and "](project-5.md)" in listing and "part 5 of 5" in listing
    assert sorted(index_sections.entries(store.root)) == sorted(rels)
    assert store.check_index()[0].ok
    assert "one line for each of feedback, project, reference, user" in index_sections.describe(
        store.root
    )


def test_cjk_names_loose_yaml_and_a_symlink_out_keep_the_layout_whole(
    store: MemoryStore, tmp_path: Path
) -> None:
    """A careless user's and an attacker's files in a sectioned dir: Chinese names, a header a
    model wrote with ``description: a: b``, a memory that is a symlink out of the dir."""
    rels = _fill(store, 160)
    for i in range(5):
        rels.append(store.create(f"数据库迁移 {i}", f"第{i}次迁移的说明", "project", "内容\n").path)
    (store.root / "loose.md").write_text(
        "---\nname: Loose header\ndescription: deploys: use fly\ntype: project\n---\nbody\n"
    )
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: Outside\ndescription: x\ntype: user\n---\nsecret\n")
    os.symlink(outside, store.root / "escape.md")
    store.rebuild_index()
    text = (store.root / "MEMORY.md").read_text()
    assert _within_limits(text)
    listed = index_sections.entries(store.root)
    assert len(listed) == len(set(listed))
    assert set(rels) <= set(listed) and "loose.md" in listed
    assert "escape.md" not in listed  # never read through the link, never listed
    sections = "".join(p.read_text() for p in (store.root / "index").iterdir())
    assert "数据库迁移 3" in sections and "secret" not in sections
